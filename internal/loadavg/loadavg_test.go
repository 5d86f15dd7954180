package loadavg

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ content, want string }{
		{"0.83 4.31 6.21 3/257 30350\n", "0.83 4.31 6.21"},
		{"0.83 4.31\n", "unknown"},
		{"", "unknown"},
	} {
		p := filepath.Join(dir, "loadavg")
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := readFile(p); got != c.want {
			t.Errorf("readFile(%q) = %q, want %q", c.content, got, c.want)
		}
	}
	if got := readFile(filepath.Join(dir, "missing")); got != "unknown" {
		t.Errorf("a missing file reads as %q, want unknown", got)
	}
}
