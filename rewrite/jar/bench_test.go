package jar

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/rewrite/transform"
)

// BenchmarkPipeline measures what the pipeline itself costs on a real jar: reading, handing
// every class to a pass that changes it (so every class is compressed and written anew), and
// writing the jar. The pass does next to nothing, so this is the floor under any real pass.
func BenchmarkPipeline(b *testing.B) {
	in := "/usr/share/java/guava.jar"
	if _, err := os.Stat(in); err != nil {
		b.Skipf("%s not installed (scripts/install-deps.sh)", in)
	}
	out := filepath.Join(b.TempDir(), "out.jar")
	touch := transform.Func(func(name string, data []byte) (transform.Result, error) {
		return transform.Result{Data: append(data[:len(data):len(data)], 0)}, nil
	})
	for _, workers := range []int{1, 0} {
		name := "workers=NumCPU"
		if workers == 1 {
			name = "workers=1"
		}
		b.Run(name, func(b *testing.B) {
			st, _ := os.Stat(in)
			b.SetBytes(st.Size())
			for i := 0; i < b.N; i++ {
				rep, err := Rewrite([]string{in}, out, touch, Options{Workers: workers})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Rewritten == 0 {
					b.Fatal("nothing rewritten")
				}
			}
		})
	}
}
