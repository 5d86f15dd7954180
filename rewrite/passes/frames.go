package passes

import (
	"fmt"

	"github.com/heapledger/heapledger/rewrite/ctormap"
	"github.com/heapledger/heapledger/rewrite/code"
)

// initCalls returns the super()/this() calls of a constructor — on each path the call after
// which `this` is initialised — and nil for any other method. The constructor analysis follows
// uninitializedThis through the code rather than matching patterns, so it finds the call behind
// statements before super() (Java 25, Kotlin, Scala) and tells it apart from `new X(...)` of
// the class itself.
func initCalls(b *code.Body) ([]*code.Insn, error) {
	if b.Method.Name != "<init>" {
		return nil, nil
	}
	a, err := ctormap.Analyze(b)
	if err != nil {
		return nil, err
	}
	if !a.IsConstructor {
		return nil, nil // java/lang/Object's constructor starts initialised
	}
	if len(a.Calls) == 0 {
		return nil, fmt.Errorf("%s: no path calls super() or this(), so there is no point after which a handler may start", b.Method)
	}
	out := make([]*code.Insn, len(a.Calls))
	for i, c := range a.Calls {
		out[i] = c.Insn
	}
	return out, nil
}
