package passes

import (
	"archive/zip"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// benchClasses reads the classes of one jar (HEAPLEDGER_BENCH_JAR, default commons-lang3).
func benchClasses(b *testing.B) [][]byte {
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
	return classes
}

// benchPass runs a pass over the classes; b.N counts classes, and classes/s is reported.
func benchPass(b *testing.B, newPass func() transform.Class) {
	classes := benchClasses(b)
	p := newPass()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%len(classes) == 0 {
			p = newPass() // keeps the count pass's site table from growing without bound
		}
		if _, err := p.TransformClass("", classes[i%len(classes)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "classes/s")
}

// BenchmarkProbeJar rewrites the classes of one jar with the probe pass.
// bench/rewrite/run.sh compares whole corpora with ASM.
func BenchmarkProbeJar(b *testing.B) { benchPass(b, Probe) }

// BenchmarkCountJar rewrites the classes of one jar with the count pass, every class in an
// account (the product's main pass: --pass count --accounts '*').
func BenchmarkCountJar(b *testing.B) {
	set, err := accounts.Parse("*")
	if err != nil {
		b.Fatal(err)
	}
	benchPass(b, func() transform.Class {
		p, err := Count(CountOptions{Accounts: set, Table: accounts.NewTable(set)})
		if err != nil {
			b.Fatal(err)
		}
		return p
	})
}
