package dynsize

import (
	"math/rand"
	"slices"
	"testing"
)

// TestRankHeapOrder pushes, appends batches and makes the heap again (heapify), and pops, at
// random, and checks that every pop returns the item that sorting what is queued would put first.
func TestRankHeapOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var h rankHeap
	var queued []rankItem
	next := uint32(0)
	for step := 0; step < 20000; step++ {
		if rng.Intn(50) == 0 {
			for range rng.Intn(200) {
				it := rankItem{key: uint64(rng.Intn(20)), comp: next, exact: rng.Intn(2) == 0}
				next++
				h = append(h, it)
				queued = append(queued, it)
			}
			h.heapify()
			continue
		}
		if len(queued) == 0 || rng.Intn(3) > 0 {
			// Few distinct keys, so that ties on the key are common.
			it := rankItem{key: uint64(rng.Intn(20)), comp: next, exact: rng.Intn(2) == 0}
			next++
			h.push(it)
			queued = append(queued, it)
			continue
		}
		best := 0
		for i, it := range queued {
			if it.before(queued[best]) {
				best = i
			}
		}
		if got := h.pop(); got != queued[best] {
			t.Fatalf("step %d: pop = %+v, want %+v", step, got, queued[best])
		}
		queued = slices.Delete(queued, best, best+1)
		if h.Len() != len(queued) {
			t.Fatalf("step %d: %d queued, want %d", step, h.Len(), len(queued))
		}
	}
}
