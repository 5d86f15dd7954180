package ctormap

import (
	"testing"

	"github.com/heapledger/heapledger/internal/testjars"
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
			var ctors, prologue, news, methods, old int
			testjars.Each(t, jar, func(entry string, data []byte) {
				if testjars.IsModuleInfo(entry) {
					return
				}
				c, err := classfile.Parse(data)
				if err != nil {
					t.Fatalf("%s: %v", entry, err)
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
			})
			t.Logf("%s: %d methods (%d classes older than version 50), %d constructors each with one super()/this() target, %d with branches before it, %d new sites paired", jar, methods, old, ctors, prologue, news)
		})
	}
}
