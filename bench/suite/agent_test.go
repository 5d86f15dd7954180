package main

import (
	"bytes"
	"strings"
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

// The start-up table: first output of plain, offline and agent runs with the ratio within each
// pair, and the agent's class count and latencies as medians over runs.
func TestStartupRows(t *testing.T) {
	plain, count, agent := &Mode{Name: "plain"}, &Mode{Name: "heapledger-count"}, &Mode{Name: "heapledger-agent"}
	jfr := &Mode{Name: "jfr-alloc"}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	res := &Result{
		W:     &Workload{Name: "w"},
		Modes: []*Mode{plain, count, agent, jfr},
		Plain: []Sample{{First: ms(100)}, {First: ms(200)}},
		Pairs: map[string][]Pair{
			"heapledger-count": {{Plain: Sample{First: ms(100)}, Mode: Sample{First: ms(150)}}},
			"heapledger-agent": {
				{Plain: Sample{First: ms(100)}, Mode: Sample{First: ms(300), Agent: &AgentStats{Classes: 500, MedianMs: 0.5, P99Ms: 10}}},
				{Plain: Sample{First: ms(200)}, Mode: Sample{First: ms(400), Agent: &AgentStats{Classes: 502, MedianMs: 0.7, P99Ms: 30}}},
			},
		},
		Failed: map[string]string{},
	}
	rep := &Report{Modes: []*Mode{plain, count, agent, jfr}, Results: []*Result{res}}
	got := rep.startupRows()
	want := []string{
		"| w | plain | 150 (100–200) | 1 | | | |",
		"| w | heapledger-count | 150 | 1.50 |  |  |  |",
		"| w | heapledger-agent | 350 (300–400) | 2.50 (2.00–3.00) | 501 | 0.60 | 20.0 (10.0–30.0) |",
	}
	if len(got) != len(want) {
		t.Fatalf("rows:\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	if rows := (&Report{Modes: []*Mode{plain, jfr}, Results: []*Result{res}}).startupRows(); rows != nil {
		t.Errorf("no start-up mode ran, but rows: %v", rows)
	}
}
