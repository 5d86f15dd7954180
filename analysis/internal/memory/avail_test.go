//go:build linux

package memory

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The memory available is found on Linux, and no more than the system's own figure.
func TestAvailable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Available tells nothing here")
	}
	n, from := Available()
	if n <= 0 || from == "" {
		t.Fatalf("Available() = %d, %q: want the memory the process may use", n, from)
	}
	if m := meminfoAvailable(); n > m {
		t.Errorf("Available() = %d, above MemAvailable %d", n, m)
	}
}

// A cgroup's limit file says "max" (or a number near 2^63) for none, and a number otherwise.
func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]int64{"max\n": 0, "9223372036854771712\n": 0, "536870912\n": 512 << 20} {
		p := filepath.Join(dir, "limit")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		n, ok := readLimit(p)
		if ok != (want > 0) || n != want && want > 0 {
			t.Errorf("readLimit(%q) = %d, %v; want %d", text, n, ok, want)
		}
	}
}
