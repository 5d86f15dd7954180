package leaks

import (
	"runtime"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Ahead is arrays made for Run ahead of it, by MakeAhead.
type Ahead struct {
	made    chan struct{} // closed once arrays are made (their pages may still be coming in)
	nodes   int
	arrays  [][]uint32   // the depth-first search's first, then the components' search's
	faulted atomic.Int64 // bytes of them faulted in so far
	dropped atomic.Bool  // set when Run does not use them: no more pages come in
}

// dfsArrays is how many node-sized arrays the depth-first search takes (see dominators).
const dfsArrays = 3

// aheadArrays is how many arrays MakeAhead makes at most: the depth-first search's and the
// components' search's first.
const aheadArrays = dfsArrays + 1

// MakeAhead starts making the node-sized arrays that Run's two searches take first, for a graph
// of up to nodes nodes, as many as fit in room bytes of memory once work holding up to
// aheadSlack(nodes) more is done, and has their pages faulted in, on a goroutine of its own. It
// is for a caller with work to do before Run that leaves a core idle (building the graph): the
// searches then start on memory already in place instead of faulting it in as they go, which
// on a virtual machine whose host backs fresh memory anew is slow on a large dump. It returns
// nil when nothing fits, or there is one core only. Run must
// be given the result (Options.Ahead) for a graph of no more than nodes nodes.
func MakeAhead(mem *memory.Budget, nodes int, room int64) *Ahead {
	if runtime.GOMAXPROCS(0) < 2 || nodes <= 0 {
		return nil
	}
	per := 4 * int64(nodes+1)
	k := min(int64(aheadArrays), (room-aheadSlack(nodes))/per)
	if k < 1 {
		return nil
	}
	a := &Ahead{made: make(chan struct{}), nodes: nodes}
	go func() {
		arrays := make([][]uint32, k)
		for i := range arrays {
			arrays[i] = memory.Reserve[uint32](mem, nodes+1)
		}
		a.arrays = arrays
		close(a.made)
		for _, b := range arrays {
			if a.dropped.Load() || !memory.Populate(mem, b, &a.faulted) {
				return
			}
		}
	}()
	return a
}

// aheadSlack is what building a graph of nodes nodes may take beyond what is resident when it
// starts: its marks and counts over the nodes with room to spare, but little: with more to
// spare, a small dump had no array made ahead, and its search lost what one saves.
func aheadSlack(nodes int) int64 { return 4*int64(nodes) + 4<<20 }

// take waits for the arrays and returns them if they fit a graph of n nodes. Arrays too short
// (a caller's mistake) are dropped, and the pages of no other array come in.
func (a *Ahead) take(n int) [][]uint32 {
	<-a.made
	arrays := a.arrays
	a.arrays = nil
	if n > a.nodes {
		a.dropped.Store(true)
		return nil
	}
	return arrays
}
