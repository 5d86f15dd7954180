// Package cores splits the passes of a heap analysis between the machine's two cores.
package cores

import "sync"

// Both runs a and b at once, b on a goroutine of its own, and waits for both: the two halves of
// a pass split between the two cores.
func Both(a, b func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); b() }()
	a()
	wg.Wait()
}
