package classfile

import "testing"

// BenchmarkParseWrite measures the unmodified round trip over every class of guava, the
// per-class cost the rewriter pays before any pass runs.
func BenchmarkParseWrite(b *testing.B) {
	classes := jarClasses(b, "guava.jar")
	total := 0
	for _, e := range classes {
		total += len(e.data)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range classes {
			c, err := Parse(e.data)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := c.Bytes(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(classes)*b.N)/b.Elapsed().Seconds(), "classes/s")
}
