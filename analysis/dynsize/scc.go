// Package dynsize computes dynamic sizes as the dynaTrace thesis defines them: the shallow size
// of an object plus that of every object reachable from it. Computing it for every object by
// walking from each one is quadratic, so, as in the thesis, the graph is first condensed into
// its strongly connected components (all members share one dynamic size), the condensed DAG is
// given a dominator tree, and the dominating articulation points of Listing 4.4 — components that
// dominate everything they reach — get their dynamic size once, bottom-up. A walk from any other
// component then stops at the first dominating articulation point it meets and adds that
// point's size, which cannot double count because nothing below the point is reachable except
// through it (unlike plain articulation points: the thesis's Figure 4.11).
package dynsize

import (
	"fmt"
	"math/bits"
	"runtime"
	"sort"
	"sync/atomic"
	"unsafe"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/cores"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Components labels each node with its strongly connected component, leaving out the edges in
// skip. Components are numbered in topological order: component 0 holds node 0 and every edge between two components goes from a smaller number to a
// larger one. Every node gets a component, also nodes that node 0 does not reach (an object
// reached only through a skipped edge still has a dynamic size). count is the number of
// components.
//
// This is Tarjan's algorithm in Pearce's one-array form, run with an explicit stack of frames:
// while a node is open its entry holds its DFS lowlink; once its component is complete the entry
// holds a value counting down from the top of the uint32 range, which every open lowlink is below.
// Node 0 is searched from last, so that its component completes last and is numbered 0.
func Components(g *heapgraph.Graph, skip heapgraph.EdgeSet) (comp []uint32, count int) {
	return components(g, skip, nil, nil)
}

// components is Components taking its array from sc. With a room, the search gives up,
// returning a nil comp, once its two stacks hold more than the room allows (12 bytes per open
// node, 4 per node waiting for its component), which it sees within stackCheck pushes.
func components(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch, room *StackRoom) (comp []uint32, count int) {
	n := g.N()
	r := sc.Uint32s(n) // 0: not visited yet
	type frame struct {
		v, e uint32
		root bool
	}
	// Chunked stacks: grown by append, the stacks of a search a hundred thousand objects deep
	// left about twice their final size in garbage, while the dominators' search, beside this
	// one, held its own arrays: on the smallest benchmark dump that took the peak over the file's
	// size.
	var frames memory.Stack[frame]
	var done memory.Stack[uint32] // visited nodes whose component is not complete yet (Tarjan's stack)
	// The stacks are weighed against the room, and what they hold told, every stackCheck
	// pushes: often enough for a caller lowering the room (StackRoom.Hold) to count on it, and
	// for the stacks to pass it by no more than stackCheck frames; rarely enough to cost
	// nothing (a call per push was not).
	pushes := 0
	over := func() bool {
		held := int64(frames.Len())*int64(unsafe.Sizeof(frame{})) + int64(done.Len())*4
		room.held.Store(held)
		if stacksWeighed != nil {
			stacksWeighed(held)
		}
		limit := room.limitNow()
		return limit > 0 && held > limit
	}
	next := uint32(1) // next DFS index
	completed := uint32(0)
	finished := func(k uint32) uint32 { return heapgraph.NoNode - 1 - k }

	search := func(s uint32) bool {
		r[s] = next
		next++
		frames.Push(frame{v: s, e: g.Off[s], root: true})
	frames:
		for !frames.Empty() {
			f := frames.Top()
			// The node's edges in one loop, its frame's fields in registers, until one leads
			// to a node not visited yet.
			v, e, end, low, root := f.v, f.e, g.Off[f.v+1], r[f.v], f.root
			for e < end {
				if skip.Has(e) {
					e++
					continue
				}
				w := g.Succ[e]
				e++
				if rw := r[w]; rw == 0 {
					// w's edges up to the first that leads to a node not visited yet or still open
					// are passed over now: they cannot lower its lowlink (a complete component's
					// value is above it). A node whose edges all do so is a component of its own,
					// complete at once, numbered as its frame's push and pop would number it.
					we, wend := g.Off[w], g.Off[w+1]
					for we < wend && (skip.Has(we) || r[g.Succ[we]] > next) {
						we++
					}
					if we == wend {
						r[w] = finished(completed)
						completed++
						continue
					}
					f.e, f.root = e, root
					r[v] = low
					r[w] = next
					next++
					frames.Push(frame{v: w, e: we, root: true})
					if pushes++; pushes == stackCheck {
						if pushes = 0; room != nil && over() {
							return false
						}
					}
					continue frames
				} else if rw < low {
					// (A w whose component is complete holds a value above every open lowlink.)
					low, root = rw, false
				}
			}
			r[v] = low
			frames.Pop()
			if root {
				id := finished(completed)
				for !done.Empty() && r[v] <= r[*done.Top()] {
					r[done.Pop()] = id
				}
				r[v] = id
				completed++
			} else {
				done.Push(v)
				if pushes++; pushes == stackCheck {
					if pushes = 0; room != nil && over() {
						return false
					}
				}
			}
			if !frames.Empty() {
				if p := frames.Top(); r[v] < r[p.v] {
					r[p.v] = r[v]
					p.root = false
				}
			}
		}
		return true
	}
	for v := 1; v <= n; v++ {
		s := uint32(v % n) // node 0 last
		if r[s] == 0 && !search(s) {
			sc.Release(r)
			return nil, 0
		}
	}
	topological(r, completed)
	return r, int(completed)
}

// topological turns the components' numbers, counting down from the top of the uint32 range
// in the order they completed, from sinks to node 0's component, into a topological order.
func topological(r []uint32, completed uint32) {
	for i, x := range r {
		r[i] = completed - 1 - (heapgraph.NoNode - 1 - x)
	}
}

// StackRoom is the memory a search's stacks may take (SearchWithin). Another goroutine may lower
// it while the search runs (Hold); the search then gives up if its stacks pass the new limit.
type StackRoom struct {
	limit atomic.Int64 // bytes; 0: no limit
	held  atomic.Int64 // what the stacks held when the search last looked
}

// stacksWeighed, set in tests, is called with what the stacks hold each time the search weighs
// them, before it reads its room.
var stacksWeighed func(held int64)

// stackCheck is how many pushes apart the search weighs its stacks against its room: they grow
// by at most 12 bytes a push, so they pass the room by 3 KB at most.
const stackCheck = 256

// holdSlack is what Hold adds to the bytes asked for: see there.
const holdSlack = 2 * stackCheck * 12

// NewStackRoom returns a room of bytes (0: no limit).
func NewStackRoom(bytes int64) *StackRoom {
	r := &StackRoom{}
	r.limit.Store(bytes)
	return r
}

// Hold lowers the room, if it is larger, to what the stacks held when the search last looked
// and more bytes beyond, and returns how many bytes beyond that the stacks may still take. A
// caller that must count what a running search may yet take calls it, and counts that.
func (r *StackRoom) Hold(more int64) int64 {
	for {
		old, held := r.limit.Load(), r.held.Load()
		// held may be stackCheck pushes old, and the stacks may pass the limit by as many more
		// before the search sees it.
		want := held + more + holdSlack
		if old > 0 && old <= want {
			return max(0, old-held)
		}
		if r.limit.CompareAndSwap(old, want) {
			return want - held
		}
	}
}

func (r *StackRoom) limitNow() int64 {
	if r == nil {
		return 0
	}
	return r.limit.Load()
}

// Condense builds the component DAG: node c is component c, its size is the sum of its members'
// shallow sizes, and there is one edge c → d for each pair of distinct components joined by at
// least one edge of g outside skip. Component 0 (the super root) also gets an edge to every other
// component that has no predecessor — the thesis's rule for roots without referrers — so that
// the DAG's root reaches everything and dominance in it is defined for every component; these
// come after component 0's real edges, of which there are rootEdges.
func Condense(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp []uint32, count int) (dag *heapgraph.Graph, rootEdges uint32) {
	dag, rootEdges = condense(g, skip, comp, count, nil, nil)
	componentSizes(g, dag, comp, nil)
	return dag, rootEdges
}

// componentSizes sets the DAG's sizes: each component's the sum of its members' shallow sizes,
// in g's units.
func componentSizes(g, dag *heapgraph.Graph, comp []uint32, sc *memory.Scratch) {
	sumSizes(g, dag, comp, sc.Uint32s(dag.N()))
}

// sumSizes is componentSizes into size, a zeroed array of a word per component.
func sumSizes(g, dag *heapgraph.Graph, comp []uint32, size []uint32) {
	dag.Size, dag.SizeShift, dag.Big = size, g.SizeShift, nil
	for v, c := range comp {
		if s := g.Size[v]; s != heapgraph.BigSize {
			// The common case inline: a sum that stays below BigSize units.
			if sum := uint64(dag.Size[c]) + uint64(s); dag.Size[c] != heapgraph.BigSize && sum < uint64(heapgraph.BigSize) {
				dag.Size[c] = uint32(sum)
				continue
			}
		}
		dag.AddSize(c, g.SizeOf(uint32(v)))
	}
}

// condense is Condense without the sizes (NewWith sums them only once the DAG's dominators are
// gone, to keep them out of that phase's peak).
//
// A component's edges are those of its members in node order, each target kept where it first
// appears. They are laid out without grouping the nodes by component, which would take two
// node-sized arrays at the moment memory peaks:
//  1. a first pass counts the edges that leave each component, duplicates included, and marks
//     the components they enter (countComponentEdges);
//  2. the counts, with component 0's edges to the components nothing enters (rootCount), become
//     the ends of the lists (endOffsets);
//  3. a second pass, over the nodes from the last, drops each edge in front of those already
//     placed for its component, so every list comes out in node order (placeComponentEdges);
//  4. the root edges go in the slots left at the end of component 0's list (placeRootEdges);
//  5. duplicates are squeezed out list by list (squeezeAll).
func condense(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp []uint32, count int, sc *memory.Scratch, s *Sizes) (dag *heapgraph.Graph, rootEdges uint32) {
	off := sc.Uint32s(count + 1)
	hasPred := countComponentEdges(g, skip, comp, count, off, sc, s)
	roots := rootCount(hasPred, count)
	total := endOffsets(off, count, roots)
	// Written by the two cores below, each its components' lists, which fault its pages in
	// as they go: Make would have them faulted in by a third goroutine, on one of the same two
	// cores.
	succ := memory.Reserve[uint32](sc.Memory(), int(total))
	placeComponentEdges(g, skip, comp, off, succ)
	placeRootEdges(off, succ, hasPred, count, roots)
	clear(hasPred) // done with: the first half's marks
	w, rootEdges := squeezeAll(off, succ, count, roots, total, hasPred, sc)
	off[count] = w
	return &heapgraph.Graph{Off: off, Succ: succ[:w:w]}, rootEdges
}

// countComponentEdges counts in off[c] the edges leaving component c, duplicates included, and
// returns the set of components that have a predecessor. They are marked on the way, each core
// in a bit set of its own, as both mark components of either parity: this pass reads every
// edge anyway, on two cores, where marking them in the components' search cost a random write
// per edge on the core beside the dominators' search. With s, the pass also counts each
// component's members for s's statistics, sparing a pass of its own over the components; their
// array goes before the DAG's edges are made, to stay out of the phase's peak.
func countComponentEdges(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp []uint32, count int, off []uint32, sc *memory.Scratch, s *Sizes) bitset {
	var members []uint32
	if s != nil {
		members = sc.Uint32s(count)
	}
	entered := [2]bitset{newBitset(sc.Memory(), count), newBitset(sc.Memory(), count)}
	var big [2]int
	var largest [2]uint32
	cores.ByParity(func(part uint32) { // by the components' parity
		mine := entered[part]
		for v, c := range comp {
			if c&1 != part {
				continue
			}
			if members != nil {
				members[c]++
			}
			for e := g.Off[v]; e < g.Off[v+1]; e++ {
				if skip.Has(e) {
					continue // every instance's edge to its class, among others
				}
				if d := comp[g.Succ[e]]; d != c {
					off[c]++
					mine.set(d)
				}
			}
		}
		// This parity's counts are whole now: their statistics on this core too.
		if members != nil {
			for c := int(part); c < count; c += 2 {
				m := members[c]
				if m > 1 {
					big[part]++
				}
				largest[part] = max(largest[part], m)
			}
		}
	})
	if s != nil {
		s.BigComponents += big[0] + big[1]
		s.LargestComp = max(s.LargestComp, largest[0], largest[1])
		sc.Release(members)
	}
	hasPred := entered[0]
	for i, w := range entered[1] {
		hasPred[i] |= w
	}
	return hasPred
}

// rootCount is the number of components the root gets an edge to for want of a predecessor,
// counted a word of hasPred at a time.
func rootCount(hasPred bitset, count int) uint32 {
	if count == 0 {
		return 0
	}
	entered := uint32(Set(hasPred).Count())
	if hasPred.has(0) {
		entered--
	}
	return uint32(count-1) - entered
}

// endOffsets turns the counts in off into the ends of the components' ranges (for component 0,
// the end of its real edges, its roots edges following them) and returns the edges in all.
func endOffsets(off []uint32, count int, roots uint32) uint64 {
	if count > 0 {
		off[0] += roots // component 0's list holds its rooting edges too
	}
	total := heapgraph.RunningSums(off[:count], false)
	if total > uint64(heapgraph.NoNode) {
		panic(fmt.Sprintf("dynsize: more than 2^32 edges between components (%d)", total))
	}
	if count > 0 {
		off[0] -= roots
	}
	off[count] = uint32(total)
	return total
}

// placeComponentEdges writes each edge between two components into succ, in front of those
// already placed for its component, off[c] moving down from the end of c's range to its start.
func placeComponentEdges(g *heapgraph.Graph, skip heapgraph.EdgeSet, comp, off, succ []uint32) {
	cores.ByParity(func(part uint32) { // by the components' parity
		for v := len(comp) - 1; v >= 0; v-- {
			c := comp[v]
			if c&1 != part {
				continue
			}
			for e := g.Off[v+1]; e > g.Off[v]; {
				e--
				if d := comp[g.Succ[e]]; !skip.Has(e) && d != c {
					off[c]--
					succ[off[c]] = d
				}
			}
		}
	})
}

// placeRootEdges writes the root's edges to the components without a predecessor into the
// slots left at the end of component 0's range, found a word of hasPred at a time.
func placeRootEdges(off, succ []uint32, hasPred bitset, count int, roots uint32) {
	if count == 0 {
		return
	}
	at := off[1] - roots
	for k, word := range hasPred {
		for free := ^word; free != 0; free &= free - 1 {
			if d := k<<6 | bits.TrailingZeros64(free); d > 0 && d < count {
				succ[at] = uint32(d)
				at++
			}
		}
	}
}

// squeezeAll squeezes the duplicates out of every component's list in place and returns where
// the lists end and where component 0's real edges end. It runs on two cores, each over the
// components of about half the edges, each writing its lists down from its first component's
// start; the second half's then move down behind the first's in one copy. seen is a cleared
// set over the components, for the first half.
func squeezeAll(off, succ []uint32, count int, roots uint32, total uint64, seen bitset, sc *memory.Scratch) (w, rootEdges uint32) {
	mid := count
	if runtime.GOMAXPROCS(0) >= 2 && count > 1 {
		mid = max(1, sort.Search(count, func(c int) bool { return uint64(off[c]) >= total/2 }))
	}
	if mid == count {
		return squeeze(off, succ, 0, count, off[count], roots, seen)
	}
	var w2 uint32
	start2 := off[mid] // the second half's start, read before either half moves any offset
	cores.Both(func() { w, rootEdges = squeeze(off, succ, 0, mid, start2, roots, seen) },
		func() { w2, _ = squeeze(off, succ, mid, count, off[count], roots, newBitset(sc.Memory(), count)) })
	shift := start2 - w
	w += uint32(copy(succ[w:], succ[start2:w2]))
	for c := mid; c < count; c++ {
		off[c] -= shift
	}
	return w, rootEdges
}

// squeeze squeezes the duplicates out of the lists of components lo to hi (the last ending at
// limit), each target kept where it first appears, writing them down from off[lo]; off[c]
// becomes each list's new start. It returns where the lists end and, when it has component 0,
// where its real edges end (its root edges, which hold no duplicates, follow them). seen is a
// cleared set over the components; a list's targets are unmarked again once it is done.
func squeeze(off, succ []uint32, lo, hi int, limit, roots uint32, seen bitset) (w, rootEdges uint32) {
	w = off[lo]
	for c := lo; c < hi; c++ {
		start, end := off[c], limit
		if c+1 < hi {
			end = off[c+1]
		}
		real := end
		if c == 0 {
			real = end - roots
		}
		off[c] = w
		switch real - start {
		case 0:
		case 1: // most components are one object with one reference out, or none
			succ[w] = succ[start]
			w++
		case 2:
			a, b := succ[start], succ[start+1]
			succ[w] = a
			w++
			if b != a {
				succ[w] = b
				w++
			}
		default:
			for _, d := range succ[start:real] {
				if !seen.has(d) {
					seen.set(d)
					succ[w] = d
					w++
				}
			}
			for _, d := range succ[off[c]:w] {
				seen.clear(d)
			}
		}
		if c == 0 {
			rootEdges = w
			w += uint32(copy(succ[w:], succ[real:end]))
		}
	}
	return w, rootEdges
}
