package main

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

const base58Alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// base58 encodes with the Bitcoin alphabet, as Solana writes public keys.
func base58(input []byte) string {
	zeros := 0
	for zeros < len(input) && input[zeros] == 0 {
		zeros++
	}
	// Digits in base 58, least significant first.
	digits := make([]byte, 0, len(input)*138/100+1)
	for _, b := range input[zeros:] {
		carry := int(b)
		for i := range digits {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append(digits, byte(carry%58))
			carry /= 58
		}
	}
	out := make([]byte, 0, zeros+len(digits))
	for i := 0; i < zeros; i++ {
		out = append(out, '1')
	}
	for i := len(digits) - 1; i >= 0; i-- {
		out = append(out, base58Alphabet[digits[i]])
	}
	return string(out)
}

// readKeypair reads a Solana CLI keypair file: a JSON array of 64 numbers, the 32-byte seed
// then the 32-byte public key.
func readKeypair(path string) (ed25519.PrivateKey, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var numbers []int
	if err := json.Unmarshal(raw, &numbers); err != nil {
		return nil, fmt.Errorf("%s: not a Solana keypair file (a JSON array of 64 numbers): %v", path, err)
	}
	if len(numbers) != 64 {
		return nil, fmt.Errorf("%s: a Solana keypair has 64 numbers, this one %d", path, len(numbers))
	}
	secret := make([]byte, 64)
	for i, n := range numbers {
		if n < 0 || n > 255 {
			return nil, fmt.Errorf("%s: number %d is not a byte: %d", path, i, n)
		}
		secret[i] = byte(n)
	}
	key := ed25519.NewKeyFromSeed(secret[:32])
	if !bytes.Equal(key[32:], secret[32:]) {
		return nil, fmt.Errorf("%s: the public key is not the seed's", path)
	}
	return key, nil
}

func writeKeypair(path string, key ed25519.PrivateKey) error {
	numbers := make([]int, len(key))
	for i, b := range key {
		numbers[i] = int(b)
	}
	raw, _ := json.Marshal(numbers)
	return os.WriteFile(path, raw, 0o600)
}

// selfSignedCertificate makes a certificate like Agave's: self-signed, subject "Solana node",
// the IP 0.0.0.0 as its one name, with the given key.
func selfSignedCertificate(key crypto.Signer) (tls.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return tls.Certificate{}, err
	}
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "Solana node"},
		IPAddresses:           []net.IP{net.IPv4zero},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

func newKey(kind string) (crypto.Signer, error) {
	switch kind {
	case "ed25519":
		_, key, err := ed25519.GenerateKey(rand.Reader)
		return key, err
	case "ecdsa":
		return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	}
	return nil, fmt.Errorf("a key is ed25519 or ecdsa, not %q", kind)
}

// verifyClientCertificate is Agave's rule for a TPU client: exactly one certificate, and its
// key an ed25519 key (the client's identity). TLS itself has checked the signature with it.
func verifyClientCertificate(rawCerts [][]byte, _ [][]*x509.Certificate) error {
	if len(rawCerts) != 1 {
		return fmt.Errorf("expected exactly one client certificate, got %d", len(rawCerts))
	}
	cert, err := x509.ParseCertificate(rawCerts[0])
	if err != nil {
		return err
	}
	if _, ok := cert.PublicKey.(ed25519.PublicKey); !ok {
		return errors.New("the client certificate's key is not an ed25519 key")
	}
	return nil
}

func keygen(args []string) int {
	flags := flag.NewFlagSet("keygen", flag.ContinueOnError)
	out := flags.String("out", "", "where to write the new keypair (Solana CLI format)")
	if err := flags.Parse(args); err != nil || *out == "" {
		fmt.Fprintln(os.Stderr, "keygen: --out FILE is required")
		return 2
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err == nil {
		err = writeKeypair(*out, key)
	}
	if err != nil {
		printJSON(event("error", "message", err.Error()))
		return 1
	}
	printJSON(event("keypair", "identity", base58(key.Public().(ed25519.PublicKey)), "path", *out))
	return 0
}
