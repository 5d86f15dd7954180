package leaks

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"

	"golang.org/x/sync/errgroup"

	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// DynamicSizes is the last step: the dynamic sizes of the suspects and the top objects, and the
// top components by dynamic size.
//
//  1. The strongly connected components, unless they were found beside the depth-first search,
//     and the condensed DAG (condense); the edges go out, those no one wants back for good.
//  2. The DAG's dominator tree, and the components' sizes on the other core when the memory
//     allows (dominateAndWeigh).
//  3. The walks that size the dominating articulation points, and the bounds the ranking takes,
//     while the node → component column goes out on the other core (walk).
//  4. The sizes of the objects reported, the ranking and its components' members (rank).
func (a *Analysis) DynamicSizes() error {
	if err := a.begin("dynamic sizes", "strongly connected components"); err != nil {
		return err
	}
	if err := a.condense(); err != nil {
		return err
	}
	points, weighed, err := a.dominateAndWeigh()
	if err != nil {
		return err
	}
	if err := a.freeing("dynamic sizes", "dynamic sizes"); err != nil {
		return err
	}
	if !weighed {
		if err := a.cols.In(colSizes); err != nil {
			return err
		}
		a.dyn.Weigh(a.g, a.sc)
	}
	comps, err := a.walk(points, weighed)
	if err != nil {
		return err
	}
	if comps != nil {
		defer comps.Close()
	}
	return a.rank(comps)
}

// condense finds the components, if the search beside the depth-first search did not, and
// condenses them; the edges are read no more.
func (a *Analysis) condense() error {
	b := a.beside
	skip, found := b.skip, b.found
	a.beside = nil
	if found == nil {
		skip = dynamicSkip(a.opt.Memory, a.g, a.in.Weak, a.in.ClassObjects)
		found = dynsize.Search(a.g, skip, a.sc)
	}
	a.dyn = dynsize.CondensedFrom(a.g, skip, found, a.sc)
	a.apart = leaveApart(a.dyn, a.in.Apart)
	a.rep.Stats.DAGEdges = len(a.dyn.DAG.Succ)
	// The component DAG is all the rest needs, but for the shallow sizes. The edges that the
	// caller does not want back are read no more: their files go now, and the page cache that
	// held them goes to the arrays that follow, in one piece.
	if err := a.cols.Out(edgeColumns...); err != nil {
		return err
	}
	a.drop(Columns{Succ: a.opt.Leave.Succ, Weak: a.opt.Leave.Weak})
	return nil
}

// dominateAndWeigh works out the DAG's dominator tree. The components' sizes are summed, and the
// hub chosen, on the other core meanwhile, if the memory allows: the shallow sizes back in, a
// word per node, and the components' sizes, a word per component, beside that step's four
// arrays. The points are then worked out on the core the tree leaves free, through the walks of
// the next step, which wait on them, if a word per component more fits beside those: on top of
// what the walks take, their sizes and marks, whose memory the shallow sizes and the component
// column give back. It reports whether the sizes were summed, and the channel closed once the
// points are known when they are worked out beside.
func (a *Analysis) dominateAndWeigh() (points <-chan struct{}, weighed bool, err error) {
	dyn, n, limit := a.dyn, int64(a.n), a.opt.MemoryLimit
	count := dyn.DAG.N()
	if runtime.GOMAXPROCS(0) >= 2 && (!a.limited || beside(resident(), 4*n+5*int64(count), limit)) {
		if err := a.cols.In(colSizes); err != nil {
			return nil, false, err
		}
		pointsBeside := !a.limited || beside(resident(), 4*n+9*int64(count), limit)
		points = dyn.DominateAndWeigh(a.g, a.sc, memory.Make[uint32](a.opt.Memory, count), pointsBeside)
		weighed = true
	} else {
		dyn.Dominate(a.sc)
	}
	// The arrays of the component DAG's dominator tree that the sizes will not take go back to
	// the system as the next step starts, instead of staying resident through it (the
	// immediate dominators stay, with dyn, until the points' sizes are summed).
	if weighed {
		a.sc.Trim(0)
	} else {
		a.sc.Trim(dynsize.ComputeArrays)
	}
	return points, weighed, nil
}

// walk sizes the points and bounds the rest. The walks read the component DAG alone: the
// shallow sizes and, when the store spills, the node → component column wait outside
// meanwhile; the column goes out on the other core while the walks, on one, sum the points'
// sizes (after the points, which the walks wait on), and is returned, to be read back a node at
// a time for the few objects ranked.
func (a *Analysis) walk(points <-chan struct{}, weighed bool) (*memory.Spilled[uint32], error) {
	dyn := a.dyn
	if err := a.cols.Out(colSizes); err != nil {
		return nil, err
	}
	a.drop(Columns{Sizes: a.opt.Leave.Sizes})
	if weighed && points == nil {
		dyn.Points(a.sc)
	}
	var comps *memory.Spilled[uint32]
	spilled := make(chan struct{})
	if a.cols.Spills() {
		comp := dyn.Comp
		dyn.Comp = nil
		go func() {
			defer close(spilled)
			if points != nil {
				<-points
			}
			comps = memory.Spill(a.opt.Memory, comp)
		}()
	} else {
		close(spilled)
	}
	dyn.WalkAndBound(a.sc)
	<-spilled
	return comps, nil
}

// rank fills in the dynamic sizes of the objects reported and ranks the components, reading
// the node → component column from comps when it went out.
func (a *Analysis) rank(comps *memory.Spilled[uint32]) error {
	dyn, rep := a.dyn, a.rep
	compOf := func(v uint32) (uint32, error) { return dyn.Comp[v], nil }
	if comps != nil {
		compOf = func(v uint32) (uint32, error) { return comps.At(int(v)) }
	}
	size := func(v uint32, to *uint64) error {
		c, err := compOf(v)
		if err != nil {
			return fmt.Errorf("leaks: the component of node %d: %w", v, err)
		}
		*to = dyn.Component(c)
		return nil
	}
	for i := range rep.TopRetained {
		if err := size(rep.TopRetained[i].Node, &rep.TopRetained[i].Dynamic); err != nil {
			return err
		}
	}
	for i := range rep.Suspects {
		s := &rep.Suspects[i]
		if err := errors.Join(size(s.Node, &s.Dynamic), size(s.Accumulation.Node, &s.Accumulation.Dynamic)); err != nil {
			return err
		}
	}
	top := dyn.Top(a.opt.Top)
	st := &rep.Stats
	st.Components = dyn.DAG.N() - a.apart
	st.BigComponents, st.LargestComp = dyn.BigComponents, dyn.LargestComp
	st.DominatingAPs = dyn.DAP.Count()
	st.DynamicVisited = dyn.Visited
	ranked := make([]uint32, len(top))
	for i, r := range top {
		ranked[i] = r.Comp
	}
	reps, members, err := a.describe(ranked, comps)
	if err != nil {
		return err
	}
	for i, r := range top {
		rep.TopDynamic = append(rep.TopDynamic, Component{Node: reps[i], Members: members[i], Dynamic: r.Dynamic})
	}
	return nil
}

// describe names the ranked components by their lowest node and counts their members. With the
// column out, nothing reads the DAG or the work arrays now: their memory goes back to the
// system on the other core, without a collection, while the column is read back a part at a
// time, its two halves on two cores.
func (a *Analysis) describe(ranked []uint32, comps *memory.Spilled[uint32]) (reps, members []uint32, err error) {
	if comps == nil {
		reps, members = dynsize.Describe(a.dyn.Comp, ranked)
		return reps, members, nil
	}
	released := make(chan struct{})
	go func() {
		defer close(released)
		a.dyn.Release()
		a.sc.Free()
	}()
	d, d2 := dynsize.NewDescriber(ranked), dynsize.NewDescriber(ranked)
	half := comps.Len() / 2
	var halves errgroup.Group
	halves.Go(func() error { return comps.ScanRange(make([]uint32, 16<<10), 0, half, d.Add) })
	halves.Go(func() error { return comps.ScanRange(make([]uint32, 16<<10), half, comps.Len(), d2.Add) })
	err = halves.Wait()
	<-released
	if err != nil {
		return nil, nil, fmt.Errorf("leaks: the component of each node: %w", err)
	}
	d.Merge(d2)
	reps, members = d.Result()
	return reps, members, nil
}

// leaveApart has dynamic sizes leave the components of the nodes in apart out of their ranking,
// and returns how many there are: one node each (see Input.Apart).
func leaveApart(dyn *dynsize.Sizes, apart heapgraph.EdgeSet) int {
	if apart == nil {
		return 0
	}
	n := 0
	dyn.Leave = dynsize.NewSet(dyn.DAG.N())
	for w, word := range apart {
		for ; word != 0; word &= word - 1 {
			v := w<<6 | bits.TrailingZeros64(word)
			if v < len(dyn.Comp) {
				dyn.Leave.Add(dyn.Comp[v])
				n++
			}
		}
	}
	return n
}

// dynamicSkip is the set of edges dynamic sizes leave out: weak referents and references into
// class objects.
func dynamicSkip(mem *memory.Budget, g *heapgraph.Graph, weak, classObjects heapgraph.EdgeSet) heapgraph.EdgeSet {
	skip := heapgraph.EdgeSet(memory.Make[uint64](mem, (len(g.Succ)+63)/64))
	copy(skip, weak)
	if len(classObjects) > 0 {
		for e, w := range g.Succ[g.Off[1]:] {
			if w>>6 < uint32(len(classObjects)) && classObjects.Has(w) {
				skip.Add(g.Off[1] + uint32(e))
			}
		}
	}
	return skip
}
