package ctormap

import (
	"archive/zip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// TestRealJars analyses every method of real jars: every constructor must have its
// super()/this() call found on all paths with a single target (compiled code never does what
// appendix B does), every reached `new` must be paired with its constructor call, and the
// analysis must never fail on valid code.
func TestRealJars(t *testing.T) {
	jars := []string{"guava.jar", "ecj.jar", "commons-lang3.jar", "h2.jar", "xalan2.jar", "bcprov.jar", "byte-buddy.jar"}
	for _, jar := range jars {
		t.Run(jar, func(t *testing.T) {
			path := filepath.Join("/usr/share/java", jar)
			zr, err := zip.OpenReader(path)
			if os.IsNotExist(err) {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is required under CI (scripts/install-deps.sh installs it)", path)
				}
				t.Skipf("skipping: %s is not installed (scripts/install-deps.sh installs it)", path)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer zr.Close()
			var ctors, prologue, news, methods, old int
			for _, f := range zr.File {
				if !strings.HasSuffix(f.Name, ".class") || strings.HasSuffix(f.Name, "module-info.class") {
					continue
				}
				rc, err := f.Open()
				if err != nil {
					t.Fatal(err)
				}
				data, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatal(err)
				}
				c, err := classfile.Parse(data)
				if err != nil {
					t.Fatalf("%s: %v", f.Name, err)
				}
				if c.Major < 50 {
					old++
				}
				for _, m := range c.Methods {
					b, err := DecodeMethod(c, m)
					if err != nil {
						t.Fatal(err)
					}
					if b == nil {
						continue
					}
					methods++
					a, err := Analyze(b)
					if err != nil {
						t.Fatalf("%v", err)
					}
					for _, n := range a.News {
						if len(n.Inits) != 1 {
							t.Errorf("%s: new %s at offset %d has %d constructor calls", b.Method, n.Class, n.New.Offset, len(n.Inits))
						}
					}
					news += len(a.News)
					if !a.IsConstructor {
						continue
					}
					ctors++
					if len(a.Targets) != 1 || a.Warning != "" {
						t.Errorf("%s: targets %v, warning %q", b.Method, a.Targets, a.Warning)
						continue
					}
					for n := b.First(); n != nil; n = n.Next() {
						if a.Reached(n) && !a.ThisInitialized(n) && (code.IsBranch(n.Op) || n.Switch != nil) {
							prologue++
							break
						}
					}
				}
			}
			t.Logf("%s: %d methods (%d classes older than version 50), %d constructors each with one super()/this() target, %d with branches before it, %d new sites paired", jar, methods, old, ctors, prologue, news)
		})
	}
}
