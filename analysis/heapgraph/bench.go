package heapgraph

import (
	"syscall"
	"time"
)

// BenchGraphs are the shapes the analysis benchmarks run on, each of about n nodes: the deep
// ones (lists) defeat recursion and stress path compression, the random one has many cycles.
func BenchGraphs(n int) []struct {
	Name  string
	Graph *Graph
} {
	return []struct {
		Name  string
		Graph *Graph
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

// CPUTime returns the processor time this process has used, user and system. Benchmarks report
// it per node beside wall time because they share machines with other work, which inflates wall
// time but not processor time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
