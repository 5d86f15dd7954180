//go:build linux

package progress

import "syscall"

// PeakResident returns the most memory the process has had resident so far (bytes; the peak
// RSS that GNU time reports), or -1 if it cannot tell.
func PeakResident() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return ru.Maxrss << 10 // Linux counts it in KiB
}
