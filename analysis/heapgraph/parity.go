package heapgraph

import "sync"

// ByParity runs each(0) and each(1) at once, on two cores, and waits for both. A pass that
// fills per-node lists (counts, then cursors) splits its work by the parity of the lists' nodes
// with it: each core reads every edge, front to back, but touches only its own nodes' counts,
// with plain increments, where a split by the edges' sources had both cores share counts through
// atomic operations.
func ByParity(each func(part uint32)) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); each(1) }()
	each(0)
	wg.Wait()
}
