package ddmin

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
)

func TestMinimizeFindsTheCulprits(t *testing.T) {
	calls := 0
	got := Minimize(100, func(keep []int) bool {
		calls++
		return slices.Contains(keep, 3) && slices.Contains(keep, 77)
	})
	if !slices.Equal(got, []int{3, 77}) {
		t.Errorf("Minimize = %v, want [3 77]", got)
	}
	if calls > 200 {
		t.Errorf("Minimize took %d tests for 100 items and 2 culprits", calls)
	}
	if got := Minimize(5, func([]int) bool { return true }); len(got) != 0 {
		t.Errorf("a failure that needs no item should shrink to nothing, got %v", got)
	}
}

// randomGraphs yields the deterministic sample the cross-checks run on: small graphs, dense and
// sparse, with cycles, self-loops, duplicate edges and unreachable parts.
func randomGraphs(count int) []*heapgraph.Graph {
	var gs []*heapgraph.Graph
	for seed := int64(1); len(gs) < count; seed++ {
		n := 2 + int(seed%39)
		m := int(seed*7919) % (3 * n)
		if seed%16 == 0 {
			// Now and then a bigger graph, for longer paths and deeper path compression.
			n = 60 + int(seed%90)
			m = n + int(seed%int64(2*n))
		}
		gs = append(gs, graphtest.Random(seed, n, m, 5))
	}
	return gs
}

// TestCrossChecks runs every fast analysis against its slow oracle on random graphs; any
// disagreement is shrunk to a minimal graph and printed, ready to become a regression test.
func TestCrossChecks(t *testing.T) {
	graphs := randomGraphs(4000)
	names := make([]string, 0, len(Checks))
	for name := range Checks {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		check := Checks[name]
		t.Run(name, func(t *testing.T) {
			for i, g := range graphs {
				if err := Run(check, g); err != nil {
					min, minErr := Shrink(g, check)
					t.Fatalf("random graph %d: %v\nshrunk to %v\nwhich fails with: %v", i, err, min, minErr)
				}
			}
		})
	}
}

// TestShrinkPlantedBug proves the tool works: a deliberately wrong "dominator" (a node's first
// predecessor in edge order) disagrees with the oracle, and Shrink must return a graph that still
// fails but passes once any single edge is removed.
func TestShrinkPlantedBug(t *testing.T) {
	firstPred := func(g *heapgraph.Graph) error {
		slow := SlowDominators(g, nil)
		wrong := make([]uint32, g.N())
		for i := range wrong {
			wrong[i] = heapgraph.NoNode
		}
		for v := 0; v < g.N(); v++ {
			if v != 0 && slow[v] == heapgraph.NoNode {
				continue // unreachable predecessors do not count
			}
			for _, w := range g.Successors(uint32(v)) {
				if w != 0 && wrong[w] == heapgraph.NoNode {
					wrong[w] = uint32(v)
				}
			}
		}
		for v := 1; v < g.N(); v++ {
			if slow[v] != heapgraph.NoNode && wrong[v] != slow[v] {
				return fmt.Errorf("idom(%d): planted bug says %d, definition %d", v, wrong[v], slow[v])
			}
		}
		return nil
	}
	var g *heapgraph.Graph
	for _, c := range randomGraphs(200) {
		if len(c.Succ) > 20 && firstPred(c) != nil {
			g = c
			break
		}
	}
	if g == nil {
		t.Fatal("no random graph exposes the planted bug; the sample is too small")
	}
	min, err := Shrink(g, firstPred)
	if err == nil {
		t.Fatalf("shrunk graph no longer fails: %v", min)
	}
	if len(min.Succ) >= len(g.Succ) {
		t.Errorf("did not shrink: %d edges to %d (%v)", len(g.Succ), len(min.Succ), min)
	}
	from, to := min.Edges()
	for drop := range from {
		b := heapgraph.NewBuilder(min.N())
		for i := range from {
			if i != drop {
				b.AddEdge(from[i], to[i])
			}
		}
		h, _ := b.Build()
		if firstPred(h) != nil {
			t.Errorf("not 1-minimal: still fails without edge %d->%d", from[drop], to[drop])
		}
	}
	t.Logf("planted bug shrunk from %d to %d edges: %v (%v)", len(g.Succ), len(min.Succ), min, err)
}

// TestByClassWideRoots cross-checks retained size by class where the split into tasks hands out
// children in ranges: a super root with more GC roots than one range holds, each the root of a
// tree of its own with a few edges inside it, some retaining more than the share that splits; one
// holds a chain of one class.
func TestByClassWideRoots(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		r := rand.New(rand.NewSource(seed))
		const roots, chain, n = 600, 300, 1500
		b := heapgraph.NewBuilder(n)
		tree := make([]int, n)
		members := make([][]uint32, roots)
		add := func(parent, v int) {
			tree[v] = tree[parent]
			members[tree[v]] = append(members[tree[v]], uint32(v))
			b.AddEdge(uint32(parent), uint32(v))
		}
		for v := 1; v < roots; v++ {
			tree[v] = v
			members[v] = []uint32{uint32(v)}
			b.AddEdge(0, uint32(v))
			b.SetSize(uint32(v), 1)
		}
		for v := roots; v < roots+chain; v++ {
			parent := v - 1
			if v == roots {
				parent = 1
			}
			add(parent, v)
			b.SetSize(uint32(v), 3)
		}
		for v := roots + chain; v < n; v++ {
			// Most trees stay small; a few of the first roots grow large.
			p := 1 + r.Intn(v-1)
			if r.Intn(4) > 0 {
				p = 1 + r.Intn(8)
			}
			add(p, v)
			b.SetSize(uint32(v), uint64(1+r.Intn(7)))
		}
		for range n / 2 {
			m := members[1+r.Intn(roots-1)]
			b.AddEdge(m[r.Intn(len(m))], m[r.Intn(len(m))])
		}
		g, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckByClass(g); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
