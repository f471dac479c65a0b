package main

import (
	"bufio"
	"encoding/json"
	"os"
	"sync"
	"time"
)

// Events are JSON lines on stdout. Stream events can come tens of thousands a second, so lines
// are buffered and flushed every 20 ms; every other event is flushed at once.
var output = struct {
	sync.Mutex
	w *bufio.Writer
}{w: bufio.NewWriterSize(os.Stdout, 64*1024)}

func init() {
	go func() {
		for range time.Tick(20 * time.Millisecond) {
			flushOutput()
		}
	}()
}

// fields is one event: "event" first, then the rest in the order given.
type fields struct {
	name string
	kv   []interface{} // key, value, key, value...
}

func event(name string, kv ...interface{}) *fields { return &fields{name, kv} }

func (f *fields) set(key string, value interface{}) { f.kv = append(f.kv, key, value) }

func (f *fields) MarshalJSON() ([]byte, error) {
	out, _ := json.Marshal(map[string]string{"event": f.name})
	out = out[:len(out)-1]
	for i := 0; i+1 < len(f.kv); i += 2 {
		key, _ := json.Marshal(f.kv[i])
		value, err := json.Marshal(f.kv[i+1])
		if err != nil {
			return nil, err
		}
		out = append(append(append(append(out, ','), key...), ':'), value...)
	}
	return append(out, '}'), nil
}

func writeJSON(value *fields, flush bool) {
	line, err := json.Marshal(value)
	if err != nil {
		line = []byte(`{"event":"error","message":"unprintable event"}`)
	}
	output.Lock()
	defer output.Unlock()
	output.w.Write(line)
	output.w.WriteByte('\n')
	if flush {
		output.w.Flush()
	}
}

func printJSON(value *fields) { writeJSON(value, true) }

func flushOutput() {
	output.Lock()
	defer output.Unlock()
	output.w.Flush()
}
