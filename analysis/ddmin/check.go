package ddmin

import (
	"fmt"
	"slices"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// A Check runs one fast analysis on a graph and compares it with its oracle, returning a
// description of the first disagreement or nil.
type Check func(g *heapgraph.Graph) error

// Checks are the cross-checks of every fast analysis against its slow oracle. classOf, used by
// the by-class check, gives node v the class v mod 3, so that instances of one class dominate
// each other often on small graphs.
var Checks = map[string]Check{
	"dominators":        CheckDominators,
	"retained":          CheckRetained,
	"retained by class": CheckByClass,
	"retained by label": CheckByLabel,
	"components":        CheckComponents,
	"dynamic size":      CheckDynamic,
	"top dynamic":       CheckTopDynamic,
}

// CheckDominators compares the SEMI-NCA dominator tree with the data-flow definition.
func CheckDominators(g *heapgraph.Graph) error {
	fast := dominators.Compute(g, nil).Idom
	slow := SlowDominators(g, nil)
	for v := range slow {
		if fast[v] != slow[v] {
			return fmt.Errorf("idom(%d) = %d, by definition %d", v, int32(fast[v]), int32(slow[v]))
		}
	}
	return nil
}

// CheckDAGDominators compares the forward-only dominators of the component DAG with the
// data-flow definition on the same DAG.
func CheckDAGDominators(g *heapgraph.Graph) error {
	comp, count := dynsize.Components(g, nil)
	dag, _ := dynsize.Condense(g, nil, comp, count)
	fast, err := dominators.DAG(dag)
	if err != nil {
		return err
	}
	slow := SlowDominators(dag, nil)
	for v := range slow {
		if fast[v] != slow[v] {
			return fmt.Errorf("component DAG %v: idom(%d) = %d, by definition %d", dag, v, int32(fast[v]), int32(slow[v]))
		}
	}
	return nil
}

// CheckRetained compares retained sizes from the dominator tree with removing each node and
// weighing what becomes unreachable.
func CheckRetained(g *heapgraph.Graph) error {
	ret := dominators.Compute(g, nil).Retained(g)
	for v := 1; v < g.N(); v++ {
		if slow := SlowRetained(g, nil, uint32(v)); ret[v] != slow {
			return fmt.Errorf("retained(%d) = %d, by removal %d", v, ret[v], slow)
		}
	}
	return nil
}

// CheckByClass compares retained sizes by class with the size of the union of each class's
// instances' retained sets, found by removal, and the instances and their shallow bytes with a
// count over the nodes node 0 reaches.
func CheckByClass(g *heapgraph.Graph) error {
	const classes = 3
	classOf := make([]uint32, g.N())
	classOf[0] = heapgraph.NoNode
	for v := 1; v < g.N(); v++ {
		classOf[v] = uint32(v % classes)
	}
	t := dominators.Compute(g, nil)
	fast := t.ByClass(g, t.Retained(g), classOf, classes)
	var instances, shallow [classes]uint64
	for v, ok := range reach(g, nil, 0, heapgraph.NoNode) {
		if ok && v != 0 {
			instances[classOf[v]]++
			shallow[classOf[v]] += g.SizeOf(uint32(v))
		}
	}
	for c := uint32(0); c < classes; c++ {
		if fast[c].Instances != instances[c] || fast[c].Shallow != shallow[c] {
			return fmt.Errorf("class %d has %d instances of %d bytes, %d of %d reachable", c, fast[c].Instances, fast[c].Shallow, instances[c], shallow[c])
		}
		var members []uint32
		for v := 1; v < g.N(); v++ {
			if classOf[v] == c {
				members = append(members, uint32(v))
			}
		}
		if slow, _ := SlowUnionRetained(g, nil, members); fast[c].Retained != slow {
			return fmt.Errorf("class %d retains %d, union of instances' retained sets %d", c, fast[c].Retained, slow)
		}
	}
	return nil
}

// CheckByLabel compares retained sizes by label, for the whole tree and below the reachable node
// that retains most after node 0, with the size of the union of each group's members' retained sets,
// found by removal, and the members and their shallow bytes with a count of those node 0 reaches.
// Node v has label v mod 3, and also label 0 when v mod 5 is 4; dimension 0 takes labels for
// groups, dimension 1 puts labels 0 and 2 in one group, so nodes meet a group through two labels.
func CheckByLabel(g *heapgraph.Graph) error {
	l := &dominators.Labels{Rate: 1, Count: []int{3, 2}, Groups: [][]uint32{{0, 1, 2}, {0, 1, 0}}, Off: []uint32{0}}
	labels := func(v uint32) []uint32 {
		if v%5 == 4 && v%3 != 0 {
			return []uint32{v % 3, 0}
		}
		return []uint32{v % 3}
	}
	for v := uint32(1); v < uint32(g.N()); v++ {
		l.Nodes = append(l.Nodes, v)
		l.Keys = append(l.Keys, labels(v)...)
		l.Off = append(l.Off, uint32(len(l.Keys)))
	}
	t := dominators.Compute(g, nil)
	ret := t.Retained(g)
	before := reach(g, nil, 0, heapgraph.NoNode)
	roots := []uint32{0}
	top := uint32(0)
	for v := 1; v < g.N(); v++ {
		if before[v] && (top == 0 || ret[v] > ret[top]) {
			top = uint32(v)
		}
	}
	if top != 0 {
		roots = append(roots, top)
	}
	for _, root := range roots {
		below := func(v uint32) bool {
			return before[v] && (root == 0 || slices.Contains(SlowRetainedSet(g, nil, root), v))
		}
		fast := t.ByLabel(g, ret, l, root, nil)
		for d, groups := range fast {
			for k, o := range groups {
				var members []uint32
				var shallow uint64
				for v := uint32(1); v < uint32(g.N()); v++ {
					in := slices.ContainsFunc(labels(v), func(key uint32) bool { return l.Groups[d][key] == uint32(k) })
					if in && below(v) {
						members = append(members, v)
						shallow += g.SizeOf(v)
					}
				}
				slow, _ := SlowUnionRetained(g, nil, members)
				if o.Retained != slow || o.AtLeast != slow || o.Members != uint64(len(members)) || o.Shallow != shallow {
					return fmt.Errorf("below %d, dimension %d, group %d: %+v; by removal %d members of %d bytes retaining %d", root, d, k, o, len(members), shallow, slow)
				}
			}
		}
	}
	return nil
}

// CheckComponents compares strongly connected components with mutual reachability and their
// numbering with topological order (node 0's component first).
func CheckComponents(g *heapgraph.Graph) error {
	comp, count := dynsize.Components(g, nil)
	n := g.N()
	r := make([][]bool, n)
	for v := range r {
		r[v] = reach(g, nil, uint32(v), heapgraph.NoNode)
	}
	if comp[0] != 0 {
		return fmt.Errorf("node 0 is in component %d, want 0", comp[0])
	}
	for a := 0; a < n; a++ {
		if int(comp[a]) >= count {
			return fmt.Errorf("node %d: component %d of only %d", a, comp[a], count)
		}
		for b := 0; b < n; b++ {
			same := r[a][b] && r[b][a]
			if (comp[a] == comp[b]) != same {
				return fmt.Errorf("nodes %d and %d: same component is %v, mutually reachable is %v", a, b, comp[a] == comp[b], same)
			}
			if r[a][b] && !same && comp[a] > comp[b] {
				return fmt.Errorf("node %d (component %d) reaches node %d (component %d): order not topological", a, comp[a], b, comp[b])
			}
		}
	}
	return nil
}

// CheckDynamic compares dynamic sizes through dominating articulation points with plain
// reachability from each node.
func CheckDynamic(g *heapgraph.Graph) error {
	s := dynsize.New(g, nil)
	for v := 0; v < g.N(); v++ {
		fast := s.Of(uint32(v))
		if slow := SlowDynamic(g, nil, uint32(v)); fast != slow {
			return fmt.Errorf("dynamic size of %d = %d, by reachability %d", v, fast, slow)
		}
	}
	return nil
}

// CheckBatch compares dynamic sizes computed a batch at a time, by reach masks, with plain
// reachability from each component's representative.
func CheckBatch(g *heapgraph.Graph) error {
	s := dynsize.New(g, nil)
	n := s.DAG.N()
	for lo := 0; lo < n; lo += dynsize.BatchSize {
		var cs []uint32
		for c := lo; c < min(lo+dynsize.BatchSize, n); c++ {
			cs = append(cs, uint32(c))
		}
		for i, size := range s.Batch(cs) {
			if slow := SlowDynamic(g, nil, s.Rep(cs[i])); size != slow {
				return fmt.Errorf("batched dynamic size of component %d (node %d) = %d, by reachability %d", cs[i], s.Rep(cs[i]), size, slow)
			}
		}
	}
	return nil
}

// CheckTopDynamic compares the best-first top-k by dynamic size with sorting every component's
// size found by reachability.
func CheckTopDynamic(g *heapgraph.Graph) error {
	s := dynsize.New(g, nil)
	// And with the bounds worked out beside the walks, as the analysis does: once with the
	// points known before the walks, once with them worked out beside (DominateAndWeigh).
	known := dynsize.Prepare(g, nil, nil)
	known.Weigh(g, nil)
	known.WalkAndBound(nil)
	beside := dynsize.Condensed(g, nil, nil)
	beside.DominateAndWeigh(g, nil, make([]uint32, beside.DAG.N()), true)
	beside.WalkAndBound(nil)
	var all []uint64
	for c := 1; c < s.DAG.N(); c++ {
		all = append(all, SlowDynamic(g, nil, s.Rep(uint32(c))))
	}
	slices.Sort(all)
	slices.Reverse(all)
	for _, k := range []int{1, 3, len(all) + 1} {
		// Once with walks, once with every walk over budget so that Top batches them.
		s.WalkBudget = 0
		top := s.Top(k)
		s.WalkBudget = 1
		batched := s.Top(k)
		if len(batched) != len(top) {
			return fmt.Errorf("top %d by walks %v, batched %v", k, top, batched)
		}
		for i := range top {
			// Equal sizes may come in either order.
			if top[i].Dynamic != batched[i].Dynamic || SlowDynamic(g, nil, s.Rep(batched[i].Comp)) != batched[i].Dynamic {
				return fmt.Errorf("top %d by walks %v, batched %v", k, top, batched)
			}
		}
		for _, b := range []*dynsize.Sizes{known, beside} {
			if b := b.Top(k); len(b) != len(top) {
				return fmt.Errorf("top %d %v, with the bounds worked out beside the walks %v", k, top, b)
			} else {
				for i := range top {
					if b[i].Dynamic != top[i].Dynamic {
						return fmt.Errorf("top %d %v, with the bounds worked out beside the walks %v", k, top, b)
					}
				}
			}
		}
		if known.DAP.Count() != beside.DAP.Count() || known.Hub != beside.Hub {
			return fmt.Errorf("points beside the walks: %d points, hub %d; worked out before: %d, hub %d", beside.DAP.Count(), beside.Hub, known.DAP.Count(), known.Hub)
		}
		want := all[:min(k, len(all))]
		if len(top) != len(want) {
			return fmt.Errorf("top %d has %d entries, want %d", k, len(top), len(want))
		}
		for i, r := range top {
			if slow := SlowDynamic(g, nil, s.Rep(r.Comp)); r.Dynamic != slow || r.Dynamic != want[i] {
				return fmt.Errorf("top %d, place %d: component %d with %d (by reachability %d), want size %d", k, i, r.Comp, r.Dynamic, slow, want[i])
			}
		}
	}
	return nil
}

// Run runs check on g, turning a panic of the analysis (an index out of range, say) into a
// disagreement, so that crashes are shrunk like wrong answers.
func Run(check Check, g *heapgraph.Graph) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return check(g)
}

// Shrink removes edges from g while check still fails, returning a 1-minimal failing graph (all
// nodes and sizes kept) and its failure. check must fail on g.
func Shrink(g *heapgraph.Graph, check Check) (*heapgraph.Graph, error) {
	from, to := g.Edges()
	sub := func(keep []int) *heapgraph.Graph {
		b := heapgraph.NewBuilder(g.N())
		for v := range g.Size {
			b.SetSize(uint32(v), g.SizeOf(uint32(v)))
		}
		for _, i := range keep {
			b.AddEdge(from[i], to[i])
		}
		h, err := b.Build()
		if err != nil {
			panic(err) // a subset of a valid graph's edges is valid
		}
		return h
	}
	keep := Minimize(len(from), func(keep []int) bool { return Run(check, sub(keep)) != nil })
	h := sub(keep)
	return h, Run(check, h)
}
