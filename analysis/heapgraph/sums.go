package heapgraph

import (
	"runtime"

	"github.com/heapledger/heapledger/analysis/internal/cores"
)

// RunningSums turns the counts in a into running sums in place (CSR offsets from counts) and
// returns their total: with exclusive, a[i] becomes the sum of the counts before i, else of those
// up to i included. A long array is summed on two cores, each half on its own, the second half
// then raised by the first's total. Each sum is kept in 32 bits: a caller whose total passes
// what they hold must not use them.
func RunningSums(a []uint32, exclusive bool) uint64 {
	sum := func(part []uint32) (total uint64) {
		for i, k := range part {
			if exclusive {
				part[i] = uint32(total)
			}
			total += uint64(k)
			if !exclusive {
				part[i] = uint32(total)
			}
		}
		return total
	}
	if len(a) < 1<<16 || runtime.GOMAXPROCS(0) < 2 {
		return sum(a)
	}
	mid := len(a) / 2
	var first, second uint64
	cores.Both(func() { first = sum(a[:mid]) }, func() { second = sum(a[mid:]) })
	lift := uint32(first)
	for i := range a[mid:] {
		a[mid+i] += lift
	}
	return first + second
}
