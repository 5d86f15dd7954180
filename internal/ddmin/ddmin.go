// Package ddmin is the delta debugger of the thesis's section 4.7: Zeller's ddmin, which shrinks
// a failing input to a 1-minimal one, applied to heap graphs whose fast analyses (dominator
// tree, retained size, retained size by class, strongly connected components, dynamic size,
// top-k by dynamic size) disagree with slow obvious ones. Nodes stay, references go: the
// minimal graph keeps every node and only the edges the disagreement needs, ready to become a
// regression test.
package ddmin

// Minimize returns a 1-minimal subset of the items 0..n-1 on which fails still reports true:
// removing any single item of the result makes fails false. fails must be true for all n items.
// Items are kept in increasing order. This is Zeller's ddmin: try each of k chunks alone, then
// each complement, and refine the granularity when neither fails.
func Minimize(n int, fails func(keep []int) bool) []int {
	cur := make([]int, n)
	for i := range cur {
		cur[i] = i
	}
	k := 2
	for len(cur) >= 2 {
		chunks := split(cur, k)
		reduced := false
		for _, c := range chunks {
			if fails(c) {
				cur, k, reduced = c, 2, true
				break
			}
		}
		if !reduced {
			for i := range chunks {
				comp := complement(chunks, i)
				if fails(comp) {
					cur, k, reduced = comp, max(k-1, 2), true
					break
				}
			}
		}
		if !reduced {
			if k >= len(cur) {
				break
			}
			k = min(2*k, len(cur))
		}
	}
	if len(cur) == 1 && fails(nil) {
		return nil
	}
	return cur
}

// split cuts items into k chunks of nearly equal size.
func split(items []int, k int) [][]int {
	chunks := make([][]int, 0, k)
	start := 0
	for i := 0; i < k; i++ {
		end := start + (len(items)-start)/(k-i)
		chunks = append(chunks, items[start:end])
		start = end
	}
	return chunks
}

// complement joins every chunk but chunk i, in order.
func complement(chunks [][]int, i int) []int {
	var out []int
	for j, c := range chunks {
		if j != i {
			out = append(out, c...)
		}
	}
	return out
}
