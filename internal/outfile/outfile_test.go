//go:build unix

package outfile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/outfile/outfiletest"
)

func TestNewFilesHonourUmask(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		umask int
		perm  os.FileMode
		want  os.FileMode
	}{
		{0o022, Data, 0o644},
		{0o027, Data, 0o640},
		{0o002, Data, 0o664},
		{0o077, Executable, 0o700},
		{0o022, Executable, 0o755},
	} {
		outfiletest.Umask(t, c.umask)
		p := filepath.Join(dir, fmt.Sprintf("out-%o-%o", c.umask, c.perm))
		if err := WriteFile(p, []byte("x"), c.perm); err != nil {
			t.Fatal(err)
		}
		if got := outfiletest.Perm(t, p); got != c.want {
			t.Errorf("umask %03o, perm %o: mode %o, want %o", c.umask, c.perm, got, c.want)
		}
	}
}

// A replaced file keeps its mode, as cp over it would, whatever the umask.
func TestReplacedFileKeepsMode(t *testing.T) {
	outfiletest.Umask(t, 0o022)
	p := filepath.Join(t.TempDir(), "table.tsv")
	if err := os.WriteFile(p, []byte("old"), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), Data); err != nil {
		t.Fatal(err)
	}
	if got := outfiletest.Perm(t, p); got != 0o444 {
		t.Errorf("mode %o, want the replaced file's 0444", got)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("contents %q", b)
	}
}

func TestDirOutputModes(t *testing.T) {
	outfiletest.Umask(t, 0o027)
	parent := t.TempDir()
	fresh := filepath.Join(parent, "fresh")
	d, err := CreateDir(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := outfiletest.Perm(t, fresh); got != 0o750 {
		t.Errorf("new directory: mode %o, want 0750", got)
	}
	empty := filepath.Join(parent, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	if d, err = CreateDir(empty); err != nil {
		t.Fatal(err)
	}
	if err := d.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := outfiletest.Perm(t, empty); got != 0o700 {
		t.Errorf("replaced empty directory: mode %o, want its 0700", got)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.jar")
	f, err := Create(p, Data)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	if names := list(t, dir); len(names) != 0 {
		t.Errorf("left behind: %v", names)
	}
}

// deadPID is the number of a process that has ended.
func deadPID(t *testing.T) int {
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skipf("cannot run true: %v", err)
	}
	return cmd.Process.Pid
}

// A later run removes the temporaries of its own output that dead runs of this host left, and
// nothing else: not a live run's, not another host's, not another output's, not a user's file.
func TestStaleTemporariesRemoved(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "app-hl.jar")
	dead := deadPID(t)
	live := os.Getppid()
	stale := []string{
		fmt.Sprintf(".app-hl.jar.heapledger-%s-%d-17.tmp", hostID, dead),
	}
	kept := []string{
		fmt.Sprintf(".app-hl.jar.heapledger-%s-%d-18.tmp", hostID, live),
		fmt.Sprintf(".app-hl.jar.heapledger-%s-%d-19.tmp", "0badc0de", dead),
		fmt.Sprintf(".other.jar.heapledger-%s-%d-20.tmp", hostID, dead),
		fmt.Sprintf(".app-hl.jar.table.tsv.heapledger-%s-%d-21.tmp", hostID, dead),
		fmt.Sprintf(".app-hl.jar.heapledger-%s-%d-mine.tmp", hostID, dead),
		".app-hl.jar.123456.tmp",
	}
	for _, n := range append(stale, kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A dead run's directory output, with contents.
	staleDir := fmt.Sprintf(".app-hl.jar.heapledger-%s-%d-22.tmp", hostID, dead)
	if err := os.MkdirAll(filepath.Join(dir, staleDir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	stale = append(stale, staleDir)
	if err := WriteFile(out, []byte("jar"), Data); err != nil {
		t.Fatal(err)
	}
	names := strings.Join(list(t, dir), " ")
	for _, n := range stale {
		if strings.Contains(names, n) {
			t.Errorf("stale %s not removed", n)
		}
	}
	for _, n := range kept {
		if !strings.Contains(names, n) {
			t.Errorf("%s removed, but it is not a dead run's temporary of this output", n)
		}
	}
}

func list(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}
