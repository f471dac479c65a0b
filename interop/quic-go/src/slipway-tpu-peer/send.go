package main

import (
	"bufio"
	"context"
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/lucas-clemente/quic-go"
)

func send(args []string) int {
	flags := flag.NewFlagSet("send", flag.ContinueOnError)
	to := flags.String("to", "", "the receiver's UDP address, HOST:PORT")
	identityPath := flags.String("identity", "", "the client's ed25519 keypair file (Solana CLI format)")
	alpn := flags.String("alpn", alpnTPU, "the ALPN to offer")
	duration := flags.Duration("duration", 0, "send generated payloads for this long instead of reading stdin")
	size := flags.Int("size", 1232, "the generated payloads' size (with --duration)")
	drainTimeout := flags.Duration("drain-timeout", 10*time.Second, "how long to wait for the receiver to acknowledge every stream")
	clientKey := flags.String("client-key", "ed25519", "the client certificate's key; ecdsa (not the identity's) to test that a receiver refuses it")
	linger := flags.Duration("linger", 100*time.Millisecond, "after the last acknowledgement, how long to watch for the receiver closing the connection")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if *to == "" || *identityPath == "" {
		fmt.Fprintln(os.Stderr, "send: --to HOST:PORT and --identity KEYPAIR.json are required")
		return 2
	}
	fail := func(stage string, count int, err error) int {
		failed := event("error", "stage", stage, "sent", count, "message", err.Error())
		var appErr *quic.ApplicationError
		var transportErr *quic.TransportError
		if errors.As(err, &appErr) {
			failed.set("application_error_code", uint64(appErr.ErrorCode))
			failed.set("remote", appErr.Remote)
		} else if errors.As(err, &transportErr) {
			failed.set("transport_error_code", uint64(transportErr.ErrorCode))
			failed.set("remote", transportErr.Remote)
		}
		printJSON(failed)
		return 1
	}

	key, err := readKeypair(*identityPath)
	if err != nil {
		return fail("identity", 0, err)
	}
	var certKey crypto.Signer = key
	if *clientKey != "ed25519" {
		if certKey, err = newKey(*clientKey); err != nil {
			return fail("identity", 0, err)
		}
	}
	cert, err := selfSignedCertificate(certKey)
	if err != nil {
		return fail("identity", 0, err)
	}
	tlsConf := &tls.Config{
		MinVersion:         tls.VersionTLS13,
		Certificates:       []tls.Certificate{cert},
		InsecureSkipVerify: true, // a validator's certificate is self-signed
		NextProtos:         []string{*alpn},
	}
	tracer := newDrainTracer()
	quicConf := &quic.Config{
		HandshakeIdleTimeout: 5 * time.Second,
		MaxIdleTimeout:       30 * time.Second,
		KeepAlivePeriod:      time.Second,
		Tracer:               tracer,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	conn, err := quic.DialAddrContext(ctx, *to, tlsConf, quicConf)
	cancel()
	if err != nil {
		return fail("handshake", 0, err)
	}
	printJSON(event("connected",
		"identity", base58(key.Public().(ed25519.PublicKey)),
		"alpn", conn.ConnectionState().TLS.NegotiatedProtocol,
		"retry", tracer.conn.retried()))

	count := 0
	sendOne := func(payload []byte) error {
		stream, err := conn.OpenUniStreamSync(context.Background())
		if err != nil {
			return err
		}
		if _, err := stream.Write(payload); err != nil {
			return err
		}
		count++
		return stream.Close()
	}
	started := time.Now()
	if *duration > 0 {
		payload := make([]byte, *size)
		rand.Read(payload)
		for time.Since(started) < *duration {
			if len(payload) >= 8 {
				binary.LittleEndian.PutUint64(payload, uint64(count)) // each payload its own
			}
			if err := sendOne(payload); err != nil {
				return fail("send", count, err)
			}
		}
	} else {
		lines := bufio.NewScanner(os.Stdin)
		lines.Buffer(make([]byte, 64*1024), 16<<20)
		for lines.Scan() {
			// An empty line is an empty transaction: an empty stream, which a TPU refuses.
			line := strings.TrimSpace(lines.Text())
			payload, err := base64.StdEncoding.DecodeString(line)
			if err != nil {
				return fail("input", count, fmt.Errorf("line %d is not Base64: %v", count+1, err))
			}
			if err := sendOne(payload); err != nil {
				return fail("send", count, err)
			}
		}
		if err := lines.Err(); err != nil {
			return fail("input", count, err)
		}
	}
	written := time.Since(started)
	// Closing now would drop whatever is still unacknowledged: wait for the acknowledgements.
	acknowledged, err := tracer.conn.waitAcknowledged(count, *drainTimeout, *linger)
	if err != nil {
		return fail("drain", count, err)
	}
	elapsed := acknowledged.Sub(started) // until the last acknowledgement
	if elapsed < time.Millisecond {
		elapsed = time.Millisecond
	}
	conn.CloseWithError(0, "done")
	printJSON(event("sent",
		"count", count,
		"written_ms", written.Milliseconds(),
		"elapsed_ms", elapsed.Milliseconds(),
		"per_second", math.Round(float64(count)/elapsed.Seconds()),
		"retry", tracer.conn.retried()))
	return 0
}
