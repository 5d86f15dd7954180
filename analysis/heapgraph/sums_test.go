package heapgraph

import (
	"math/rand"
	"slices"
	"testing"
)

// RunningSums on two cores must give what one pass gives, inclusive and exclusive, on arrays
// short and long enough to be split.
func TestRunningSums(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	for _, n := range []int{0, 1, 5, 1 << 16, 1<<16 + 1, 200_001} {
		for _, exclusive := range []bool{false, true} {
			a := make([]uint32, n)
			for i := range a {
				a[i] = uint32(r.Intn(50))
			}
			want := make([]uint32, n)
			var total uint64
			for i, k := range a {
				if exclusive {
					want[i] = uint32(total)
				}
				total += uint64(k)
				if !exclusive {
					want[i] = uint32(total)
				}
			}
			if got := RunningSums(a, exclusive); got != total || !slices.Equal(a, want) {
				t.Fatalf("n=%d exclusive=%v: total %d, want %d; sums equal: %v", n, exclusive, got, total, slices.Equal(a, want))
			}
		}
	}
}
