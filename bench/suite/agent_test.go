package main

import (
	"bytes"
	"testing"
	"time"
)

func TestParseAgentStats(t *testing.T) {
	err := []byte("some program line\nheapledger agent: 476 classes sent, 436 instrumented, 40 unchanged, 0 failed, 0 methods skipped; " +
		"transform latency per class: median 1.31 ms, p99 48.67 ms, max 144.69 ms; service start 58.2 ms; agent up 4178 ms\n")
	a := parseAgentStats(err)
	if a == nil || a.Classes != 476 || a.MedianMs != 1.31 || a.P99Ms != 48.67 {
		t.Fatalf("parsed %+v", a)
	}
	if parseAgentStats([]byte("heapledger agent: no classes sent\n")) != nil {
		t.Error("a line without latencies parsed")
	}
}

// The first output is the first line that is neither heapledger's nor the JVM's own note,
// even when a note arrives in pieces.
func TestFirstWrite(t *testing.T) {
	var b bytes.Buffer
	f := &firstWrite{w: &b, start: time.Now().Add(-time.Second)}
	for _, chunk := range []string{"heap", "ledger agent: note\nOpenJDK 64-Bit Server VM warning: Sharing...\n", "WARN", "ING: x\n"} {
		f.Write([]byte(chunk))
		if f.after != 0 {
			t.Fatalf("notes taken for output after %q", chunk)
		}
	}
	f.Write([]byte("hel"))
	if f.after == 0 {
		t.Fatal("the program's line was not seen")
	}
	if b.String() != "heapledger agent: note\nOpenJDK 64-Bit Server VM warning: Sharing...\nWARNING: x\nhel" {
		t.Errorf("passed on %q", b.String())
	}
	// A short first line that could still become a note waits for its end.
	var c bytes.Buffer
	g := &firstWrite{w: &c, start: time.Now()}
	g.Write([]byte("he"))
	if g.after != 0 {
		t.Fatal("decided on a line that may be a note")
	}
	g.Write([]byte("llo\n"))
	if g.after == 0 {
		t.Fatal("hello is output")
	}
}
