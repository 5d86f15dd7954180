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
