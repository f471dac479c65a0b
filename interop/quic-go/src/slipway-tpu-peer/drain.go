package main

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lucas-clemente/quic-go/logging"
)

// quic-go 0.29 has no way to learn that a stream's data was acknowledged, and closing the
// connection drops what is not. The sender's tracer watches the 1-RTT packets that carry stream
// data: a stream is delivered when its FIN and every byte before it were acknowledged, in
// whichever packets (a lost packet's data comes again in new ones).
type drainTracer struct {
	logging.NullTracer
	conn *drainConnTracer
}

func newDrainTracer() *drainTracer {
	return &drainTracer{conn: &drainConnTracer{
		packets: map[logging.PacketNumber][]logging.StreamFrame{},
		streams: map[logging.StreamID]*streamAcks{},
		done:    map[logging.StreamID]struct{}{},
		changed: make(chan struct{}, 1),
	}}
}

func (t *drainTracer) TracerForConnection(context.Context, logging.Perspective, logging.ConnectionID) logging.ConnectionTracer {
	return t.conn // one connection per sender
}

type streamAcks struct {
	spans  [][2]logging.ByteCount // acknowledged [start, end), merged
	finAt  logging.ByteCount
	finAck bool
}

func (s *streamAcks) add(start, end logging.ByteCount) {
	merged := make([][2]logging.ByteCount, 0, len(s.spans)+1)
	for _, span := range s.spans {
		if span[1] < start || span[0] > end {
			merged = append(merged, span)
			continue
		}
		if span[0] < start {
			start = span[0]
		}
		if span[1] > end {
			end = span[1]
		}
	}
	s.spans = append(merged, [2]logging.ByteCount{start, end})
}

func (s *streamAcks) complete() bool {
	if !s.finAck {
		return false
	}
	if s.finAt == 0 {
		return true
	}
	return len(s.spans) == 1 && s.spans[0][0] == 0 && s.spans[0][1] >= s.finAt
}

type drainConnTracer struct {
	logging.NullConnectionTracer
	mu        sync.Mutex
	packets   map[logging.PacketNumber][]logging.StreamFrame
	streams   map[logging.StreamID]*streamAcks
	done      map[logging.StreamID]struct{} // a late copy of a delivered stream's data counts no more
	delivered int
	closed    error
	sawRetry  bool
	changed   chan struct{}
}

func (t *drainConnTracer) notify() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *drainConnTracer) SentPacket(hdr *logging.ExtendedHeader, _ logging.ByteCount, _ *logging.AckFrame, frames []logging.Frame) {
	if hdr.IsLongHeader {
		return // stream data travels in 1-RTT packets only (no 0-RTT here)
	}
	var carried []logging.StreamFrame
	for _, frame := range frames {
		if f, ok := frame.(*logging.StreamFrame); ok {
			carried = append(carried, *f)
		}
	}
	if len(carried) == 0 {
		return
	}
	t.mu.Lock()
	t.packets[hdr.PacketNumber] = carried
	t.mu.Unlock()
}

func (t *drainConnTracer) AcknowledgedPacket(level logging.EncryptionLevel, pn logging.PacketNumber) {
	if level != logging.Encryption1RTT {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	frames, ok := t.packets[pn]
	if !ok {
		return
	}
	delete(t.packets, pn)
	for _, f := range frames {
		if _, ok := t.done[f.StreamID]; ok {
			continue
		}
		s := t.streams[f.StreamID]
		if s == nil {
			s = &streamAcks{}
			t.streams[f.StreamID] = s
		}
		if f.Length > 0 {
			s.add(f.Offset, f.Offset+f.Length)
		}
		if f.Fin {
			s.finAck = true
			s.finAt = f.Offset + f.Length
		}
		if s.complete() {
			delete(t.streams, f.StreamID)
			t.done[f.StreamID] = struct{}{}
			t.delivered++
			t.notify()
		}
	}
}

func (t *drainConnTracer) LostPacket(level logging.EncryptionLevel, pn logging.PacketNumber, _ logging.PacketLossReason) {
	if level != logging.Encryption1RTT {
		return
	}
	t.mu.Lock()
	delete(t.packets, pn) // its data is sent again in new packets
	t.mu.Unlock()
}

func (t *drainConnTracer) ReceivedRetry(*logging.Header) {
	t.mu.Lock()
	t.sawRetry = true
	t.mu.Unlock()
}

func (t *drainConnTracer) ClosedConnection(err error) {
	t.mu.Lock()
	if err == nil {
		err = errors.New("connection closed")
	}
	t.closed = err
	t.mu.Unlock()
	t.notify()
}

func (t *drainConnTracer) retried() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sawRetry
}

// waitAcknowledged waits until count streams were delivered, the connection closed, or timeout;
// then for linger more, since a receiver that refuses the last stream acknowledges its packets
// before it closes the connection.
func (t *drainConnTracer) waitAcknowledged(count int, timeout, linger time.Duration) (acknowledged time.Time, err error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	var lingered <-chan time.Time
	for {
		t.mu.Lock()
		delivered, closed := t.delivered, t.closed
		t.mu.Unlock()
		if closed != nil {
			return acknowledged, closed
		}
		if delivered >= count && lingered == nil {
			acknowledged = time.Now()
			if linger <= 0 {
				return acknowledged, nil
			}
			lingered = time.After(linger)
		}
		select {
		case <-t.changed:
		case <-lingered:
			return acknowledged, nil
		case <-deadline.C:
			if lingered != nil {
				return acknowledged, nil
			}
			return acknowledged, fmt.Errorf("%d of %d streams acknowledged after %s", delivered, count, timeout)
		}
	}
}
