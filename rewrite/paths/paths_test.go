package paths

import (
	"math/rand"
	"testing"
)

// graphOf builds a graph of n blocks from "from>to" pairs; -1 is X. sites[b] lists block b's
// sites. Edges from X are fixed.
func graphOf(n int, sites map[int][]int, edges ...[2]int) *Graph {
	g := &Graph{N: n, Sites: make([][]int, n)}
	for b, s := range sites {
		g.Sites[b] = s
	}
	x := func(v int) int {
		if v < 0 {
			return n
		}
		return v
	}
	for _, e := range edges {
		g.AddEdge(x(e[0]), x(e[1]), e[0] < 0)
	}
	return g
}

// The fixtures of the unit tests: small CFGs of the shapes the issue names.
func fixtures() map[string]*Graph {
	return map[string]*Graph{
		// if/else joining: 0 → 1|2 → 3 → X
		"diamond": graphOf(4, map[int][]int{0: {0}, 1: {1}, 2: {2}, 3: {3}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{0, 2}, [2]int{1, 3}, [2]int{2, 3}, [2]int{3, -1}),
		// nested loops: 0 → 1 (outer header) → 2 (inner header) → 3 → 2; 2 → 4 → 1; 1 → 5 → X
		"nested": graphOf(6, map[int][]int{0: {0}, 1: {1}, 3: {2}, 4: {3}, 5: {4}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 3}, [2]int{3, 2}, [2]int{2, 4}, [2]int{4, 1}, [2]int{1, 5}, [2]int{5, -1}),
		// switch with three arms and a default, one arm returning early
		"switch": graphOf(6, map[int][]int{1: {0}, 2: {1}, 3: {2}, 5: {3}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{0, 2}, [2]int{0, 3}, [2]int{0, 4}, [2]int{1, 5}, [2]int{2, -1}, [2]int{3, 5}, [2]int{4, 5}, [2]int{5, -1}),
		// try/catch/finally: body 0→1→3, handler 2 (root) → 3 (finally) → X, handler 4 rethrows
		"trycatch": graphOf(5, map[int][]int{0: {0}, 1: {1}, 2: {2}, 3: {3}, 4: {4}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{1, 3}, [2]int{-1, 2}, [2]int{2, 3}, [2]int{3, -1}, [2]int{-1, 4}, [2]int{4, -1}),
		// labelled break/continue: outer 1, inner 2; 3 continues outer (→1), breaks outer (→6) or loops (→2)
		"labels": graphOf(7, map[int][]int{0: {0}, 2: {1}, 3: {2}, 4: {3}, 6: {4}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{1, 2}, [2]int{1, 6}, [2]int{2, 3}, [2]int{3, 1}, [2]int{3, 6}, [2]int{3, 4}, [2]int{4, 2}, [2]int{2, 5}, [2]int{5, 1}, [2]int{6, -1}),
		// an infinite loop left only by a throw
		"forever": graphOf(3, map[int][]int{0: {0}, 1: {1}, 2: {2}},
			[2]int{-1, 0}, [2]int{0, 1}, [2]int{1, 2}, [2]int{2, 1}),
	}
}

func TestPathsCoverEveryBlockAndEdgeOnce(t *testing.T) {
	for name, g := range fixtures() {
		freq := StaticFreq(g, 0, returnsOf(g))
		ps := BuildPaths(g, freq)
		blocks := map[int]int{}
		edges := map[int]int{}
		for _, p := range ps {
			for _, b := range p.Blocks {
				blocks[b]++
			}
			for _, e := range p.Edges {
				edges[e]++
			}
		}
		for b := 0; b < g.N; b++ {
			if blocks[b] != 1 {
				t.Errorf("%s: block %d in %d paths", name, b, blocks[b])
			}
		}
		for e := range g.Edges {
			if edges[e] != 1 {
				t.Errorf("%s: edge %d in %d paths", name, e, edges[e])
			}
		}
		// One counter per path: the paths' counters are the chords of a spanning tree
		// (each path but a dangling one brings one more edge than blocks).
		if c := Place(g, ps, freq); len(c) != len(g.Edges)-g.N {
			t.Errorf("%s: %d counters for %d edges and %d blocks", name, len(c), len(g.Edges), g.N)
		}
	}
}

func returnsOf(g *Graph) []bool {
	r := make([]bool, g.N)
	for _, e := range g.Edges {
		if e.To == g.X() && e.From != g.X() {
			r[e.From] = true
		}
	}
	return r
}

// TestRandomFlowsExact walks random flows through each fixture, some of them ended by an
// exception in a random block, and checks that the counters (with the correction where the
// exception is caught or leaves) add up to exactly the sites executed.
func TestRandomFlowsExact(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for name, g := range fixtures() {
		freq := StaticFreq(g, 0, returnsOf(g))
		plan, err := MakePlan(g, freq, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sem := map[int]Vec{}
		for _, c := range plan.Counters {
			sem[c.Edge] = c.Sem
		}
		for walk := 0; walk < 2000; walk++ {
			ran, counted := Vec{}, Vec{}
			n := g.Edges[g.Out(g.X())[0]].To
			for step := 0; step < 200; step++ {
				if rng.Intn(25) == 0 { // an exception in n, before its sites complete
					if k := plan.Class[n]; k > 0 {
						counted.add(plan.Corrections[k-1], 1)
					}
					roots := g.Out(g.X())
					if len(roots) == 1 || rng.Intn(2) == 0 {
						break // it leaves the method
					}
					n = g.Edges[roots[1+rng.Intn(len(roots)-1)]].To // a handler catches it
					continue
				}
				ran.addSites(g.Sites[n], 1)
				out := g.Out(n)
				e := out[rng.Intn(len(out))]
				if s, ok := sem[e]; ok {
					counted.add(s, 1)
				}
				if n = g.Edges[e].To; n == g.X() {
					break
				}
				if step == 199 { // cut short: leave by an exception here
					if k := plan.Class[n]; k > 0 {
						counted.add(plan.Corrections[k-1], 1)
					}
				}
			}
			if ran.Key() != counted.Key() {
				t.Fatalf("%s walk %d: ran %q, counted %q", name, walk, ran.Key(), counted.Key())
			}
		}
	}
}

// TestHotPathOneIncrement: on the diamond the hot path (the first arm, statically) costs one
// increment and the cold arm's counter corrects it.
func TestHotPathOneIncrement(t *testing.T) {
	g := fixtures()["diamond"]
	freq := []float64{1, 0.9, 0.1, 0.9, 0.1, 1}
	plan, err := MakePlan(g, freq, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Paths) != 2 || len(plan.Counters) != 2 {
		t.Fatalf("paths %v counters %v", plan.Paths, plan.Counters)
	}
	hot := 0
	for _, c := range plan.Counters {
		for _, e := range plan.Paths[0].Edges {
			if c.Edge == e {
				hot++
				if c.Sem.Key() != "0*1 1*1 3*1 " {
					t.Errorf("hot counter stands for %q", c.Sem.Key())
				}
			}
		}
	}
	if hot != 1 {
		t.Errorf("%d counters on the hot path", hot)
	}
}

// TestLoopSplitAtHeader: the nested-loop fixture makes the hot path and two loop paths that
// branch and join at their headers.
func TestLoopSplitAtHeader(t *testing.T) {
	g := fixtures()["nested"]
	ps := BuildPaths(g, StaticFreq(g, 0, returnsOf(g)))
	loops := 0
	for _, p := range ps {
		first, last := g.Edges[p.Edges[0]], g.Edges[p.Edges[len(p.Edges)-1]]
		if first.From == last.To && first.From != g.X() {
			loops++
		}
	}
	if loops != 2 {
		t.Errorf("%d loop paths, want 2: %v", loops, ps)
	}
}

func TestSemanticsRefusesBrokenTree(t *testing.T) {
	g := fixtures()["diamond"]
	// No counter at all: the uncounted edges close a cycle whose sites differ.
	if _, _, err := Semantics(g, nil); err == nil {
		t.Error("a cycle of uncounted edges was accepted")
	}
}

// TestCost: a plan's cost is how often its counters run, per-site counting's how often sites
// complete. On the diamond with one site per block, the hot and the cold path's counters run
// 0.9 + 0.1 times per execution, the four sites three times.
func TestCost(t *testing.T) {
	g := fixtures()["diamond"]
	freq := []float64{1, 0.9, 0.1, 0.9, 0.1, 1}
	plan, err := MakePlan(g, freq, false)
	if err != nil {
		t.Fatal(err)
	}
	if c := plan.Cost(freq); c < 0.999 || c > 1.001 {
		t.Errorf("plan cost %v, want 1", c)
	}
	if c := SiteCost(g, freq); c < 2.999 || c > 3.001 {
		t.Errorf("site cost %v, want 3", c)
	}
}
