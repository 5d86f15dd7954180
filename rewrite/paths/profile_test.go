package paths

import (
	"math/rand"
	"strings"
	"testing"
)

// walkCounts runs walks random executions of g from X (through the entry, or a handler now
// and then) until they reach X, and returns how often each edge was taken. Walks of a graph
// with no way out stop after a bound and are dropped: they would break flow conservation.
func walkCounts(g *Graph, rng *rand.Rand, walks int) []float64 {
	count := make([]float64, len(g.Edges))
	for w := 0; w < walks; w++ {
		taken := map[int]int{}
		roots := g.Out(g.X())
		e := roots[0]
		if len(roots) > 1 && rng.Intn(4) == 0 {
			e = roots[1+rng.Intn(len(roots)-1)]
		}
		for step := 0; step < 400; step++ {
			taken[e]++
			n := g.Edges[e].To
			if n == g.X() {
				for k, v := range taken {
					count[k] += float64(v)
				}
				break
			}
			out := g.Out(n)
			e = out[rng.Intn(len(out))]
		}
	}
	return count
}

// TestObservedFlowRecoversEveryEdge: on each fixture with a way out, the counts of the chords a
// profiling run keeps (MakePlan with every chord) give back every edge's count exactly.
func TestObservedFlowRecoversEveryEdge(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for name, g := range fixtures() {
		if name == "forever" {
			continue
		}
		plan, err := MakePlan(g, StaticFreq(g, 0, returnsOf(g)), true)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(plan.Counters) != len(g.Edges)-g.N {
			t.Fatalf("%s: %d counters kept, %d chords", name, len(plan.Counters), len(g.Edges)-g.N)
		}
		truth := walkCounts(g, rng, 500)
		known := map[int]float64{}
		for _, c := range plan.Counters {
			known[c.Edge] = truth[c.Edge]
		}
		got, err := ObservedFlow(g, known)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for e := range g.Edges {
			if got[e] != truth[e] {
				t.Errorf("%s: edge %d→%d derived %v, taken %v", name, g.Edges[e].From, g.Edges[e].To, got[e], truth[e])
			}
		}
	}
}

// TestObservedFlowByHand: a diamond run ten times, seven times by its left arm. The known
// edges are the arms' last edges, 1→3 and 2→3, so the tree is X→0, 0→1, 0→2 and 3→X.
func TestObservedFlowByHand(t *testing.T) {
	g := fixtures()["diamond"] // X→0, 0→1, 0→2, 1→3, 2→3, 3→X
	got, err := ObservedFlow(g, map[int]float64{3: 7, 4: 3})
	if err != nil {
		t.Fatal(err)
	}
	same := func(got, want []float64) bool {
		for e := range want {
			if got[e] != want[e] {
				return false
			}
		}
		return true
	}
	if want := []float64{10, 7, 3, 7, 3, 10}; !same(got, want) {
		t.Errorf("derived %v, want %v", got, want)
	}
	// Two of the seven left block 1 by an exception, so 1→3 counted 5: conservation fails at
	// block 1, and the tree edge into it, 0→1, comes out short by the two, as does X→0.
	if got, err = ObservedFlow(g, map[int]float64{3: 5, 4: 3}); err != nil {
		t.Fatal(err)
	}
	if want := []float64{8, 5, 3, 5, 3, 8}; !same(got, want) {
		t.Errorf("with exceptions: %v, want %v", got, want)
	}
	// A loop 0⇄1 left from 1: counts no flow can give (the back edge more often than the
	// way in) make the exit's derived count negative, which is clamped to 0.
	loop := graphOf(2, nil, [2]int{-1, 0}, [2]int{0, 1}, [2]int{1, 0}, [2]int{1, -1})
	if got, err = ObservedFlow(loop, map[int]float64{1: 1, 2: 5}); err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 5, 0}; !same(got, want) {
		t.Errorf("loop: %v, want %v", got, want)
	}
}

// TestObservedFlowRefusesNonChords: the edges not known must be a spanning tree.
func TestObservedFlowRefusesNonChords(t *testing.T) {
	g := fixtures()["diamond"]
	for _, c := range []struct {
		known map[int]float64
		want  string
	}{
		{map[int]float64{1: 7, 3: 7}, "close a cycle"},           // X→0→2→3→X stays unknown
		{map[int]float64{1: 7, 2: 3, 3: 7, 4: 3}, "do not span"}, // two unknown edges for five nodes
		{map[int]float64{9: 1}, "out of range"},
	} {
		_, err := ObservedFlow(g, c.known)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("known %v: %v, want %q", c.known, err, c.want)
		}
	}
}

// TestProfileMatching: a profile entry is used only for its method with the same code hash,
// and only when its edges fit the graph; Use tells planned, misfit, changed and absent apart.
func TestProfileMatching(t *testing.T) {
	g := fixtures()["diamond"]
	// Blocks start at offsets 0, 5, 9, 14; X is -1.
	keys := []EdgeKey{{-1, 0}, {0, 5}, {0, 9}, {5, 14}, {9, 14}, {14, -1}}
	p := NewProfile()
	m := MethodKey{"a.B", "m()V", "h1"}
	p.Add(m, EdgeKey{5, 14}, 4)
	p.Add(m, EdgeKey{9, 14}, 1)
	p.Add(m, EdgeKey{5, 14}, 3) // a second snapshot's line adds up
	misfit := MethodKey{"a.B", "n()V", "h2"}
	p.Add(misfit, EdgeKey{5, 99}, 1)
	p.Add(MethodKey{"a.B", "old()V", "h3"}, EdgeKey{5, 14}, 1)
	p.Add(MethodKey{"a.C", "gone()V", "h4"}, EdgeKey{5, 14}, 1)
	freq, ok, err := p.Observed(m, g, keys)
	if !ok || err != nil || freq[0] != 8 || freq[1] != 7 || freq[5] != 8 {
		t.Errorf("observed %v, %v, %v; want X→0 8, 0→1 7, 3→X 8", freq, ok, err)
	}
	if _, ok, err := p.Observed(misfit, g, keys); !ok || err == nil || !strings.Contains(err.Error(), "5>99 is not in the graph") {
		t.Errorf("misfit: %v, %v", ok, err)
	}
	if _, ok, _ := p.Observed(MethodKey{"a.B", "old()V", "new"}, g, keys); ok {
		t.Errorf("changed code matched")
	}
	u := p.Use()
	want := ProfileUse{Planned: 1, Misfit: 1, Changed: 1, Absent: 1, MisfitExample: "a.B.n()V#h2: profiled edge 5>99 is not in the graph",
		ChangedExample: "a.B.old()V", AbsentExample: "a.C.gone()V"}
	if u != want {
		t.Errorf("use %+v, want %+v", u, want)
	}
}
