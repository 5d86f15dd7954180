//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/internal/outfile/outfiletest"
)

// The count pass's outputs (the jar with its table added, the table beside it, the constructor
// map) are created as cp would create them, and keep their mode when replaced: a 0444 table
// was replaced as 0600.
func TestCountOutputsModes(t *testing.T) {
	outfiletest.Umask(t, 0o027)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.jar"), filepath.Join(dir, "out.jar")
	writeTestJar(t, in, "META-INF/MANIFEST.MF", "r.txt")
	table, cmap := out+".table.tsv", filepath.Join(dir, "ctors.tsv")
	rewrite := func() {
		t.Helper()
		if _, stderr, err := runCLI(t, "rewrite", "--accounts", "a.*", "--ctor-map", cmap, in, "-o", out); err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
	}
	rewrite()
	for _, p := range []string{out, table, cmap} {
		if got := outfiletest.Perm(t, p); got != 0o640 {
			t.Errorf("%s: mode %o, want 0640 under umask 027", filepath.Base(p), got)
		}
	}
	for _, p := range []string{out, table, cmap} {
		if err := os.Chmod(p, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	rewrite()
	for _, p := range []string{out, table, cmap} {
		if got := outfiletest.Perm(t, p); got != 0o444 {
			t.Errorf("%s replaced: mode %o, want its 0444", filepath.Base(p), got)
		}
	}
}

// `heapledger agent` writes a readable jar and an executable launcher, both less the umask.
func TestAgentOutputsModes(t *testing.T) {
	outfiletest.Umask(t, 0o027)
	dir := t.TempDir()
	agent := filepath.Join(dir, "built-agent.jar")
	writeTestJar(t, agent, "META-INF/MANIFEST.MF")
	t.Setenv("HEAPLEDGER_AGENT", agent)
	out := filepath.Join(dir, "agent")
	if _, stderr, err := runCLI(t, "agent", "--accounts", "a.*", "-o", out); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for p, want := range map[string]os.FileMode{
		out: 0o750, filepath.Join(out, AgentJarName): 0o640, filepath.Join(out, LauncherName): 0o750,
	} {
		if got := outfiletest.Perm(t, p); got != want {
			t.Errorf("%s: mode %o, want %o under umask 027", filepath.Base(p), got, want)
		}
	}
}
