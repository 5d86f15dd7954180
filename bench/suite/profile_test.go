package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileOf: the profile mode takes the snapshots of the kept edges run, each under a name
// its content decides, and without one says how to take it.
func TestProfileOf(t *testing.T) {
	env := &Env{Out: t.TempDir()}
	w := &Workload{Name: "fop"}
	if _, err := env.profileOf(w); err == nil || !strings.Contains(err.Error(), "-compare heapledger-count,heapledger-count-edges -workloads fop") {
		t.Errorf("no edges run: %v", err)
	}
	run := filepath.Join(env.Out, "runs", "fop", edgesModeName, "r1")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	var got [2]string
	for i, text := range []string{"# heapledger snapshot 5\nend\n", "# heapledger snapshot 5\nedges\ta\tm()V\th\t-1>0=1\nend\n"} {
		if err := os.WriteFile(filepath.Join(run, "heapledger-Main-1-1.snapshot"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		ps, err := env.profileOf(w)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 {
			t.Fatalf("one snapshot, profiles %q", ps)
		}
		p := ps[0]
		if data, err := os.ReadFile(p); err != nil || string(data) != text {
			t.Errorf("%s holds %q, %v", p, data, err)
		}
		got[i] = p
	}
	if got[0] == got[1] {
		t.Errorf("two profiles, one name %s", got[0])
	}
	// Two JVMs (lucene's index and search steps): both snapshots are the profile.
	if err := os.WriteFile(filepath.Join(run, "heapledger-Main-2-1.snapshot"), []byte("# heapledger snapshot 5\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ps, err := env.profileOf(w); err != nil || len(ps) != 2 {
		t.Errorf("two snapshots: profiles %q, %v", ps, err)
	}
}
