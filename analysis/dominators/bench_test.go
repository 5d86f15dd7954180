package dominators

import (
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
	"github.com/heapledger/heapledger/analysis/progress"
)

// BenchmarkDominators measures the dominator tree plus retained sizes on graphs of 3 million
// nodes; ns/node is the figure to compare across shapes and sizes.
func BenchmarkDominators(b *testing.B) {
	for _, c := range graphtest.BenchGraphs(3_000_000) {
		b.Run(c.Name, func(b *testing.B) {
			cpu := progress.CPUTime()
			for i := 0; i < b.N; i++ {
				t := Compute(c.Graph, nil)
				t.Retained(c.Graph)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Graph.N()), "ns/node")
			b.ReportMetric(float64((progress.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(c.Graph.N()), "cpu-ns/node")
		})
	}
}
