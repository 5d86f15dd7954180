// Package testenv decides, in one place, what a test does when something outside Go that it
// needs (a JDK, jasmin, a Debian jar, the built runtime) is missing: it skips outside CI and fails
// in CI, where skipping would silently drop a real check. It plays the part of the Go
// toolchain's internal/testenv (MustHaveExec, MustHaveGoBuild).
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// InCI reports whether the tests run in CI (CI=true), where nothing they need may be missing.
func InCI() bool { return os.Getenv("CI") == "true" }

// Unavailable skips tb, or fails it in CI, with the message format and args say.
func Unavailable(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		tb.Fatalf("%s (CI=true: required; scripts/install-deps.sh and `make build` provide it)", msg)
		return
	}
	tb.Skipf("%s (skipped outside CI)", msg)
}

// Tool returns the path of a program: name itself when it is a path, else found on PATH. A
// missing program skips or fails tb (Unavailable).
func Tool(tb testing.TB, name string) string {
	tb.Helper()
	if filepath.IsAbs(name) {
		return File(tb, name)
	}
	p, err := exec.LookPath(name)
	if err != nil {
		Unavailable(tb, "%s not found on PATH", name)
	}
	return p
}

// File returns path when it exists, and skips or fails tb otherwise (Unavailable).
func File(tb testing.TB, path string) string {
	tb.Helper()
	if _, err := os.Stat(path); err != nil {
		Unavailable(tb, "%s is missing: %v", path, err)
	}
	return path
}

// Check skips or fails tb (Unavailable) when ok is false, naming what is missing.
func Check(tb testing.TB, ok bool, what string) {
	tb.Helper()
	if !ok {
		Unavailable(tb, "%s is missing", what)
	}
}
