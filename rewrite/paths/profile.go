package paths

import (
	"fmt"
	"sort"
	"sync"
)

// Profiles (step 2 from observation): a profiling run (--counters edges) counts every chord of
// the spanning tree Place chose, empty semantics included, and its snapshot lists those counts
// per method. Chord counts determine every edge's count by flow conservation (Knuth's optimal
// edge profiling): Observed derives the tree edges. A later rewrite (--profile) plans a method
// found in the profile from these frequencies instead of StaticFreq.

// EdgeKey names an edge across rewrites by where its blocks start in the original code: the
// bytecode offset of each block's first original instruction, -1 for the virtual node X.
type EdgeKey struct{ From, To int }

// MethodKey names a profiled method: its class (Java name), name and descriptor, and a hash of
// its original code, so that a method whose code changed is never matched.
type MethodKey struct{ Class, Method, Hash string }

// Profile is the edge counts of profiling runs, per method. It is safe for concurrent use: the
// count pass plans classes in parallel, and the profile notes which entries it matched.
type Profile struct {
	methods map[MethodKey]map[EdgeKey]int64

	mu       sync.Mutex
	used     map[MethodKey]bool
	misfit   map[MethodKey]string // matched by key, but its edges do not fit the graph: why
	searched map[[2]string]bool   // class and method looked up, whatever the hash
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{methods: map[MethodKey]map[EdgeKey]int64{}, used: map[MethodKey]bool{}, misfit: map[MethodKey]string{},
		searched: map[[2]string]bool{}}
}

// Add adds n to the count of edge e of method m: the lines of several snapshots add up.
func (p *Profile) Add(m MethodKey, e EdgeKey, n int64) {
	es := p.methods[m]
	if es == nil {
		es = map[EdgeKey]int64{}
		p.methods[m] = es
	}
	es[e] += n
}

// Len returns the number of methods the profile holds.
func (p *Profile) Len() int { return len(p.methods) }

// Observed returns the frequencies of g's edges from the profile's entry for m, keys[e] naming
// edge e; ok is false when the profile has no such entry. An entry whose edges do not fit g (an
// edge g lacks, or the unprofiled edges are no spanning tree) gives an error, and is noted as
// a misfit for Report.
func (p *Profile) Observed(m MethodKey, g *Graph, keys []EdgeKey) (freq []float64, ok bool, err error) {
	p.mu.Lock()
	p.searched[[2]string{m.Class, m.Method}] = true
	p.mu.Unlock()
	counts, ok := p.methods[m]
	if !ok {
		return nil, false, nil
	}
	freq, err = fitProfile(g, keys, counts)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.misfit[m] = err.Error()
		return nil, true, err
	}
	p.used[m] = true
	return freq, true, nil
}

// fitProfile maps counts onto g's edges and derives the others (Observed).
func fitProfile(g *Graph, keys []EdgeKey, counts map[EdgeKey]int64) ([]float64, error) {
	index := make(map[EdgeKey]int, len(keys))
	for e, k := range keys {
		if _, dup := index[k]; dup {
			return nil, fmt.Errorf("two edges %d>%d", k.From, k.To)
		}
		index[k] = e
	}
	known := make(map[int]float64, len(counts))
	for k, n := range counts {
		e, ok := index[k]
		if !ok {
			return nil, fmt.Errorf("profiled edge %d>%d is not in the graph", k.From, k.To)
		}
		known[e] = float64(n)
	}
	return ObservedFlow(g, known)
}

// ProfileUse says what a rewrite made of a profile: the entries it planned from, those whose
// edges did not fit the method's graph (with one reason), and those it matched no method with,
// apart by whether a method of that class, name and descriptor was planned with other code.
type ProfileUse struct {
	Planned, Misfit, Changed, Absent int
	MisfitExample, ChangedExample    string
	AbsentExample                    string
}

// Use reports what the rewrites so far made of the profile.
func (p *Profile) Use() ProfileUse {
	p.mu.Lock()
	defer p.mu.Unlock()
	var u ProfileUse
	keys := make([]MethodKey, 0, len(p.methods))
	for k := range p.methods {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	for _, k := range keys {
		switch {
		case p.used[k]:
			u.Planned++
		case p.misfit[k] != "":
			u.Misfit++
			if u.MisfitExample == "" {
				u.MisfitExample = k.String() + ": " + p.misfit[k]
			}
		case p.searched[[2]string{k.Class, k.Method}]:
			u.Changed++
			if u.ChangedExample == "" {
				u.ChangedExample = k.Class + "." + k.Method
			}
		default:
			u.Absent++
			if u.AbsentExample == "" {
				u.AbsentExample = k.Class + "." + k.Method
			}
		}
	}
	return u
}

// String names the method as messages do: "a.B.m(I)V#hash".
func (k MethodKey) String() string { return k.Class + "." + k.Method + "#" + k.Hash }

// ObservedFlow returns every edge's frequency of g given the counts of the known edges (edge
// index → count), which must be the chords of a spanning tree of g's nodes, X included: the
// other edges, the tree, follow by flow conservation.
//
//  1. The unknown edges are checked to be a spanning tree: g.N of them, no cycle (union-find).
//  2. The tree is rooted at X; each node's net known flow is what its known edges take out of
//     it less what they bring in.
//  3. Leaves first, the net flow of each node's subtree is its own plus its children's. The
//     tree edge between a node and its parent is the only unknown edge crossing the cut around
//     the subtree, so it carries the subtree's net flow: into the subtree when it leads there,
//     out of it otherwise.
//
// An exception that leaves a block (to a handler, or out of the method) takes flow out of the
// graph where no edge counts it, so conservation fails there: the tree edge entering that
// block's subtree comes out lower, one leaving it higher, by the flow that left. A negative
// result is such a shortfall and is clamped to 0. The frequencies only steer the planning;
// the counts stay exact whatever they are.
func ObservedFlow(g *Graph, known map[int]float64) ([]float64, error) {
	if err := g.check(); err != nil {
		return nil, err
	}
	g.index()
	isKnown := make([]bool, len(g.Edges))
	for e := range known {
		if e < 0 || e >= len(g.Edges) {
			return nil, fmt.Errorf("paths: known edge %d out of range", e)
		}
		isKnown[e] = true
	}
	// Step 1.
	uf := newUnionFind(g.N + 1)
	tree := 0
	for e, k := range isKnown {
		if k {
			continue
		}
		if !uf.union(g.Edges[e].From, g.Edges[e].To) {
			return nil, fmt.Errorf("paths: the unprofiled edges close a cycle at %d→%d", g.Edges[e].From, g.Edges[e].To)
		}
		tree++
	}
	if tree != g.N {
		return nil, fmt.Errorf("paths: %d unprofiled edges do not span %d nodes", tree, g.N+1)
	}
	// Step 2.
	freq := make([]float64, len(g.Edges))
	net := make([]float64, g.N+1)
	for e, n := range known {
		freq[e] = n
		net[g.Edges[e].From] += n
		net[g.Edges[e].To] -= n
	}
	order, parent := treeOrder(g, isKnown)
	// Step 3.
	for i := len(order) - 1; i > 0; i-- {
		n := order[i]
		e := parent[n]
		f := net[n]
		if g.Edges[e].From == n {
			f = -f
		}
		freq[e] = max(f, 0)
		other := g.Edges[e].From + g.Edges[e].To - n
		net[other] += net[n]
	}
	return freq, nil
}

// treeOrder returns the nodes in breadth-first order from X over the edges not known, and the
// tree edge to each node's parent.
func treeOrder(g *Graph, known []bool) (order, parent []int) {
	parent = make([]int, g.N+1)
	seen := make([]bool, g.N+1)
	order = []int{g.X()}
	seen[g.X()] = true
	for i := 0; i < len(order); i++ {
		n := order[i]
		visit := func(e, other int) {
			if !known[e] && !seen[other] {
				seen[other] = true
				parent[other] = e
				order = append(order, other)
			}
		}
		for _, e := range g.outOf(n) {
			visit(e, g.Edges[e].To)
		}
		for _, e := range g.inOf(n) {
			visit(e, g.Edges[e].From)
		}
	}
	return order, parent
}
