// Package loadavg reads the machine's load average, which every benchmark prints before and
// after it measures: figures taken on a busy machine are compared within a run only.
package loadavg

import (
	"os"
	"strings"
)

// Read returns the 1, 5 and 15 minute load averages as /proc/loadavg gives them, separated by
// spaces, or "unknown" where there is no such file (not Linux) or it cannot be parsed.
func Read() string { return readFile("/proc/loadavg") }

func readFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
