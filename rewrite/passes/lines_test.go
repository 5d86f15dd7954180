package passes

import (
	"testing"

	"github.com/heapledger/heapledger/internal/testjars/testclasses"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// TestSourceLines: sourceLines keeps its last answer and stops a walk back there. Asked about
// every instruction of every method of two real jars in code order, with a query out of order
// after every hundredth, it must give what a walk back to the nearest line-start label gives.
func TestSourceLines(t *testing.T) {
	for _, jar := range []string{"h2.jar", "guava.jar"} {
		asked := 0
		testclasses.Each(t, jar, func(entry string, c *classfile.Class) {
			for _, m := range c.Methods {
				cd, _, err := c.MethodCode(m)
				if err != nil {
					t.Fatalf("%s: %v", entry, err)
				}
				if cd == nil {
					continue
				}
				b, err := code.Decode(cd, c.Pool, code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major})
				if err != nil {
					t.Fatalf("%s: %v", entry, err)
				}
				asked += checkLines(t, b)
			}
		})
		if asked == 0 {
			t.Errorf("%s: no instruction had a source line", jar)
		}
	}
}

// checkLines compares every answer of one sourceLines with a plain walk back; it returns how
// many instructions had a line.
func checkLines(t *testing.T, b *code.Body) int {
	t.Helper()
	lines := lineTable(b)
	walk := func(n *code.Insn) (int, bool) {
		for p := n.Prev(); p != nil; p = p.Prev() {
			if l, ok := lines.starts[p.Label]; ok && p.IsLabel() {
				return l, true
			}
		}
		return 0, false
	}
	had, i := 0, 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			continue
		}
		i++
		ask := []*code.Insn{n}
		if i%100 == 0 { // out of order: back to the first instruction, then on from here
			ask = append([]*code.Insn{b.First()}, n)
		}
		for _, q := range ask {
			got, gotOK := lines.of(q)
			want, wantOK := walk(q)
			if got != want || gotOK != wantOK {
				t.Fatalf("%s.%s%s: line of instruction %d: got %d,%v want %d,%v", b.Method.Class, b.Method.Name, b.Method.Desc, i, got, gotOK, want, wantOK)
			}
			if gotOK {
				had++
			}
		}
	}
	return had
}
