// Package commons is the instrumentation layer every pass starts from, as ASM's commons layer
// (AdviceAdapter) is for ASM users: a pass says what runs on entry, before each return and when
// an exception leaves the method (Advice), and Wrap puts it there — in a constructor only after
// super() or this() on every path, never in dead code, with a catch-all handler appended after
// the program's own that restores and rethrows. The constructor and allocation analysis a pass
// needs (package ctormap: super()/this() calls, which `new` each <init> initialises, what runs
// before super()) comes from Method, which runs the frame inference behind it at most once per
// method however many parts of a pass ask. docs/instrumentation.md walks through the probe
// pass as the example to start a new pass from.
package commons

import (
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/ctormap"
)

// Method is one decoded method being instrumented, with the analyses of it that passes share.
// Each is computed on first use, over the body as it was decoded.
type Method struct {
	Body *code.Body

	dead     map[*code.Insn]bool
	deadDone bool

	ctors    *ctormap.Analysis
	ctorsErr error
	ctorsRun bool

	// seq is the sequence Wrap hands the advice, reused: a sequence handed through an interface
	// would otherwise be allocated at every return of every method.
	seq code.Seq
}

// newSeq empties the method's reusable sequence and returns it.
func (m *Method) newSeq() *code.Seq {
	m.seq.Reset(m.Body)
	return &m.seq
}

// NewMethod starts the instrumentation of a decoded body. Ask for Dead before editing it.
func NewMethod(b *code.Body) *Method { return &Method{Body: b} }

// Reset makes m the instrumentation of another body, forgetting every analysis of the last, so
// that one Method serves the methods of a class in turn.
func (m *Method) Reset(b *code.Body) { *m = Method{Body: b} }

// Dead returns the instructions no path from the method's start reaches, nil when there are
// none. Nothing goes there: it never runs, and the JVM checks it against the compiler's frames,
// which know nothing of the locals a pass adds (ASM-based compilers leave `nop … athrow` tails
// under frames with no locals at all).
func (m *Method) Dead() map[*code.Insn]bool {
	if !m.deadDone {
		m.deadDone = true
		m.dead = m.Body.Unreached()
	}
	return m.dead
}

// Constructors returns the constructor and allocation analysis of the method (ctormap.Analyze):
// the frame inference behind it runs once, however often it is asked for.
func (m *Method) Constructors() (*ctormap.Analysis, error) {
	if !m.ctorsRun {
		m.ctorsRun = true
		m.ctors, m.ctorsErr = ctormap.Analyze(m.Body)
	}
	return m.ctors, m.ctorsErr
}

// InitCalls returns a constructor's super()/this() calls — on each path the call after which
// `this` is initialised — and nil for any other method. The analysis follows
// uninitializedThis through the code rather than matching patterns, so it finds the call
// behind statements before super() (Java 25, Kotlin, Scala) and tells it apart from
// `new X(...)` of the class itself.
func (m *Method) InitCalls() ([]*code.Insn, error) {
	if m.Body.Method.Name != "<init>" {
		return nil, nil
	}
	a, err := m.Constructors()
	if err != nil {
		return nil, err
	}
	if !a.IsConstructor {
		return nil, nil // java/lang/Object's constructor starts initialised
	}
	if len(a.Calls) == 0 {
		return nil, m.Body.Method.Errorf(-1, "%w", ErrNoInitCall)
	}
	out := make([]*code.Insn, len(a.Calls))
	for i, c := range a.Calls {
		out[i] = c.Insn
	}
	return out, nil
}
