package dynsize_test

import (
	"testing"

	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph/graphtest"
	"github.com/heapledger/heapledger/analysis/progress"
)

// BenchmarkDynamicSize measures components, condensation, dominating articulation points with
// their sizes, and the top 20 by dynamic size, on graphs of 3 million nodes.
func BenchmarkDynamicSize(b *testing.B) {
	for _, c := range graphtest.BenchGraphs(3_000_000) {
		b.Run(c.Name, func(b *testing.B) {
			var visited uint64
			cpu := progress.CPUTime()
			for i := 0; i < b.N; i++ {
				s := dynsize.New(c.Graph, nil)
				s.Top(20)
				visited = s.Visited
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Graph.N()), "ns/node")
			b.ReportMetric(float64((progress.CPUTime()-cpu).Nanoseconds())/float64(b.N)/float64(c.Graph.N()), "cpu-ns/node")
			b.ReportMetric(float64(visited)/float64(c.Graph.N()), "visits/node")
		})
	}
}
