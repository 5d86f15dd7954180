package heapdump

import (
	"cmp"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/cores"
)

// finish squeezes unused successor slots out, deals with unreachable objects and totals classes.
func (l *loader) finish() {
	d := l.d
	g := d.Graph
	n := g.N()
	seen := newBitset(n)
	stack := make([]uint32, 0, 1024)
	// reach marks what from reaches, and with sized counts it: the first walk, from the super
	// root, needs no counts, and looking up every object's size, at random, was a noticeable
	// share of building the graph.
	reach := func(from uint32, sized bool) (objs, bytes uint64) {
		if seen.has(from) {
			return
		}
		seen.set(from)
		stack = append(stack[:0], from)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if sized {
				objs++
				bytes += g.SizeOf(v)
			}
			for _, w := range g.Succ[g.Off[v]:g.Off[v+1]] {
				if w != pad && !seen.has(w) {
					seen.set(w)
					stack = append(stack, w)
				}
			}
		}
		return
	}
	// The first walk reads the edges with pass 2's pad slots still in them: dropping the
	// unreachable objects, as dumps of live objects mostly need for a few, moves every edge
	// anyway and takes the pads out on the way, which saves squeeze a pass over all edges.
	reach(0, false)
	walk := func(from uint32) (objs, bytes uint64) { return reach(from, true) }
	d.UnreachableKept = l.opt.KeepUnreachable || len(d.Roots) == 0
	if reached := seen.count(); reached < n && !d.UnreachableKept {
		l.dropUnreachable(seen)
	} else {
		l.squeeze()
		if reached < n {
			l.adoptUnreachable(seen, walk)
		}
	}
	d.ClassOf[0] = heapgraph.NoNode
	d.rootEdges = slices.Clone(d.Graph.Successors(0))
	// The class objects, and the classes' totals, on two cores: each core sums half the nodes
	// into totals of its own, rather than one core summing them all while the other idles.
	d.classObjs = newBitset(len(d.Kind))
	half := len(d.ClassOf) / 2
	type total struct{ instances, bytes uint64 }
	other := make([]total, len(d.Classes))
	cores.Both(func() {
		for i, k := range d.Kind {
			if k == KindClass {
				d.classObjs.set(uint32(i))
			}
		}
		for i := 1; i < half; i++ {
			c := &d.Classes[d.ClassOf[i]]
			c.Instances++
			c.Bytes += d.Graph.SizeOf(uint32(i))
		}
	}, func() {
		for i := max(1, half); i < len(d.ClassOf); i++ {
			t := &other[d.ClassOf[i]]
			t.instances++
			t.bytes += d.Graph.SizeOf(uint32(i))
		}
	})
	for k, t := range other {
		d.Classes[k].Instances += t.instances
		d.Classes[k].Bytes += t.bytes
	}
}

// squeeze removes the pad slots pass 2 left where references pointed nowhere, moving weak bits
// along with their edges.
func (l *loader) squeeze() {
	g := l.d.Graph
	var gaps []span
	for e, t := range g.Succ {
		if t == pad {
			gaps = appendSpan(gaps, uint32(e), uint32(e)+1)
		}
	}
	if len(gaps) == 0 {
		return
	}
	w, weak := removeEdges(g, l.d.Weak, gaps)
	before := gapsBefore{gaps: gaps}
	for v := 0; v < g.N(); v++ {
		g.Off[v] -= before.at(g.Off[v])
	}
	g.Off[g.N()] = w
	l.d.Weak = weak
	if len(g.Succ) < cap(g.Succ)*3/4 {
		g.Succ = append([]uint32(nil), g.Succ...)
	}
}

// span is a range of edge positions, start included, end not.
type span struct{ start, end uint32 }

// appendSpan adds [a, b) to gaps, joining it to the last span when they touch.
func appendSpan(gaps []span, a, b uint32) []span {
	if a == b {
		return gaps
	}
	if k := len(gaps) - 1; k >= 0 && gaps[k].end == a {
		gaps[k].end = b
		return gaps
	}
	return append(gaps, span{a, b})
}

// gapsBefore counts the edges in gaps that lie before an offset, for offsets asked in ascending
// order: by how much a list that starts there moves down when the gaps go. An offset may lie
// inside a gap: spans join across lists, so a list of nothing but pad slots starts in the middle
// of the gap that its predecessor's pads begin.
type gapsBefore struct {
	gaps []span
	q    int
	n    uint32
}

func (b *gapsBefore) at(off uint32) uint32 {
	for b.q < len(b.gaps) && b.gaps[b.q].end <= off {
		b.n += b.gaps[b.q].end - b.gaps[b.q].start
		b.q++
	}
	if b.q < len(b.gaps) && b.gaps[b.q].start < off {
		return b.n + off - b.gaps[b.q].start
	}
	return b.n
}

// removeEdges takes the edges at the positions in gaps (ascending, disjoint) out of g.Succ, and
// their bits out of weak, moving the runs between the gaps down as blocks; it returns how many
// edges are left and their weak bits, in a new set. Offsets are the caller's to move. A dump
// has few of either (unreachable objects, references to absent ids), and an edge at a time the
// move would go over every edge of the graph for them.
func removeEdges(g *heapgraph.Graph, weak heapgraph.EdgeSet, gaps []span) (uint32, heapgraph.EdgeSet) {
	total := uint32(len(g.Succ))
	out := make(heapgraph.EdgeSet, (total+63)/64)
	w, from := uint32(0), uint32(0)
	move := func(to uint32) {
		copy(g.Succ[w:], g.Succ[from:to])
		copyBits(out, w, weak, from, to-from)
		w += to - from
	}
	for _, gap := range gaps {
		move(gap.start)
		from = gap.end
	}
	move(total)
	g.Succ = g.Succ[:w]
	return w, out[:(w+63)/64]
}

// copyBits copies n bits of src from position from into dst at position at; dst's bits there
// are zero.
func copyBits(dst heapgraph.EdgeSet, at uint32, src heapgraph.EdgeSet, from, n uint32) {
	for n > 0 {
		k := min(n, 64-at&63, 64-from&63) // bits that stay within a word on both sides
		v := src[from>>6] >> (from & 63)
		if k < 64 {
			v &= 1<<k - 1
		}
		dst[at>>6] |= v << (at & 63)
		at, from, n = at+k, from+k, n-k
	}
}

// adoptUnreachable applies the thesis's rule: objects without referrers become roots, then the
// lowest-id object of each cycle still unreached; all are attached to the super root.
func (l *loader) adoptUnreachable(seen bitset, walk func(uint32) (uint64, uint64)) {
	d := l.d
	g := d.Graph
	n := g.N()
	referred := newBitset(n)
	for v := 1; v < n; v++ {
		for _, w := range g.Succ[g.Off[v]:g.Off[v+1]] {
			if w != uint32(v) {
				referred.set(w)
			}
		}
	}
	var extra []uint32
	var cyclic bitset
	for pass := 0; pass < 2; pass++ {
		if pass == 1 {
			// What is left hangs off cycles: of each, in id order, the first member still
			// unreached becomes a root — the lowest id of its cycle, as the thesis says.
			cyclic = onCycles(g, seen)
		}
		for v := uint32(1); v < uint32(n); v++ {
			if seen.has(v) || (pass == 0 && referred.has(v)) || (pass == 1 && !cyclic.has(v)) {
				continue
			}
			objs, bytes := walk(v)
			d.Unreachable.Objects += objs
			d.Unreachable.Bytes += bytes
			extra = append(extra, v)
			d.Roots = append(d.Roots, Root{Node: v, Kind: RootUnreachable})
			d.UnreachableRoots++
		}
	}
	slices.SortStableFunc(d.Roots, func(a, b Root) int { return cmp.Compare(a.Node, b.Node) })
	// Insert the new roots at the end of the super root's successor list.
	k := uint32(len(extra))
	at := g.Off[1]
	old := len(g.Succ)
	g.Succ = append(g.Succ, extra...)
	copy(g.Succ[at+k:], g.Succ[at:old])
	copy(g.Succ[at:], extra)
	for v := 1; v <= n; v++ {
		g.Off[v] += k
	}
	weak := newBitset(len(g.Succ))
	for e := uint32(0); e < uint32(old); e++ {
		if d.Weak[e>>6]&(1<<(e&63)) != 0 {
			ne := e
			if e >= at {
				ne += k
			}
			weak.set(ne)
		}
	}
	d.Weak = heapgraph.EdgeSet(weak)
	if len(d.Roots) == len(extra) {
		d.Warnings = append(d.Warnings, fmt.Sprintf("the dump has no GC-root records; roots were chosen by the rule \"objects without referrers, and the lowest id of each unreferenced cycle\""))
	}
}

// dropUnreachable removes objects no GC root reaches, renumbering the rest in place, and the pad
// slots pass 2 left (see squeeze). Its steps:
//  1. the kept nodes' new numbers (newKeptRanks), and what the dropped ones weighed (countDropped);
//  2. every edge's target renumbered, on every core, which finds the pad slots too: a kept
//     node's edges lead only to kept nodes, and a dropped node's edges go with it whatever they
//     hold (renumberTargets);
//  3. the edges that go, as spans: the dropped nodes' lists and the pad slots (droppedEdges);
//  4. the edges between those spans, the offsets and the other columns moved down
//     (compactNodes);
//  5. what refers to nodes by number renumbered: watched instances, big sizes, roots and class
//     objects (renumberRefs).
func (l *loader) dropUnreachable(seen bitset) {
	d := l.d
	g := d.Graph
	rk := newKeptRanks(seen)
	l.countDropped(seen)
	pads := renumberTargets(g, rk)
	gaps := droppedEdges(g, seen, pads)
	l.compactNodes(seen, gaps, rk.kept())
	d.ids.keep(seen)
	l.remapWatched(seen, rk.of)
	l.renumberRefs(rk)
}

// keptRanks numbers the nodes that stay: a node's new number is the count of kept nodes before it,
// a rank over the bitset, with a prefix count per 64-bit word instead of a full renumbering table.
type keptRanks struct {
	seen   bitset
	prefix []uint32 // kept nodes before each word
}

func newKeptRanks(seen bitset) keptRanks {
	prefix := make([]uint32, len(seen)+1)
	for w, word := range seen {
		prefix[w+1] = prefix[w] + uint32(bits.OnesCount64(word))
	}
	return keptRanks{seen, prefix}
}

// of is kept node v's new number.
func (r keptRanks) of(v uint32) uint32 {
	return r.prefix[v>>6] + uint32(bits.OnesCount64(r.seen[v>>6]&(1<<(v&63)-1)))
}

// kept is how many nodes stay.
func (r keptRanks) kept() uint32 { return r.prefix[len(r.seen)] }

// countDropped adds the nodes that go, and their bytes, to d.Unreachable.
func (l *loader) countDropped(seen bitset) {
	d, g := l.d, l.d.Graph
	n := g.N()
	for k, word := range seen {
		for gone := ^word; gone != 0; gone &= gone - 1 {
			if v := k<<6 | bits.TrailingZeros64(gone); v < n {
				d.Unreachable.Objects++
				d.Unreachable.Bytes += g.SizeOf(uint32(v))
			}
		}
	}
}

// renumberTargets gives every edge to a kept node the node's new number, on every core, and
// returns where the pad slots are, in order.
func renumberTargets(g *heapgraph.Graph, rk keptRanks) []uint32 {
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	pads := make([][]uint32, workers) // where the pad slots are, by worker, in order
	for k := range workers {
		lo, hi := len(g.Succ)*k/workers, len(g.Succ)*(k+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			for e, t := range g.Succ[lo:hi] {
				if t == pad {
					pads[k] = append(pads[k], uint32(lo+e))
				} else if rk.seen.has(t) {
					g.Succ[lo+e] = rk.of(t)
				}
			}
		}()
	}
	wg.Wait()
	return slices.Concat(pads...)
}

// droppedEdges returns the edges that go, as spans in order: the dropped nodes' lists, and the
// pad slots (pads) in the others'.
func droppedEdges(g *heapgraph.Graph, seen bitset, pads []uint32) []span {
	var gaps []span
	p, n := pads, g.N()
	for v := 0; v < n; v++ {
		if seen[v>>6] == ^uint64(0) && v&63 == 0 && v+64 <= n {
			v += 63 // a word of kept nodes
			continue
		}
		if seen.has(uint32(v)) {
			continue
		}
		a, b := g.Off[v], g.Off[v+1]
		for len(p) > 0 && p[0] < a {
			gaps = appendSpan(gaps, p[0], p[0]+1)
			p = p[1:]
		}
		for len(p) > 0 && p[0] < b {
			p = p[1:] // in the dropped list anyway
		}
		gaps = appendSpan(gaps, a, b)
	}
	for _, e := range p {
		gaps = appendSpan(gaps, e, e+1)
	}
	return gaps
}

// compactNodes moves the kept nodes down to their new numbers (next of them stay), less the
// edges in gaps. Three independent moves, on two cores: the edges between the gaps (and their
// weak bits), the offsets, each less the edges taken out before it, and the other columns. The
// kept nodes come in runs between the dropped ones, each moved as a block.
func (l *loader) compactNodes(seen bitset, gaps []span, next uint32) {
	d, g := l.d, l.d.Graph
	n := g.N()
	var w uint32
	var weak heapgraph.EdgeSet
	cores.Both(func() {
		w, weak = removeEdges(g, d.Weak, gaps)
		nv := 0
		keptRuns(seen, n, func(a, b int) {
			if nv != a {
				copy(d.ClassOf[nv:], d.ClassOf[a:b])
				copy(d.Kind[nv:], d.Kind[a:b])
				copy(g.Size[nv:], g.Size[a:b])
			}
			nv += b - a
		})
	}, func() {
		before, nv := gapsBefore{gaps: gaps}, 0
		keptRuns(seen, n, func(a, b int) {
			for _, off := range g.Off[a:b] {
				g.Off[nv] = off - before.at(off)
				nv++
			}
		})
	})
	g.Off[next] = w
	g.Off = g.Off[:next+1]
	g.Succ = g.Succ[:w]
	g.Size = g.Size[:next]
	d.ClassOf, d.Kind = d.ClassOf[:next], d.Kind[:next]
	d.Weak = weak
}

// renumberRefs gives the nodes that big sizes, roots and classes name their new numbers; a
// class whose class object went has none.
func (l *loader) renumberRefs(rk keptRanks) {
	d, g := l.d, l.d.Graph
	if len(g.Big) > 0 {
		big := map[uint32]uint64{}
		for v, size := range g.Big {
			if rk.seen.has(v) {
				big[rk.of(v)] = size
			}
		}
		g.Big = big
	}
	roots := d.Roots[:0]
	for _, r := range d.Roots {
		r.Node = rk.of(r.Node)
		roots = append(roots, r)
	}
	d.Roots = roots
	cn := map[uint32]int32{}
	for node, k := range d.classNode {
		if rk.seen.has(node) {
			cn[rk.of(node)] = k
			d.Classes[k].Node = rk.of(node)
		} else {
			d.Classes[k].Node = 0
		}
	}
	d.classNode = cn
}

// onCycles returns the nodes not in seen that lie on a cycle of the subgraph of nodes not in seen
// (members of a strongly connected component of two or more, or with a reference to themselves),
// by an iterative Tarjan walk — heap graphs are too deep for recursion. Arrays are sized by the
// unseen nodes only, found in the sorted list of them by binary search.
func onCycles(g *heapgraph.Graph, seen bitset) bitset {
	n := g.N()
	var nodes []uint32
	for v := uint32(1); v < uint32(n); v++ {
		if !seen.has(v) {
			nodes = append(nodes, v)
		}
	}
	local := func(v uint32) int {
		i, ok := slices.BinarySearch(nodes, v)
		if !ok {
			return -1
		}
		return i
	}
	out := newBitset(n)
	index := make([]uint32, len(nodes)) // 0 = not yet visited; else visit order + 1
	low := make([]uint32, len(nodes))
	onStack := newBitset(len(nodes))
	var stack []uint32
	type frame struct{ v, pos uint32 }
	var calls []frame
	next := uint32(0)
	for root := range nodes {
		if index[root] != 0 {
			continue
		}
		visit := func(i int) {
			next++
			index[i], low[i] = next, next
			stack = append(stack, uint32(i))
			onStack.set(uint32(i))
			calls = append(calls, frame{uint32(i), g.Off[nodes[i]]})
		}
		visit(root)
		for len(calls) > 0 {
			f := &calls[len(calls)-1]
			v := nodes[f.v]
			if f.pos < g.Off[v+1] {
				w := local(g.Succ[f.pos])
				f.pos++
				if w < 0 {
					continue
				}
				if index[w] == 0 {
					visit(w)
				} else if onStack.has(uint32(w)) {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			i := f.v
			calls = calls[:len(calls)-1]
			if len(calls) > 0 {
				p := calls[len(calls)-1].v
				low[p] = min(low[p], low[i])
			}
			if low[i] != index[i] {
				continue
			}
			k := len(stack) - 1
			for stack[k] != i {
				k--
			}
			members := stack[k:]
			cyclic := len(members) > 1 || slices.Contains(g.Successors(v), v)
			for _, m := range members {
				onStack[m>>6] &^= 1 << (m & 63)
				if cyclic {
					out.set(nodes[m])
				}
			}
			stack = stack[:k]
		}
	}
	return out
}

// keptRuns calls fn for each run [a, b) of nodes below n whose bits are set in seen, in order.
func keptRuns(seen bitset, n int, fn func(a, b int)) {
	for v := 0; v < n; {
		k := v >> 6
		// The first kept node from v on, then the first dropped one after it.
		word := seen[k] &^ (1<<(v&63) - 1)
		for word == 0 {
			if k++; k<<6 >= n {
				return
			}
			word = seen[k]
		}
		a := k<<6 | bits.TrailingZeros64(word)
		if a >= n {
			return
		}
		word = ^seen[k] &^ (1<<(a&63) - 1)
		for word == 0 {
			if k++; k<<6 >= n {
				break
			}
			word = ^seen[k]
		}
		b := min(n, k<<6|bits.TrailingZeros64(word)) // n when the words ran out (word 0)
		fn(a, b)
		v = b
	}
}
