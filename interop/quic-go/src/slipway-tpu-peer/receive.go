package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lucas-clemente/quic-go"
)

const (
	alpnTPU = "solana-tpu"
	// Agave closes a connection whose stream is empty or too long with this code.
	invalidStreamCode quic.ApplicationErrorCode = 5
	// And one that negotiated no ALPN (here: refused at once by TLS, kept as a safeguard).
	invalidALPNCode quic.ApplicationErrorCode = 1
)

var counters struct{ streams, bytes, connections atomic.Int64 }

func receive(args []string) int {
	flags := flag.NewFlagSet("receive", flag.ContinueOnError)
	listen := flags.String("listen", "127.0.0.1:0", "UDP address to listen on (port 0: any free port)")
	retry := flags.Bool("retry", false, "demand address validation with a Retry packet for every new connection")
	maxStreamBytes := flags.Int("max-stream-bytes", 1232, "a longer (or empty) stream closes its connection with code 5")
	maxUniStreams := flags.Int64("max-uni-streams", 10000, "concurrent unidirectional streams a client may open")
	quiet := flags.Bool("quiet", false, "no event per stream")
	stats := flags.Bool("stats", false, "a stats event every second")
	identity := flags.String("identity", "", "the server's ed25519 keypair file (default: a new key)")
	identityOut := flags.String("identity-out", "", "write the server's new ed25519 keypair to this file")
	serverKey := flags.String("server-key", "ed25519", "the server certificate's key: ed25519 or ecdsa (P-256)")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	fail := func(err error) int {
		printJSON(event("error", "message", err.Error()))
		return 1
	}

	signer, err := newKey(*serverKey)
	if err != nil {
		return fail(err)
	}
	if *identity != "" {
		edKey, err := readKeypair(*identity)
		if err != nil {
			return fail(err)
		}
		signer = edKey
	} else if *identityOut != "" {
		edKey, ok := signer.(ed25519.PrivateKey)
		if !ok {
			return fail(fmt.Errorf("--identity-out needs --server-key ed25519"))
		}
		if err := writeKeypair(*identityOut, edKey); err != nil {
			return fail(err)
		}
	}
	cert, err := selfSignedCertificate(signer)
	if err != nil {
		return fail(err)
	}
	tlsConf := &tls.Config{
		MinVersion:            tls.VersionTLS13,
		Certificates:          []tls.Certificate{cert},
		NextProtos:            []string{alpnTPU},
		ClientAuth:            tls.RequireAnyClientCert,
		VerifyPeerCertificate: verifyClientCertificate,
	}
	quicConf := &quic.Config{
		MaxIncomingStreams:             -1, // a TPU takes no bidirectional streams
		MaxIncomingUniStreams:          *maxUniStreams,
		InitialStreamReceiveWindow:     1 << 20,
		MaxStreamReceiveWindow:         4 << 20,
		InitialConnectionReceiveWindow: 16 << 20,
		MaxConnectionReceiveWindow:     64 << 20,
		MaxIdleTimeout:                 30 * time.Second,
		KeepAlivePeriod:                15 * time.Second,
	}
	if *retry {
		// quic-go 0.29's name for "send a Retry": every new connection proves its address.
		quicConf.RequireAddressValidation = func(net.Addr) bool { return true }
	}
	listener, err := quic.ListenAddr(*listen, tlsConf, quicConf)
	if err != nil {
		return fail(err)
	}
	started := event("listening", "port", listener.Addr().(*net.UDPAddr).Port, "retry", *retry)
	if edKey, ok := signer.(ed25519.PrivateKey); ok {
		started.set("identity", base58(edKey.Public().(ed25519.PublicKey)))
	}
	printJSON(started)

	go func() {
		for {
			conn, err := listener.Accept(context.Background())
			if err != nil {
				return
			}
			go serveConnection(conn, *maxStreamBytes, *quiet)
		}
	}()
	if *stats {
		go func() {
			for range time.Tick(time.Second) {
				printJSON(statsEvent())
			}
		}()
	}

	// SIGUSR1 asks for a stats event now (after every event before it).
	asked := make(chan os.Signal, 1)
	signal.Notify(asked, syscall.SIGUSR1)
	go func() {
		for range asked {
			printJSON(statsEvent())
		}
	}()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	// A parent that holds our stdin as a pipe ends us by closing it (or by dying). A terminal
	// or /dev/null (a shell's background job) is not watched, or we would stop at once.
	if info, err := os.Stdin.Stat(); err == nil && info.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			stop <- syscall.SIGHUP
		}()
	}
	<-stop
	flushOutput()
	printJSON(statsEvent())
	listener.Close()
	return 0
}

func serveConnection(conn quic.Connection, maxStreamBytes int, quiet bool) {
	state := conn.ConnectionState().TLS
	if state.NegotiatedProtocol != alpnTPU {
		conn.CloseWithError(invalidALPNCode, "no ALPN solana-tpu")
		return
	}
	// TLS and verifyClientCertificate have made sure of one certificate with an ed25519 key.
	identity := base58(state.PeerCertificates[0].PublicKey.(ed25519.PublicKey))
	counters.connections.Add(1)
	printJSON(event("connection", "identity", identity, "alpn", state.NegotiatedProtocol, "remote", conn.RemoteAddr().String()))
	for {
		stream, err := conn.AcceptUniStream(context.Background())
		if err != nil {
			printJSON(event("closed", "identity", identity, "remote", conn.RemoteAddr().String(), "reason", err.Error()))
			return
		}
		go serveStream(conn, stream, identity, maxStreamBytes, quiet)
	}
}

func serveStream(conn quic.Connection, stream quic.ReceiveStream, identity string, maxStreamBytes int, quiet bool) {
	data, err := io.ReadAll(io.LimitReader(stream, int64(maxStreamBytes)+1))
	if err != nil {
		return // reset by the client, or the connection went: nothing arrived
	}
	if len(data) == 0 || len(data) > maxStreamBytes {
		reason := "empty"
		if len(data) > 0 {
			reason = fmt.Sprintf("longer than %d bytes", maxStreamBytes)
		}
		printJSON(event("invalid_stream", "identity", identity, "length", len(data), "reason", reason))
		conn.CloseWithError(invalidStreamCode, "invalid stream: "+reason)
		return
	}
	counters.streams.Add(1)
	counters.bytes.Add(int64(len(data)))
	if !quiet {
		sum := sha256.Sum256(data)
		writeJSON(event("stream", "identity", identity, "length", len(data), "sha256", hex.EncodeToString(sum[:])), false)
	}
}

func statsEvent() *fields {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return event("stats",
		"streams", counters.streams.Load(),
		"bytes", counters.bytes.Load(),
		"connections", counters.connections.Load(),
		"cpu_user_ms", usage.Utime.Sec*1000+usage.Utime.Usec/1000,
		"cpu_system_ms", usage.Stime.Sec*1000+usage.Stime.Usec/1000)
}
