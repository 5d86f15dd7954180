package tracked

import (
	"math/bits"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// SetApart finds the runtime's own objects and cuts them off from the application's: it adds
// every edge into or out of them to d.Weak, which the analysis skips (leaks.Input.Apart takes
// r.Own and r.OwnEdges).
//
// The runtime's own objects are the instances and class objects of heapledger's classes and
// whatever the heap reaches only through them: the tracking references and the lists that link
// them (one strongly connected component of every tracked object, which without this dominated
// a dump of a run with liveness, and its suspects), the per-thread counters, the tables. They are
// what the heap holds but for the application's own, found by a search from the GC roots and from
// the tracked objects that never enters one of heapledger's objects. The search follows weak
// references too, as the dump's reachability does, so an application object that only weak
// references and heapledger hold stays the application's (among the objects held only weakly).
func (r *Runtime) SetApart(d *heapdump.Dump) {
	if !r.Present {
		return
	}
	g := d.Graph
	n := g.N()
	isOwn := make([]bool, len(d.Classes))
	ownClassObj := map[uint32]bool{}
	for k, c := range d.Classes {
		if ownClass(c.Name) {
			isOwn[k] = true
			if c.Node != 0 {
				ownClassObj[c.Node] = true
			}
		}
	}
	classObjs := d.ClassObjects()
	own := func(v uint32) bool {
		if classObjs.Has(v) {
			return ownClassObj[v]
		}
		return isOwn[d.ClassOf[v]]
	}
	reached := heapgraph.NewEdgeSet(n)
	var stack heapgraph.Stack[uint32]
	visit := func(v uint32) {
		if !reached.Has(v) && !own(v) {
			reached.Add(v)
			stack.Push(v)
		}
	}
	reached.Add(0)
	stack.Push(0)
	for _, o := range r.Refs.Objects {
		if o != 0 {
			visit(o)
		}
	}
	for !stack.Empty() {
		v := stack.Pop()
		for _, w := range g.Succ[g.Off[v]:g.Off[v+1]] {
			visit(w)
		}
	}
	// What the search did not reach is the runtime's: the complement, within the nodes.
	for w := range reached {
		reached[w] = ^reached[w]
	}
	if tail := n & 63; tail != 0 {
		reached[len(reached)-1] &= 1<<tail - 1
	}
	r.Own = reached
	for w, word := range r.Own {
		for ; word != 0; word &= word - 1 {
			v := uint32(w<<6 | bits.TrailingZeros64(word))
			r.OwnObjects++
			r.OwnBytes += g.SizeOf(v)
		}
	}
	for v := range uint32(n) {
		from := r.Own.Has(v)
		for e := g.Off[v]; e < g.Off[v+1]; e++ {
			if from || r.Own.Has(g.Succ[e]) {
				d.Weak.Add(e)
				r.OwnEdges++
			}
		}
	}
}
