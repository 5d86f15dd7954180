//go:build linux

package attach

import "syscall"

func supported() error { return nil }

func signalQuit(pid int) error { return syscall.Kill(pid, syscall.SIGQUIT) }
