//go:build unix

// Package progress follows a heap analysis as it goes: which phase runs, how far it has got,
// and what it has used so far.
package progress

import (
	"syscall"
	"time"
)

// CPUTime returns the processor time this process has used, user and system. Benchmarks report
// it per node beside wall time because they share machines with other work, which inflates wall
// time but not processor time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
