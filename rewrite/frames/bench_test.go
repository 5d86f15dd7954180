package frames

import "testing"

// BenchmarkEncodeFrames measures the frame work of an edit on every method of guava: attaching
// the compiler's frames and writing the table of the edited code (decoding and encoding the
// code itself is package code's and excluded by measuring it alone first).
func BenchmarkEncodeFrames(b *testing.B) {
	ms := jarMethods(&testing.T{}, "guava.jar", true)
	if len(ms) == 0 {
		b.Skip("guava.jar not available")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, x := range ms {
			if _, err := x.encodeFrames(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(ms)), "methods/op")
}
