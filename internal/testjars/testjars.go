// Package testjars reads the classes of the Debian jars that the engine's tests run on
// (/usr/share/java, installed by scripts/install-deps.sh). It is for tests only: a missing jar
// skips the test outside CI and fails it in CI, where the real checks must never be skipped.
package testjars

import (
	"archive/zip"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

// Dir is where Debian installs jars.
const Dir = "/usr/share/java"

// Path returns the path of the jar named name in Dir, skipping (outside CI) or failing (in CI)
// the test when it is not installed.
func Path(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(Dir, name)
	return testenv.File(t, p)
}

// Each calls fn with the name and contents of every .class entry of the jar named name (a
// name in Dir or a path), in jar order. Entries that cannot be read fail the test.
func Each(t testing.TB, name string, fn func(entry string, data []byte)) {
	t.Helper()
	path := name
	if !strings.Contains(name, "/") {
		path = Path(t, name)
	}
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if !strings.HasSuffix(f.Name, ".class") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatalf("%s!%s: %v", path, f.Name, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s!%s: %v", path, f.Name, err)
		}
		fn(f.Name, data)
	}
}

// IsModuleInfo reports whether an entry is a module descriptor, which has no code.
func IsModuleInfo(entry string) bool { return strings.HasSuffix(entry, "module-info.class") }
