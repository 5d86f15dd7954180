package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records whether it was skipped or failed, without stopping.
type recorder struct {
	testing.TB
	skipped, failed bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.skipped = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestUnavailableSkipsOutsideCIAndFailsInCI(t *testing.T) {
	for _, ci := range []string{"", "true"} {
		t.Setenv("CI", ci)
		r := &recorder{TB: t}
		Unavailable(r, "x")
		if want := ci == "true"; r.failed != want || r.skipped == want {
			t.Errorf("CI=%q: failed %v, skipped %v", ci, r.failed, r.skipped)
		}
	}
}

func TestToolAndFile(t *testing.T) {
	t.Setenv("CI", "true")
	dir := t.TempDir()
	p := filepath.Join(dir, "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := &recorder{TB: t}
	if got := Tool(r, p); got != p || r.failed {
		t.Errorf("Tool(%s) = %q, failed %v", p, got, r.failed)
	}
	t.Setenv("PATH", dir)
	if got := Tool(r, "tool"); got != p || r.failed {
		t.Errorf("Tool(tool) on PATH = %q, failed %v", got, r.failed)
	}
	Tool(r, "no-such-tool")
	if !r.failed {
		t.Error("a missing tool did not fail in CI")
	}
	r = &recorder{TB: t}
	File(r, filepath.Join(dir, "missing"))
	if !r.failed {
		t.Error("a missing file did not fail in CI")
	}
}
