//go:build !linux

package memory

// Available cannot tell the memory the process may use here: it returns 0.
func Available() (int64, string) { return 0, "" }

// CgroupLimit cannot tell a cgroup's memory limit here: it returns false.
func CgroupLimit() (int64, bool) { return 0, false }
