package heapdump

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// removeEdges must leave exactly the edges outside the gaps, in order, each with its weak bit,
// whatever the gaps' lengths and their positions against 64-bit words.
func TestRemoveEdges(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		m := rng.IntN(400)
		succ := make([]uint32, m)
		weak := make(heapgraph.EdgeSet, (m+63)/64)
		for e := range succ {
			succ[e] = uint32(rng.IntN(1000))
			if rng.IntN(3) == 0 {
				weak[e>>6] |= 1 << (e & 63)
			}
		}
		var gaps []span
		for e := 0; e < m; {
			e += rng.IntN(70)
			if e >= m {
				break
			}
			end := min(m, e+1+rng.IntN([]int{1, 3, 90}[round%3]))
			gaps = appendSpan(gaps, uint32(e), uint32(end))
			e = end
		}
		var wantSucc []uint32
		var wantWeak []bool
		for e := 0; e < m; e++ {
			if !slices.ContainsFunc(gaps, func(s span) bool { return uint32(e) >= s.start && uint32(e) < s.end }) {
				wantSucc = append(wantSucc, succ[e])
				wantWeak = append(wantWeak, weak[e>>6]&(1<<(e&63)) != 0)
			}
		}
		g := &heapgraph.Graph{Succ: slices.Clone(succ)}
		w, got := removeEdges(g, weak, gaps)
		if int(w) != len(wantSucc) || !slices.Equal(g.Succ, wantSucc) {
			t.Fatalf("round %d: %d edges %v, want %v", round, w, g.Succ, wantSucc)
		}
		if len(got) != (len(wantSucc)+63)/64 {
			t.Fatalf("round %d: %d words of weak bits for %d edges", round, len(got), len(wantSucc))
		}
		for e, want := range wantWeak {
			if got.Has(uint32(e)) != want {
				t.Fatalf("round %d: weak bit of edge %d is %v, want %v", round, e, !want, want)
			}
		}
		for e := len(wantSucc); e < len(got)*64; e++ {
			if got.Has(uint32(e)) {
				t.Fatalf("round %d: weak bit %d set past the %d edges", round, e, len(wantSucc))
			}
		}
	}
}

// Lists of nothing but pad slots (an object whose references all point nowhere) make one gap with
// the pads before them: each list's offset must still move down by the slots before it alone.
// The fuzzer found a dump where the whole graph was such lists, and the offsets overran the edges.
func TestSqueezeListsOfPadsOnly(t *testing.T) {
	// Lists: 0 [5], 1 [6 pad], 2 [pad], 3 [pad pad], 4 [7], 5 [pad].
	g := &heapgraph.Graph{
		Off:  []uint32{0, 1, 3, 4, 6, 7, 8},
		Succ: []uint32{5, 6, pad, pad, pad, pad, 7, pad},
		Size: make([]uint32, 6),
	}
	l := &loader{d: &Dump{Graph: g, Weak: make(heapgraph.EdgeSet, 1)}}
	l.d.Weak[0] = 1<<1 | 1<<6 // the edges to 6 and to 7
	l.squeeze()
	if want := []uint32{0, 1, 2, 2, 2, 3, 3}; !slices.Equal(g.Off, want) {
		t.Errorf("offsets %v, want %v", g.Off, want)
	}
	if want := []uint32{5, 6, 7}; !slices.Equal(g.Succ, want) {
		t.Errorf("edges %v, want %v", g.Succ, want)
	}
	if w := l.d.Weak; len(w) != 1 || w[0] != 1<<1|1<<2 {
		t.Errorf("weak bits %b, want 110", w)
	}
}

// TestKeptRuns checks the runs of kept nodes against a walk over every bit, on bit sets with
// runs that start and end at and across word boundaries.
func TestKeptRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := 0; trial < 2000; trial++ {
		n := rng.IntN(300)
		seen := newBitset(n)
		p := rng.Float64()
		for v := 0; v < n; v++ {
			if rng.Float64() < p {
				seen.set(uint32(v))
			}
		}
		if trial%7 == 0 { // whole words kept
			for k := range seen {
				seen[k] = ^uint64(0)
			}
			if n%64 != 0 && len(seen) > 0 {
				seen[len(seen)-1] = 1<<(n%64) - 1
			}
		}
		var want [][2]int
		for v := 0; v < n; v++ {
			if seen.has(uint32(v)) {
				if len(want) > 0 && want[len(want)-1][1] == v {
					want[len(want)-1][1] = v + 1
				} else {
					want = append(want, [2]int{v, v + 1})
				}
			}
		}
		var got [][2]int
		keptRuns(seen, n, func(a, b int) { got = append(got, [2]int{a, b}) })
		if len(got) != len(want) {
			t.Fatalf("n=%d: runs %v, want %v", n, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("n=%d: runs %v, want %v", n, got, want)
			}
		}
	}
}
