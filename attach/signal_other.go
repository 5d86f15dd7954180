//go:build !linux

package attach

import "errors"

// This package finds JVMs through /proc and starts their attach listener with SIGQUIT, as on
// Linux; other systems (Windows, with its named pipe; macOS, without /proc) are not served.
var errUnsupported = errors.New("attaching to a running JVM is supported on Linux only")

func supported() error { return errUnsupported }

func signalQuit(int) error { return errUnsupported }
