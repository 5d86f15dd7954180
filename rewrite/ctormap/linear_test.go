package ctormap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testjars/testclasses"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// TestLinearAsDataFlow checks the straight-line pairing of `new`s (pairLinear) against the data
// flow (follow) on every method with a `new` of real jars, from javac, the Groovy, Clojure and
// Scala compilers: where it takes a method, the same `new`s, constructor pairings (with dup),
// allocations and unreached code, in the same order. Both paths must be taken.
func TestLinearAsDataFlow(t *testing.T) {
	linear, flowed := 0, 0
	for _, jar := range []string{"ecj.jar", "h2.jar", "guava.jar", "groovy-all.jar", "clojure-1.11.jar", "scala-library.jar"} {
		testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
			for _, m := range c.Methods {
				b, err := DecodeMethod(c, m)
				if err != nil || b == nil || !hasNewInsn(b) {
					continue
				}
				if _, err := frames.Attach(b); err != nil {
					continue
				}
				isCtor := b.Method.Name == "<init>" && b.Method.Access&classfile.AccStatic == 0 && b.Method.Class != frames.ObjectClass
				slow := &Analysis{IsConstructor: isCtor}
				if err := slow.follow(b); err != nil {
					continue // what the data flow refuses is not compared
				}
				fast := &Analysis{IsConstructor: isCtor}
				ok, err := fast.pairLinear(b)
				if err != nil {
					t.Fatalf("%s %s: %s: %v", jar, entry, b.Method, err)
				}
				if !ok {
					flowed++
					continue
				}
				linear++
				if f, s := pairings(b, fast), pairings(b, slow); f != s {
					t.Fatalf("%s %s: %s:\nstraight-line:\n%s\ndata flow:\n%s", jar, entry, b.Method, f, s)
				}
			}
		})
	}
	if linear == 0 || flowed == 0 {
		t.Fatalf("%d methods paired in straight lines, %d by the data flow: both must be compared", linear, flowed)
	}
	t.Logf("%d methods with new paired in straight lines, %d left to the data flow", linear, flowed)
}

func hasNewInsn(b *code.Body) bool {
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == code.NEW {
			return true
		}
	}
	return false
}

// pairings describes what an analysis found, by offsets: the super()/this() calls, the `new`s
// and their constructor calls, the allocations, what is unreached and the warning.
func pairings(b *code.Body, a *Analysis) string {
	var out strings.Builder
	call := func(c InitCall) string {
		s := fmt.Sprintf("%d %s", c.Insn.Offset, c.Target)
		if c.New != nil {
			s += fmt.Sprintf(" new@%d dup=%v", c.New.Offset, c.Dup)
		}
		return s
	}
	for _, c := range a.Calls {
		fmt.Fprintf(&out, "call %s\n", call(c))
	}
	for _, n := range a.News {
		fmt.Fprintf(&out, "new %d %s:", n.New.Offset, n.Class)
		for _, c := range n.Inits {
			fmt.Fprintf(&out, " [%s]", call(c))
		}
		out.WriteString("\n")
	}
	for _, c := range a.Allocs {
		fmt.Fprintf(&out, "alloc %s\n", call(c))
	}
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() && !a.Reached(n) {
			fmt.Fprintf(&out, "unreached %d\n", n.Offset)
		}
	}
	fmt.Fprintf(&out, "warning %q\n", a.Warning)
	return out.String()
}
