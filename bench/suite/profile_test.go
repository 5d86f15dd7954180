package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProfileOf: the profile mode takes the snapshot of the kept edges run, under a name its
// content decides, and without one says how to take it.
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
		p, err := env.profileOf(w)
		if err != nil {
			t.Fatal(err)
		}
		if data, err := os.ReadFile(p); err != nil || string(data) != text {
			t.Errorf("%s holds %q, %v", p, data, err)
		}
		got[i] = p
	}
	if got[0] == got[1] {
		t.Errorf("two profiles, one name %s", got[0])
	}
}
