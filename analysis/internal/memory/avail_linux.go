//go:build linux

package memory

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Available returns the memory the process may use, in bytes, and where that figure comes from:
// the memory limit of its cgroup (version 2's memory.max, or version 1's
// memory.limit_in_bytes, of the cgroup /proc/self/cgroup names, or of one above it), or the
// memory the system has available (MemAvailable), whichever is less. It returns 0 when it
// cannot tell.
func Available() (int64, string) {
	avail, from := meminfoAvailable(), "the memory available"
	if limit, ok := CgroupLimit(); ok && (avail <= 0 || limit < avail) {
		avail, from = limit, "the cgroup's memory limit"
	}
	return max(avail, 0), from
}

// meminfoAvailable is /proc/meminfo's MemAvailable in bytes, 0 when it cannot be read.
func meminfoAvailable() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// CgroupLimit is the lowest memory limit set on the process's cgroup or those above it, in
// bytes; false when none is set or it cannot be read.
func CgroupLimit() (int64, bool) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	best, found := int64(0), false
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		// hierarchy-ID:controllers:path; version 2 has the ID 0 and no controllers.
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		var root, file string
		switch {
		case parts[0] == "0" && parts[1] == "":
			root, file = "/sys/fs/cgroup", "memory.max"
		case strings.Contains(","+parts[1]+",", ",memory,"):
			root, file = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
		default:
			continue
		}
		for dir := filepath.Join(root, parts[2]); strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
			if n, ok := readLimit(filepath.Join(dir, file)); ok && (!found || n < best) {
				best, found = n, true
			}
			if dir == root {
				break
			}
		}
	}
	return best, found
}

// readLimit reads a cgroup memory limit file: a number of bytes, or "max" (version 2) or a
// number near 2^63 (version 1) for none.
func readLimit(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= 1<<62 {
		return 0, false
	}
	return n, true
}
