//go:build unix

package outfile

import (
	"errors"
	"syscall"
)

// processAlive reports whether process pid exists. Signal 0 checks without signalling; EPERM
// means it exists under another user. A reused number keeps a dead run's temporary until that
// process ends too, which errs on the side of keeping files.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
