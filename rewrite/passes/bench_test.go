package passes

import (
	"archive/zip"
	"io"
	"os"
	"strings"
	"testing"
)

// BenchmarkProbeJar rewrites the classes of one jar (HEAPLEDGER_BENCH_JAR, default commons-lang3)
// with the probe pass; b.N counts classes. bench/rewrite/run.sh compares whole corpora with ASM.
func BenchmarkProbeJar(b *testing.B) {
	path := os.Getenv("HEAPLEDGER_BENCH_JAR")
	if path == "" {
		path = "/usr/share/java/commons-lang3.jar"
	}
	z, err := zip.OpenReader(path)
	if err != nil {
		b.Skipf("no jar to benchmark: %v", err)
	}
	defer z.Close()
	var classes [][]byte
	for _, f := range z.File {
		if !strings.HasSuffix(f.Name, ".class") {
			continue
		}
		r, err := f.Open()
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			b.Fatal(err)
		}
		classes = append(classes, data)
	}
	p := Probe()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.TransformClass("", classes[i%len(classes)]); err != nil {
			b.Fatal(err)
		}
	}
}
