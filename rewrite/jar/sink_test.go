//go:build unix

package jar

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/internal/outfile/outfiletest"
)

// Outputs get the modes cp or the jar tool would give them: 0666 for files and 0777 for
// directories, less the umask.
func TestOutputModesFollowUmask(t *testing.T) {
	outfiletest.Umask(t, 0o027)
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	var seen []string
	out := filepath.Join(dir, "out.jar")
	if _, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := outfiletest.Perm(t, out); got != 0o640 {
		t.Errorf("jar output: mode %o, want 0640 under umask 027", got)
	}
	outDir := filepath.Join(dir, "classes")
	if _, err := Rewrite([]string{in}, outDir, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{
		outDir: 0o750, filepath.Join(outDir, "a"): 0o750,
		filepath.Join(outDir, "a", "A.class"): 0o640, filepath.Join(outDir, "a", "res.txt"): 0o640,
	} {
		if got := outfiletest.Perm(t, p); got != want {
			t.Errorf("%s: mode %o, want %o under umask 027", p, got, want)
		}
	}
}

// A replaced jar keeps its mode, as cp over it would.
func TestReplacedJarKeepsMode(t *testing.T) {
	outfiletest.Umask(t, 0o022)
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	out := makeJar(t, dir, "out.jar", sampleEntries[:1], "")
	if err := os.Chmod(out, 0o444); err != nil {
		t.Fatal(err)
	}
	var seen []string
	if _, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	if got := outfiletest.Perm(t, out); got != 0o444 {
		t.Errorf("replaced jar: mode %o, want its 0444", got)
	}
}

// A rewrite killed before its rename leaves its temporary beside the output; the next rewrite
// of that output removes it.
func TestKilledRunTemporaryRemoved(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	out := filepath.Join(dir, "out.jar")
	left := killedRunTemp(t, out)
	var seen []string
	if _, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Errorf("%s left by a killed run is still there (%v)", filepath.Base(left), err)
	}
}

// killedRunTemp makes the temporary a run that was killed would have left for output: one of
// this process's, renamed to the number of a process that has ended.
func killedRunTemp(t *testing.T, output string) string {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	f, err := outfile.Create(output, outfile.Data)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half a jar"))
	f.Close()
	mine := fmt.Sprintf("-%d-", os.Getpid())
	if strings.Count(filepath.Base(f.Name()), mine) != 1 {
		t.Fatalf("temporary %s does not name this process", f.Name())
	}
	dead := filepath.Join(filepath.Dir(f.Name()), strings.Replace(filepath.Base(f.Name()), mine, fmt.Sprintf("-%d-", cmd.Process.Pid), 1))
	if err := os.Rename(f.Name(), dead); err != nil {
		t.Fatal(err)
	}
	return dead
}
