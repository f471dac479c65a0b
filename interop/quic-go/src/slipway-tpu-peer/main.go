// Command slipway-tpu-peer is a Solana-TPU-like QUIC peer built on quic-go (Debian's 0.29),
// an implementation that is not Slipway's own, for interoperability tests and benchmarks.
//
//	slipway-tpu-peer receive --listen 127.0.0.1:0 [--retry] [--max-stream-bytes 1232] [--quiet] [--stats]
//	slipway-tpu-peer send --to 127.0.0.1:PORT --identity KEYPAIR.json [--alpn solana-tpu] [--duration 10s --size 1232]
//	slipway-tpu-peer keygen --out KEYPAIR.json
//
// Every mode prints JSON lines on stdout; see interop/quic-go/README.md. The receiver prints a
// stats event on SIGUSR1, and a last one when it ends: on SIGTERM or SIGINT, or at the end of
// its stdin when that is a pipe or a socket.
package main

import (
	"fmt"
	"os"
)

const usage = `usage:
  slipway-tpu-peer receive --listen HOST:PORT [--retry] [--max-stream-bytes N] [--quiet] [--stats]
                           [--identity KEYPAIR.json | --identity-out KEYPAIR.json] [--server-key ed25519|ecdsa]
  slipway-tpu-peer send --to HOST:PORT --identity KEYPAIR.json [--alpn solana-tpu]
                        [--duration 10s --size 1232]   (generated payloads instead of Base64 lines on stdin)
  slipway-tpu-peer keygen --out KEYPAIR.json
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "receive":
		os.Exit(receive(args))
	case "send":
		os.Exit(send(args))
	case "keygen":
		os.Exit(keygen(args))
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
}
