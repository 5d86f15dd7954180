package graphtest

import "github.com/heapledger/heapledger/analysis/heapgraph"

// BenchGraphs are the shapes the analysis benchmarks run on, each of about n nodes: the deep
// ones (lists) defeat recursion and stress path compression, the random one has many cycles.
func BenchGraphs(n int) []struct {
	Name  string
	Graph *heapgraph.Graph
} {
	return []struct {
		Name  string
		Graph *heapgraph.Graph
	}{
		{"BalancedTree", BalancedTree(n)},
		{"ListWithData", ListWithData(n / 2)},
		{"DoublyLinkedList", DoublyLinkedList(n / 2)},
		{"Triangle", Triangle(int(isqrt(2 * n)))},
		{"Random", Random(1, n, 2*n, 64)},
	}
}

func isqrt(x int) int {
	r := 0
	for (r+1)*(r+1) <= x {
		r++
	}
	return r
}
