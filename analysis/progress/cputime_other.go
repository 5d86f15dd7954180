//go:build !unix

package progress

import "time"

// CPUTime is not measured where getrusage is missing: it reports 0, and so do the CPU times
// derived from it.
func CPUTime() time.Duration { return 0 }
