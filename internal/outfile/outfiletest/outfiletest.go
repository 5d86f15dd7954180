//go:build unix

// Package outfiletest helps tests check the modes of the files heapledger writes.
package outfiletest

import (
	"os"
	"syscall"
	"testing"
)

// Umask sets the umask for the rest of the test and restores it afterwards. The umask belongs
// to the process, and so does every file created meanwhile: tests that call it must not run in
// parallel with tests that create files.
func Umask(t testing.TB, mask int) {
	old := syscall.Umask(mask)
	t.Cleanup(func() { syscall.Umask(old) })
}

// Perm returns the permission bits of the file at p.
func Perm(t testing.TB, p string) os.FileMode {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}
