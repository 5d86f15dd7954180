//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

// needs skips (fails in CI) when the binary, the JDK or the instrumenter is missing.
func needs(t *testing.T) *Config {
	t.Helper()
	bin, err := filepath.Abs("../../bin/heapledger")
	if err != nil {
		t.Fatal(err)
	}
	testenv.File(t, bin)
	testenv.File(t, instrumenterJar)
	return &Config{Bin: bin, Work: t.TempDir(), Java: testenv.Tool(t, "java"), Rounds: 1, Log: testWriter{t}}
}

// TestOneProgramOneRound runs the benchmark for real on its quickest program and checks the
// table: one row with the agent's class counts and waits, five timed modes and four ratios.
func TestOneProgramOneRound(t *testing.T) {
	cfg := needs(t)
	p := findProgram(programs(), "groovy")
	if j := p.missingJar(); j != "" {
		testenv.Unavailable(t, "%s is not installed", j)
	}
	cfg.Programs = []*Program{p}
	var out bytes.Buffer
	if err := Run(cfg, &out); err != nil {
		t.Fatal(err)
	}
	table := out.String()
	t.Log("\n" + table)
	cell := `\d+ / \d+`
	ratio := `\d+\.\d\d / \d+\.\d\d`
	row := regexp.MustCompile(`(?m)^\| groovy \| [1-9]\d* \([1-9]\d*\) \| \d+ / \d+ \| ` + strings.Repeat(cell+` \| `, 5) + strings.Repeat(ratio+` \| `, 3) + ratio + ` \|$`)
	if !row.MatchString(table) {
		t.Errorf("no complete groovy row in the table:\n%s", table)
	}
	if !strings.Contains(table, "| agent-first ÷ offline | agent-second ÷ offline | offline ÷ plain | instrumenter ÷ plain |") {
		t.Errorf("the table's header lacks the ratio columns:\n%s", table)
	}
	if !regexp.MustCompile(`load average [0-9.]+ [0-9.]+ [0-9.]+ before, [0-9.]+ [0-9.]+ [0-9.]+ after`).MatchString(table) {
		t.Errorf("the table does not give the load average before and after:\n%s", table)
	}
}

// TestOutputMustEqualPlain runs a program whose output says whether heapledger's runtime is on
// its class path, as any program that behaves differently when rewritten would: the offline run
// prints something else than plain, and the benchmark must fail rather than time it.
func TestOutputMustEqualPlain(t *testing.T) {
	cfg := needs(t)
	javac := testenv.Tool(t, "javac")
	src := filepath.Join(cfg.Work, "src", "probe", "Probe.java")
	if err := os.MkdirAll(filepath.Dir(src), 0o755); err != nil {
		t.Fatal(err)
	}
	code := `package probe;
public class Probe {
    public static void main(String[] a) {
        boolean rt;
        try { Class.forName("heapledger.rt.Ledger"); rt = true; } catch (ClassNotFoundException e) { rt = false; }
        System.out.println("heapledger runtime on the class path: " + rt + " " + new StringBuilder("x").append(a.length));
    }
}
`
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(cfg.Work, "classes")
	jar := filepath.Join(cfg.Work, "probe.jar")
	for _, argv := range [][]string{{javac, "--release", "8", "-d", classes, src}, {testenv.Tool(t, "jar"), "cf", jar, "-C", classes, "."}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", argv, err, out)
		}
	}
	cfg.Programs = []*Program{{Name: "probe", Jars: []string{jar}, Main: "probe.Probe", Accounts: []string{"probe"},
		Input: func(string) ([]string, error) { return nil, nil }}}
	var out bytes.Buffer
	err := Run(cfg, &out)
	if err == nil {
		t.Fatalf("the benchmark accepted a program whose output differs when rewritten:\n%s", out.String())
	}
	want := `probe, round 1: offline: the output differs from plain's, so this mode changed what the program does: line 1: plain "heapledger runtime on the class path: false x0", this run "heapledger runtime on the class path: true x0"`
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\ndoes not start with %q", err, want)
	}
	if out.Len() != 0 {
		t.Errorf("a failed benchmark printed a table:\n%s", out.String())
	}
}

// testWriter sends the benchmark's progress lines to the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// TestRoundOrder: plain opens the first round (its output is the reference), every round runs
// each mode once, the second agent run directly after the first, and no two rounds start alike.
func TestRoundOrder(t *testing.T) {
	seen := map[string]bool{}
	for r := 1; r <= 4; r++ {
		order := roundOrder(r)
		if r == 1 && order[0] != "plain" {
			t.Errorf("round 1 starts with %s, not plain", order[0])
		}
		if seen[order[0]] {
			t.Errorf("round %d starts with %s, as an earlier round did", r, order[0])
		}
		seen[order[0]] = true
		got := map[string]int{}
		for i, m := range order {
			got[m]++
			if m == "agent-second" && (i == 0 || order[i-1] != "agent-first") {
				t.Errorf("round %d: agent-second does not follow agent-first: %v", r, order)
			}
		}
		for _, m := range modeNames {
			if got[m] != 1 {
				t.Errorf("round %d runs %s %d times: %v", r, m, got[m], order)
			}
		}
	}
}

// TestParseAgentStats reads the agent's --stats line as Agent.java prints it.
func TestParseAgentStats(t *testing.T) {
	line := []byte("noise\nheapledger agent: 812 classes sent, 716 instrumented, 96 unchanged, 0 failed, 0 methods skipped, 812 answered from the transform cache; " +
		"transform latency per class: median 0.48 ms, p99 6.43 ms, max 85.07 ms, total 770 ms; service start 46.3 ms; agent up 2297 ms\n")
	got := parseAgentStats(line)
	if got == nil || got.Sent != 812 || got.Cached != 812 || got.Waited.Milliseconds() != 770 {
		t.Errorf("parseAgentStats = %+v, want 812 sent, 812 cached, 770 ms waited", got)
	}
	line = []byte("heapledger agent: 593 classes sent, 433 instrumented, 160 unchanged, 0 failed, 0 methods skipped, 593 answered from the transform cache (590 read by the agent itself); " +
		"transform latency per class: median 0.05 ms, p99 0.43 ms, max 5.07 ms, total 61 ms; service start 46.3 ms; agent up 1297 ms\n")
	if got := parseAgentStats(line); got == nil || got.Sent != 593 || got.Cached != 593 || got.InJVM != 590 || got.Waited.Milliseconds() != 61 {
		t.Errorf("parseAgentStats = %+v, want 593 sent, 593 cached, 590 in the JVM, 61 ms waited", got)
	}
	if parseAgentStats([]byte("heapledger run: 1 snapshot\n")) != nil {
		t.Error("a stderr without the --stats line parsed as one")
	}
}
