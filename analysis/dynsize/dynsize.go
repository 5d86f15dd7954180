package dynsize

import (
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Sizes answers dynamic-size queries on one graph.
type Sizes struct {
	// Comp maps each node to its component.
	Comp []uint32
	// DAG is the condensed component graph; its sizes (DAG.SizeOf) are the components' shallow sizes.
	DAG *heapgraph.Graph
	// BigComponents counts the components of more than one node; LargestComp is the number of
	// nodes of the largest. (Rep and Members name single components.)
	BigComponents int
	LargestComp   uint32
	// DAP marks the dominating articulation points of the DAG.
	DAP Set
	// Hub is the component walks treat as a landmark (see New), NoNode when there is none.
	Hub uint32

	dyn        []uint64 // exact dynamic size of each DAP; Top's bounds elsewhere
	idom       []uint32 // the DAG's dominator tree, from Dominate until the points' sizes are summed
	rootEdges  uint32   // component 0's real edges; the rest of its list only roots the DAG
	inHub      bitset   // components the hub reaches (the hub included)
	reachesHub bitset   // components that reach the hub (the hub included)
	hubDyn     uint64
	hubReady   bool
	hubPicked  bool        // pickHub has run
	bounded    bool        // dyn holds Top's bounds already (WalkAndBound)
	ready      func(c int) // waits for the points being worked out beside (StartPoints)
	// seen marks what a walk has met, a bit per component; the walk unmarks what it marked
	// (marked) when it ends. An array of epoch stamps would spare that, at four bytes per
	// component through the phase where memory peaks.
	seen   bitset
	marked []uint32
	// markedAll is set when a walk marks more components than seen has words, where clearing
	// all of seen costs no more than unmarking them one by one: marked stops growing there.
	markedAll bool
	masks     []uint32 // Batch's, made on its first use
	stack     []uint32
	boundary  []uint32
	// Visited counts components expanded by walks, the work measure the thesis tabulates.
	Visited uint64
	// Leave holds components that Top leaves out of its ranking (nil: none). It is for a caller
	// that set some objects apart from the analysis by skipping every edge into and out of them:
	// each is then a component of its own that only the DAG's rooting edges reach.
	Leave Set
	// WalkBudget is how many components a walk of Top may expand before Top batches it with
	// others (0: a 64th of the DAG, at least 10,000).
	WalkBudget uint64

	mem *memory.Budget // where the arrays come from: the Scratch's the Sizes was made with
}

// New condenses g (leaving out the edges in skip), finds the dominating articulation points and
// computes their dynamic sizes. That costs time linear in the size of the graph: a point's
// dynamic size is the sum of its subtree of the DAG's dominator tree (see walkPoints), and one
// pass sums them all.
//
// Heaps often have one big strongly connected component that a great many objects reach (a
// thread group with its threads, a graph of objects with back references) but that is no
// dominating articulation point, because it is reached along many paths. Every walk from above
// it would cross all of it. So the component with the most shallow bytes becomes a hub: its
// dynamic size is computed once, and a walk from outside what the hub reaches stops at the
// boundary of that region; if the walk met the hub itself it adds the hub's size for the whole
// region, and only if it did not does it go on into the region. A walk that reaches the hub
// reaches all the hub reaches, so nothing is missed; and whatever the walk found outside the
// region is not inside it, so nothing is counted twice.
func New(g *heapgraph.Graph, skip heapgraph.EdgeSet) *Sizes { return NewWith(g, skip, nil) }

// WorkArrays is how many node-sized arrays Prepare takes from its Scratch at most at a time.
const WorkArrays = 5

// ComputeArrays is how many node-sized arrays Compute takes from its Scratch.
const ComputeArrays = 1

// NewWith is New taking its work arrays, and its own, from sc (see memory.Scratch).
func NewWith(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Sizes {
	s := Prepare(g, skip, sc)
	s.Compute(g, sc)
	return s
}

// Prepare does the first half of NewWith: components, the condensed DAG and its dominating
// articulation points. Compute does the rest. Between the two the caller may give memory back
// to the system: the DAG's dominator tree, whose arrays Prepare leaves in sc, is the larger of
// the two halves' peaks, and Compute takes only ComputeArrays arrays from sc and allocates the
// dynamic sizes afresh.
func Prepare(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Sizes {
	s := Condensed(g, skip, sc)
	s.Dominate(sc)
	return s
}

// Condensed is the first step of Prepare: the components and the condensed DAG. It is the last
// step that reads g's edges, so a caller short of memory can move them out before Dominate.
func Condensed(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Sizes {
	return CondensedFrom(g, skip, Search(g, skip, sc), sc)
}

// Found is what Search found: the strongly connected components of a graph, for CondensedFrom.
type Found struct {
	comp  []uint32
	count int
}

// Search is the part of Condensed that finds the components, apart so that a caller can run it
// beside other work that reads the same graph (it only reads g and skip). Its node-sized array
// comes from sc, which must then not be in use elsewhere meanwhile (nil allocates it).
func Search(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch) *Found {
	return SearchWithin(g, skip, sc, nil)
}

// SearchWithin is Search for a caller with little memory to spare: it gives up, returning nil,
// once the search's stacks take more than room allows (nil: no limit; they may pass it by
// stackCheck frames before the search sees it), which a graph's
// shape alone decides (12 bytes per node on the deepest path, and 4 per node of the largest
// component). The rest of what it takes is known in advance: a word per node.
func SearchWithin(g *heapgraph.Graph, skip heapgraph.EdgeSet, sc *memory.Scratch, room *StackRoom) *Found {
	comp, count := components(g, skip, sc, room)
	if comp == nil && g.N() > 0 {
		return nil
	}
	return &Found{comp: comp, count: count}
}

// CondensedFrom is Condensed with the components already found by Search on the same g and
// skip; f must not be used afterwards.
func CondensedFrom(g *heapgraph.Graph, skip heapgraph.EdgeSet, f *Found, sc *memory.Scratch) *Sizes {
	comp, count := f.comp, f.count
	*f = Found{}
	s := &Sizes{Comp: comp, Hub: heapgraph.NoNode, mem: sc.Memory()}
	// Component sizes in nodes are counted as the DAG is made, rather than kept per component
	// through the walks: only the statistics and the few ranked components (Members) need them.
	s.DAG, s.rootEdges = condense(g, skip, comp, count, sc, s)
	return s
}

// Dominate is the second step of Prepare: the DAG's dominator tree and its dominating
// articulation points. The immediate dominators stay, a word per component, for Walk.
func (s *Sizes) Dominate(sc *memory.Scratch) {
	idom, err := dominators.DAGWith(s.DAG, sc)
	if err != nil {
		panic(err) // Condense numbers components topologically; a backward edge is a bug here
	}
	s.DAP = dominatingArticulationPoints(s.DAG, idom, sc)
	s.idom = idom
}

// Compute finishes what Prepare began on the same graph: the components' sizes and the exact
// dynamic size of every dominating articulation point.
func (s *Sizes) Compute(g *heapgraph.Graph, sc *memory.Scratch) {
	s.Weigh(g, sc)
	s.Walk()
}

// Weigh is the first step of Compute: the components' shallow sizes. It is the last step that
// reads g or Comp (but for Of and Describe, which read one node's component, or the whole
// column once), so a caller short of memory can move them out before Walk.
func (s *Sizes) Weigh(g *heapgraph.Graph, sc *memory.Scratch) {
	// Allocated only now, after the DAG's dominator tree is gone, to keep the peak down.
	componentSizes(g, s.DAG, s.Comp, sc)
}

// DominateAndWeigh is Dominate and Weigh at once, for a caller with the memory to hold both
// steps' arrays, and g's sizes, together: on another core, the components' sizes are summed into
// size (a zeroed array of a word per component) and the hub is chosen, while the DAG's dominator
// tree is worked out. The two touch different fields of the DAG (its edges, and its sizes).
//
// The points are left for later: with beside, they are started on the core the dominator tree
// leaves free as soon as it is known (see StartPoints), and the channel returned is closed once
// they are; else Points or WalkAndBound works them out. The points so fill the core the tree
// leaves free while the other core does the sizes and the hub.
func (s *Sizes) DominateAndWeigh(g *heapgraph.Graph, sc *memory.Scratch, size []uint32, beside bool) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		sumSizes(g, s.DAG, s.Comp, size)
		s.pickHub(false) // no points yet: dropHubAtPoint undoes a hub that turns out to be one
	}()
	idom, err := dominators.DAGWith(s.DAG, sc)
	if err != nil {
		panic(err) // Condense numbers components topologically; a backward edge is a bug here
	}
	s.idom = idom
	var points <-chan struct{}
	if beside {
		points = s.StartPoints(sc)
	}
	<-done
	return points
}

// Points works out the dominating articulation points after DominateAndWeigh, when the walks
// are not to do it beside them.
func (s *Sizes) Points(sc *memory.Scratch) {
	if s.DAP == nil {
		s.DAP = dominatingArticulationPoints(s.DAG, s.idom, sc)
		s.dropHubAtPoint()
	}
}

// Walk is the second step of Compute: the exact dynamic size of every dominating articulation
// point, from the DAG and its dominator tree alone.
func (s *Sizes) Walk() { s.walkPoints(false, nil) }

// WalkAndBound is Walk that also works out the bounds Top ranks by, in the same pass when there
// is no hub. (With a hub the bounds of the components in its region need its size, known only
// once the pass reaches it; Top then works them out itself.)
//
// After DominateAndWeigh (without Points), the points are worked out on another core as the
// walks go, a block of components ahead of them: both go down the component numbers, and the
// walks at a component need only the points at and above it. That takes a word per component
// more while it runs, from sc. Otherwise the points and the walks run one after the other, on
// one core.
func (s *Sizes) WalkAndBound(sc *memory.Scratch) {
	if s.DAP == nil {
		s.StartPoints(sc)
	}
	ready := s.ready
	s.ready = nil
	s.walkPoints(true, ready)
}

// StartPoints starts working out the points for WalkAndBound ahead of it, on another core, and
// returns a channel closed once they are known: a caller with other work for that core can
// queue it behind them, where it would otherwise hold up the walks, which wait on the points.
func (s *Sizes) StartPoints(sc *memory.Scratch) <-chan struct{} {
	var done <-chan struct{}
	s.ready, done = s.pointsBeside(sc)
	return done
}

// walkPoints needs no walk for a dominating articulation point: everything it reaches it
// dominates, and everything it dominates it reaches (a path from the root to a component
// dominated by c passes c, and goes on from c), so its dynamic size is the sum of its subtree
// of the DAG's dominator tree. Going down the component numbers, which puts every subtree's
// components before its top (idom[c] < c), one pass sums every subtree: each component adds
// its sum to its immediate dominator's. Only the hub, which is no point, and the root, whose
// dynamic size leaves out the components only its rooting edges reach, are walked.
//
// ready, when not nil, waits until the points at and above a component are known (see
// pointsBeside); with c = 0, until all are.
func (s *Sizes) walkPoints(bound bool, ready func(c int)) {
	count := s.DAG.N()
	s.seen, s.dyn = newBitset(s.mem, count), memory.Make[uint64](s.mem, count)
	if !s.hubPicked {
		s.pickHub(true)
	}
	idom := s.idom
	s.idom = nil
	// Whether the hub is a point decides whether the pass bounds: a hub picked before the points
	// were known (DominateAndWeigh) is dropped if it is one.
	if ready != nil && s.Hub != heapgraph.NoNode {
		ready(int(s.Hub))
	}
	s.dropHubAtPoint()
	// Without a hub every bound is known once the components below are: the same pass works
	// them out. dyn holds, for a component not yet reached, the sum of its subtree so far.
	bound = bound && s.Hub == heapgraph.NoNode
	if bound {
		s.sumAndBound(idom, ready)
	} else {
		known := count // the points at and above known are known
		for c := count - 1; c > 0; c-- {
			if c < known && ready != nil {
				ready(c)
				known = c &^ (pointsBlock - 1)
			}
			sum := s.dyn[c] + s.DAG.SizeOf(uint32(c))
			s.dyn[idom[c]] += sum
			switch {
			case s.DAP.Has(uint32(c)):
				s.dyn[c] = sum
			case uint32(c) == s.Hub:
				s.hubDyn = s.walk(s.Hub)
				s.hubReady = true
			}
		}
	}
	if ready != nil {
		ready(0)
	}
	switch {
	case count == 0:
	case s.DAP.Has(0):
		s.dyn[0] = s.walk(0)
	case bound:
		s.boundAt(0, false)
	}
	s.bounded = bound
}

// sumAndBound is walkPoints' pass without a hub, where a component that is no point is bounded
// by its size plus its successors' bounds and nothing is walked: summing the points' subtrees
// and bounding the rest in one loop over the DAG's arrays, down to component 1 (0 is left to
// the caller). With a call to boundAt per component, the pass took longer.
func (s *Sizes) sumAndBound(idom []uint32, ready func(c int)) {
	off, succ, dyn, dap := s.DAG.Off, s.DAG.Succ, s.dyn, s.DAP
	known := len(dyn) // the points at and above known are known
	for c := len(dyn) - 1; c > 0; c-- {
		if c < known && ready != nil {
			ready(c)
			known = c &^ (pointsBlock - 1)
		}
		own := s.DAG.SizeOf(uint32(c))
		sum := dyn[c] + own
		dyn[idom[c]] += sum
		if dap.Has(uint32(c)) {
			dyn[c] = sum
			continue
		}
		b := own
		for _, d := range succ[off[c]:off[c+1]] {
			b = satAdd(b, dyn[d])
		}
		dyn[c] = b
	}
}

// pickHub picks the component with the most shallow bytes, when it is not the root and not a
// dominating articulation point (which walks shortcut already), and marks what it reaches and
// what reaches it. Without points it picks without asking whether the component is one, for
// a caller working the points out meanwhile, which then calls dropHubAtPoint.
func (s *Sizes) pickHub(points bool) {
	s.hubPicked = true
	n := s.DAG.N()
	best, bestSize := uint32(0), uint64(0)
	// Over the sizes as stored, a word per component in the DAG's units, rather than SizeOf
	// twice per component, which was slower.
	for c, raw := range s.DAG.Size[1:n] {
		size := uint64(raw) << s.DAG.SizeShift
		if raw == heapgraph.BigSize {
			size = s.DAG.SizeOf(uint32(c + 1))
		}
		if size > bestSize || best == 0 {
			best, bestSize = uint32(c+1), size
		}
	}
	if best == 0 || points && s.DAP.Has(best) {
		return
	}
	s.Hub = best
	s.inHub = newBitset(s.mem, n)
	s.inHub.set(best)
	stack := []uint32{best}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, y := range s.DAG.Successors(x) {
			if !s.inHub.has(y) {
				s.inHub.set(y)
				stack = append(stack, y)
			}
		}
	}
	s.reachesHub = newBitset(s.mem, n)
	for c := int(best); c >= 0; c-- { // nothing numbered after the hub reaches it
		r := uint32(c) == best
		for _, d := range s.realSuccessors(uint32(c)) {
			r = r || s.reachesHub.has(d)
		}
		if r {
			s.reachesHub.set(uint32(c))
		}
	}
}

// dropHubAtPoint undoes pickHub's choice when the component picked is a dominating
// articulation point.
func (s *Sizes) dropHubAtPoint() {
	if s.Hub != heapgraph.NoNode && s.DAP.Has(s.Hub) {
		s.Hub, s.inHub, s.reachesHub = heapgraph.NoNode, nil, nil
	}
}

// realSuccessors leaves out the edges that only root the DAG.
func (s *Sizes) realSuccessors(c uint32) []uint32 {
	succ := s.DAG.Successors(c)
	if c == 0 {
		succ = succ[:s.rootEdges]
	}
	return succ
}

// dominatingArticulationPoints is the thesis's Listing 4.4 on a DAG numbered topologically from
// its root. value[c] is the smallest (closest to the root) immediate dominator of any component
// reachable from c, c included. A component with successors is a dominating articulation point
// exactly when that minimum over its successors is c itself: everything it reaches is dominated
// by it. (Were some reachable y not dominated by c, the first such node on a path from c has an
// immediate dominator above c, which reaches c and so has a smaller number.)
func dominatingArticulationPoints(dag *heapgraph.Graph, idom []uint32, sc *memory.Scratch) Set {
	n := dag.N()
	dap := Set(newBitset(sc.Memory(), n))
	value := sc.Uint32s(n)
	defer sc.Release(value)
	markPoints(dag, idom, value, dap, nil)
	return dap
}

// markPoints is dominatingArticulationPoints into dap, with value a word per component, telling
// done, if not nil, each block of components it finishes: the lowest component of the block,
// all above it being done too. A block is whole words of dap, which the walks beside then read
// while no bit of them is written.
func markPoints(dag *heapgraph.Graph, idom, value []uint32, dap Set, done *atomic.Int64) {
	for c := dag.N() - 1; c >= 0; c-- {
		m := heapgraph.NoNode
		for _, d := range dag.Successors(uint32(c)) {
			m = min(m, value[d])
		}
		if m == uint32(c) {
			bitset(dap).set(uint32(c))
		}
		value[c] = min(m, idom[c]) // idom of the root is NoNode, leaving m
		if done != nil && c&(pointsBlock-1) == 0 {
			done.Store(int64(c))
		}
	}
}

// pointsBlock is how many components the points beside the walks tell done at a time (a
// multiple of 64: whole words of the set). A variable, for tests.
var pointsBlock = 4096

// pointsBeside starts working out the points on a goroutine of its own and returns a wait for
// those at and above a component (see walkPoints), which with c = 0 also gives the array back
// to sc once all are known, and a channel closed once they are. With one core the points are
// worked out at once instead.
func (s *Sizes) pointsBeside(sc *memory.Scratch) (ready func(c int), points <-chan struct{}) {
	n := s.DAG.N()
	value := sc.Uint32s(n)
	s.DAP = Set(newBitset(sc.Memory(), n))
	finished := make(chan struct{})
	if runtime.GOMAXPROCS(0) < 2 {
		markPoints(s.DAG, s.idom, value, s.DAP, nil)
		sc.Release(value)
		close(finished)
		return nil, finished
	}
	var done atomic.Int64
	done.Store(int64(n + pointsBlock)) // nothing yet
	dag, idom, dap := s.DAG, s.idom, s.DAP
	go func() {
		defer close(finished)
		markPoints(dag, idom, value, dap, &done)
	}()
	return func(c int) {
		if c == 0 {
			<-finished
			if value != nil {
				sc.Release(value)
				value = nil
			}
			return
		}
		for done.Load() > int64(c) {
			runtime.Gosched()
		}
	}, finished
}

// walk sums the sizes of the components reachable from c, taking a dominating articulation
// point's precomputed size instead of walking past it, and the hub's for the hub's region.
func (s *Sizes) walk(c uint32) uint64 {
	total, _ := s.walkWithin(c, ^uint64(0))
	return total
}

// walkWithin is walk that gives up (ok false) once it has expanded more than budget components.
func (s *Sizes) walkWithin(c uint32, budget uint64) (total uint64, ok bool) {
	start := s.Visited
	defer s.unmark()
	s.seen.set(c)
	s.marked = append(s.marked[:0], c)
	useHub := s.hubReady && !s.inHub.has(c)
	s.boundary = s.boundary[:0]
	stack := append(s.stack[:0], c)
	metHub := false
	for {
		for len(stack) > 0 {
			x := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if useHub && s.inHub.has(x) {
				if x == s.Hub {
					metHub = true
				} else {
					s.boundary = append(s.boundary, x)
				}
				continue
			}
			if x != c && s.DAP.Has(x) {
				// A point outside the region may reach into it, but then it dominates what it
				// reaches there, so the walk meets nothing of the region except through it.
				total += s.dyn[x]
				continue
			}
			if s.Visited++; s.Visited-start > budget {
				s.stack = stack[:0]
				return 0, false
			}
			total += s.DAG.SizeOf(x)
			for _, y := range s.realSuccessors(x) {
				if !s.seen.has(y) {
					s.seen.set(y)
					if len(s.marked) < len(s.seen) {
						s.marked = append(s.marked, y)
					} else {
						s.markedAll = true
					}
					stack = append(stack, y)
				}
			}
		}
		if !useHub || metHub || len(s.boundary) == 0 {
			break
		}
		// The walk entered the region without meeting the hub: count what it reaches there.
		useHub = false
		stack = append(stack, s.boundary...)
	}
	if metHub {
		total += s.hubDyn
	}
	s.stack = stack
	return total, true
}

// Component returns the dynamic size of component c.
func (s *Sizes) Component(c uint32) uint64 {
	switch {
	case s.DAP.Has(c):
		return s.dyn[c]
	case c == s.Hub && s.hubReady:
		return s.hubDyn
	}
	return s.walk(c)
}

// exact reports whether component c's size is known without a walk.
func (s *Sizes) exact(c uint32) bool { return s.DAP.Has(c) || (c == s.Hub && s.hubReady) }

// BatchSize is how many components Batch sizes in one pass: one bit each of a visit mark.
const BatchSize = 32

// Batch computes the dynamic sizes of up to BatchSize components in one pass over the DAG in
// topological order, carrying for each component a bit mask of the batch members that reach it —
// 32 walks for the price of one when the walks are long. The masks take four bytes per component,
// made when Top first batches walks and kept for the next batch. The rules
// of walk apply per bit: a dominating articulation point adds its size and stops the bit, and a
// bit that meets the hub adds the hub's size and is dropped from the hub's region.
func (s *Sizes) Batch(cs []uint32) []uint64 {
	if len(cs) > BatchSize {
		panic(fmt.Sprintf("dynsize: batch of %d components, at most %d", len(cs), BatchSize))
	}
	n := s.DAG.N()
	lo := cs[0]
	for _, c := range cs {
		lo = min(lo, c)
	}
	if s.masks == nil {
		s.masks = memory.Make[uint32](s.mem, n)
	}
	mask := s.masks // all zero between batches
	for i, c := range cs {
		mask[c] |= 1 << i
	}
	sums := make([]uint64, len(cs))
	addTo := func(m uint32, size uint64) {
		for ; m != 0; m &= m - 1 {
			sums[bits.TrailingZeros32(m)] += size
		}
	}
	var hubBits uint32
	for c := lo; c < uint32(n); c++ {
		m := mask[c]
		if s.Hub != heapgraph.NoNode && s.hubReady && s.inHub.has(c) {
			if c == s.Hub {
				hubBits = m
				addTo(m, s.hubDyn)
				continue
			}
			m &^= hubBits
		}
		if m == 0 {
			continue
		}
		s.Visited++
		if s.DAP.Has(c) {
			// A point's own bit gets its size, as does any bit that came from above, which
			// stops here as a walk does.
			addTo(m, s.dyn[c])
			continue
		}
		addTo(m, s.DAG.SizeOf(c))
		for _, d := range s.realSuccessors(c) {
			mask[d] |= m
		}
	}
	clear(mask[lo:])
	return sums
}

// Release gives the memory of the DAG and of the walks' arrays back to the system at once
// (memory.Release), for a caller done with everything but Comp, which stays: the Sizes must
// not be used afterwards but for it.
func (s *Sizes) Release() {
	if s.DAG != nil {
		memory.Release(s.mem, s.DAG.Off, s.DAG.Succ, s.DAG.Size)
	}
	memory.Release(s.mem, s.idom, s.marked, s.masks, s.stack, s.boundary)
	memory.Release(s.mem, s.dyn, s.DAP, s.inHub, s.reachesHub, s.seen)
	*s = Sizes{Comp: s.Comp}
}

// Rep returns the lowest node of component c.
func (s *Sizes) Rep(c uint32) uint32 {
	rep, _ := s.Describe([]uint32{c})
	return rep[0]
}

// Describe returns for each of the components cs its lowest node and its number of nodes, in
// one pass over the nodes: they are asked for a handful of components, once, so they are not
// kept for every component.
func (s *Sizes) Describe(cs []uint32) (rep, members []uint32) { return Describe(s.Comp, cs) }

// Describe is Sizes.Describe over a node → component column, for a caller that has let the
// Sizes go.
func Describe(comp, cs []uint32) (rep, members []uint32) {
	d := NewDescriber(cs)
	d.Add(0, comp)
	return d.Result()
}

// Describer is Describe taking the node → component column a part at a time, in order, for a
// column read back from a file.
type Describer struct {
	at map[uint32][]int
	// A bit per component up to the largest asked for sifts the nodes, so that the map is
	// consulted for the few that belong to one of cs, not for every node of the heap.
	want         bitset
	rep, members []uint32
}

// NewDescriber starts describing the components cs.
func NewDescriber(cs []uint32) *Describer {
	d := &Describer{at: make(map[uint32][]int, len(cs)), rep: make([]uint32, len(cs)), members: make([]uint32, len(cs))}
	for i, c := range cs {
		d.at[c] = append(d.at[c], i)
		d.rep[i] = heapgraph.NoNode
		if int(c>>6) >= len(d.want) {
			d.want = append(d.want, make(bitset, int(c>>6)+1-len(d.want))...)
		}
		d.want.set(c)
	}
	return d
}

// Add takes the components of nodes lo, lo+1, ...: comp, the column's part from lo on, follows
// the parts added before.
func (d *Describer) Add(lo int, comp []uint32) {
	for v, c := range comp {
		if int(c>>6) >= len(d.want) || !d.want.has(c) {
			continue
		}
		for _, i := range d.at[c] {
			if d.members[i] == 0 {
				d.rep[i] = uint32(lo + v)
			}
			d.members[i]++
		}
	}
}

// Merge takes in what o, asked for the same components, was given of the nodes after those d
// was given: two describers can take the two halves of a column at once.
func (d *Describer) Merge(o *Describer) {
	for i, m := range o.members {
		if d.members[i] == 0 {
			d.rep[i] = o.rep[i]
		}
		d.members[i] += m
	}
}

// Result returns for each component asked for its lowest node and its number of nodes.
func (d *Describer) Result() (rep, members []uint32) { return d.rep, d.members }

// unmark clears the marks of the walk that ends.
func (s *Sizes) unmark() {
	if s.markedAll {
		clear(s.seen)
	} else {
		for _, x := range s.marked {
			s.seen.clear(x)
		}
	}
	s.marked, s.markedAll = s.marked[:0], false
}

// Of returns the dynamic size of node v.
func (s *Sizes) Of(v uint32) uint64 { return s.Component(s.Comp[v]) }

// Ranked is one component in a ranking by dynamic size.
type Ranked struct {
	Comp    uint32
	Dynamic uint64
}

// Top returns the k components with the largest dynamic size, largest first, leaving out
// component 0 (the super root, which reaches everything). Components of equal size come in an
// order that depends on the search, not on their numbers.
//
// It never computes every component's size. A component reaches no more than any component
// that reaches it, so a best-first search from the root's successors, keyed by an upper bound
// (the sum of the bounds of a component's successors, capped by its predecessor's exact size),
// can stop once k exact sizes beat every bound still waiting.
func (s *Sizes) Top(k int) []Ranked {
	n := s.DAG.N()
	if k <= 0 || n <= 1 {
		return nil
	}
	bound := func(c uint32) uint64 { return s.dyn[c] } // worked out beside the walks
	if !s.bounded {
		bound = s.upperBounds()
	}
	queued := newBitset(s.mem, n)
	q := &rankHeap{}
	// pushAll queues the components cs not queued yet, each keyed by its bound capped by parent.
	// Many at once (a big array's hundred thousand elements) are appended and the heap made
	// again in one pass, rather than pushed one by one, pushes that were a large share of Top's
	// time. The order items leave the heap in is the same
	// either way: no two items compare equal.
	pushAll := func(cs []uint32, parent func(c uint32) uint64) {
		bulk := len(cs) >= 64 && len(cs) >= q.Len()/8
		q.grow(len(cs))
		for _, c := range cs {
			if queued.has(c) || s.Leave != nil && s.Leave.Has(c) {
				continue
			}
			queued.set(c)
			it := rankItem{key: min(parent(c), bound(c)), comp: c, exact: s.exact(c)}
			if bulk {
				*q = append(*q, it)
			} else {
				q.push(it)
			}
		}
		if bulk {
			q.heapify()
		}
	}
	pushAll(s.DAG.Successors(0), bound)
	// A walk that grows past the budget is abandoned and its component batched with the other
	// inexact components at the top of the queue: a few long walks (the objects near the roots
	// of a big heap all reach most of it) then cost one pass over the DAG together.
	budget := s.WalkBudget
	if budget == 0 {
		budget = max(uint64(n)/64, 10_000)
	}
	var out []Ranked
	for q.Len() > 0 && len(out) < k {
		it := q.pop()
		if it.exact {
			out = append(out, Ranked{Comp: it.comp, Dynamic: it.key})
			// A component can have a hundred thousand successors (a big array's elements).
			pushAll(s.DAG.Successors(it.comp), func(uint32) uint64 { return it.key })
			continue
		}
		if size, ok := s.walkWithin(it.comp, budget); ok {
			q.push(rankItem{key: size, comp: it.comp, exact: true})
			continue
		}
		members := []uint32{it.comp}
		var aside []rankItem
		for q.Len() > 0 && len(members) < BatchSize {
			next := q.pop()
			if next.exact {
				aside = append(aside, next)
			} else {
				members = append(members, next.comp)
			}
		}
		for i, size := range s.Batch(members) {
			aside = append(aside, rankItem{key: size, comp: members[i], exact: true})
		}
		for _, a := range aside {
			q.push(a)
		}
	}
	return out
}

// upperBounds bounds every component's dynamic size from above, bottom-up: a component's own
// size plus its successors' bounds, exact at dominating articulation points and at the hub. A
// component that reaches the hub is bounded by the hub's size plus a bound on what it reaches
// outside the hub's region, so that the many components above a big hub do not all get bounds
// that sum it again and again; for those only the outside part is stored, and bound adds the
// hub's size.
//
// The bounds are stored in dyn, whose entries for components that are not points are otherwise
// unused: on a heap of tens of millions of components that saves a word per component at the
// moment memory peaks. A point's stored value is its exact size, from which its bound follows.
func (s *Sizes) upperBounds() (bound func(c uint32) uint64) {
	hub := s.Hub != heapgraph.NoNode && s.hubReady
	for c := uint32(s.DAG.N()); c > 0; {
		c--
		s.boundAt(c, hub)
	}
	return func(c uint32) uint64 {
		if s.aboveHub(c, hub) {
			return satAdd(s.storedBound(c, hub), s.hubDyn)
		}
		return s.dyn[c]
	}
}

// boundAt stores component c's bound in dyn (see upperBounds), those of the components below
// it being stored already; hub says whether there is a hub, its size known.
func (s *Sizes) boundAt(c uint32, hub bool) {
	switch {
	case s.DAP.Has(c):
		// exact already
	case c == s.Hub && hub:
		s.dyn[c] = s.hubDyn
	case s.aboveHub(c, hub):
		b := s.DAG.SizeOf(c)
		for _, d := range s.DAG.Successors(c) {
			if !s.inHub.has(d) {
				b = satAdd(b, s.storedBound(d, hub)) // for a d above the hub too, its outside part
			}
		}
		s.dyn[c] = b
	default:
		b := s.DAG.SizeOf(c)
		for _, d := range s.DAG.Successors(c) {
			b = satAdd(b, s.storedBound(d, hub)) // no successor is above the hub, or c would be
		}
		if hub && s.inHub.has(c) {
			b = min(b, s.hubDyn)
		}
		s.dyn[c] = b
	}
}

// aboveHub reports whether component c reaches the hub without being it.
func (s *Sizes) aboveHub(c uint32, hub bool) bool { return hub && s.reachesHub.has(c) && c != s.Hub }

// storedBound is c's bound as kept for summing: the outside part for a component above the hub.
func (s *Sizes) storedBound(c uint32, hub bool) uint64 {
	if s.DAP.Has(c) && s.aboveHub(c, hub) {
		return s.dyn[c] - s.hubDyn // a point above the hub holds the hub's whole region
	}
	return s.dyn[c]
}

// satAdd adds without wrapping around: a bound only has to be an upper bound.
func satAdd(a, b uint64) uint64 {
	if a+b < a {
		return ^uint64(0)
	}
	return a + b
}

type rankItem struct {
	key   uint64
	comp  uint32
	exact bool
}

// rankHeap is a binary max-heap of rankItems, written out rather than through container/heap,
// whose interface boxes every item pushed: a hundred thousand allocations for the successors of
// one big array.
type rankHeap []rankItem

func (h rankHeap) Len() int { return len(h) }

// before reports whether a comes out of the heap before b: the larger key first; at equal keys
// an exact size, so a tie never forces an extra walk; then the lower component.
func (a rankItem) before(b rankItem) bool {
	if a.key != b.key {
		return a.key > b.key
	}
	if a.exact != b.exact {
		return a.exact
	}
	return a.comp < b.comp
}

// grow makes room for k more items at once, instead of doubling the heap's array (and leaving
// the old one behind) several times over while they are pushed.
func (h *rankHeap) grow(k int) { *h = slices.Grow(*h, k) }

func (h *rankHeap) push(it rankItem) {
	*h = append(*h, it)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !a[i].before(a[p]) {
			break
		}
		a[i], a[p] = a[p], a[i]
		i = p
	}
}

func (h *rankHeap) pop() rankItem {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	a.down(0)
	*h = a
	return top
}

// heapify makes the heap's array a heap again after items were appended to it as they came.
func (h rankHeap) heapify() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// down moves item i down to its place below.
func (h rankHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].before(h[l]) {
			m = r
		}
		if !h[m].before(h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// Set is a set of components, a bit each.
type Set []uint64

// NewSet returns an empty set for n components.
func NewSet(n int) Set { return make(Set, (n+63)/64) }

// Has reports whether component c is in the set.
func (s Set) Has(c uint32) bool { return bitset(s).has(c) }

// Add puts component c in the set.
func (s Set) Add(c uint32) { bitset(s).set(c) }

// Count returns how many components the set holds.
func (s Set) Count() int {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// bitset is a set of components, a bit each rather than a byte: the hub's two sets are as long as
// the component list and live while memory peaks.
type bitset []uint64

func newBitset(mem *memory.Budget, n int) bitset { return memory.Make[uint64](mem, (n+63)/64) }
func (b bitset) set(c uint32)                    { b[c>>6] |= 1 << (c & 63) }
func (b bitset) has(c uint32) bool               { return b[c>>6]&(1<<(c&63)) != 0 }
func (b bitset) clear(c uint32)                  { b[c>>6] &^= 1 << (c & 63) }
