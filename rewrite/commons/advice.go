package commons

import (
	"errors"

	"github.com/heapledger/heapledger/rewrite/code"
)

// ErrNoInitCall is the cause when a constructor has no path that calls super() or this(): there
// is no point after which entry advice may run or a handler may start.
var ErrNoInitCall = errors.New("no path calls super() or this(), so there is no point after which a handler may start")

// Advice is what a pass runs around a method's body, as ASM's AdviceAdapter has onMethodEnter
// and onMethodExit. Each method appends its code to the sequence it is given (which may stay
// empty); a sequence whose building failed stops Wrap with its error (Seq.Err). A pass keeps its
// advice with the state its methods share (the class's constants, the method's new locals), so
// wrapping a method allocates nothing for it.
type Advice interface {
	// Enter runs at the method's start or, in a constructor, right after the super()/this()
	// call on each path: `this` is initialised there on every path.
	Enter(s *code.Seq)
	// Exit runs before each return that some path reaches.
	Exit(s *code.Seq, ret *code.Insn)
	// Unwind runs in the catch-all handler with the exception on the stack, which it must
	// leave there; Wrap appends the athrow that rethrows it unchanged.
	Unwind(s *code.Seq)
}

// Prologue is implemented by advice that also runs code once at the very start of the method,
// before any label at offset 0 (so a loop back to the first instruction does not run it again)
// and, in a constructor, before super(): it must not touch `this`. The count pass fetches the
// thread's state there, for sites in super(...)'s arguments.
type Prologue interface {
	Prologue(s *code.Seq)
}

// Wrapped tells a pass what Wrap placed, for the frames it writes itself.
type Wrapped struct {
	// Handler is the label of the catch-all handler (its frame: the exception on the stack).
	Handler *code.Label
	// BeforeInit holds, in a constructor, the instructions (inserted ones included) that run
	// before `this` is initialised: no handler covers them. Nil in other methods.
	BeforeInit map[*code.Insn]bool
}

// Wrap inserts the advice into m's body. Algorithm:
//
//  1. Exit goes before every return that is not dead code (Method.Dead).
//  2. The entry points are found (Method.InitCalls): the super()/this() call of each path in a
//     constructor, else the method's start. Enter goes after each, ending in a label that
//     starts the handler's range; a Prologue goes at the very start.
//  3. The handler — a label, Unwind, athrow — is appended after the original code, which ends
//     at a label of its own.
//  4. The handler covers the body from the entry points to that end, less dead code and less
//     what runs before `this` is initialised (cover), in entries of the exception table
//     appended after the program's own, so those keep catching first.
func Wrap(m *Method, a Advice) (Wrapped, error) {
	b := m.Body
	dead := m.Dead()
	// The prologue is built first, so constants it adds to the pool come first, as a pass
	// writing its code in the order it runs would have them.
	var prologue *code.Seq
	if p, ok := a.(Prologue); ok {
		prologue = b.Seq() // kept until step 2; the rest share the method's sequence
		p.Prologue(prologue)
	}
	// 1.
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op >= code.IRETURN && n.Op <= code.RETURN && !dead[n] {
			s := m.newSeq()
			a.Exit(s, n)
			if err := b.InsertBefore(n, s); err != nil {
				return Wrapped{}, err
			}
		}
	}
	// 2.
	inits, err := m.InitCalls()
	if err != nil {
		return Wrapped{}, err
	}
	starts := inits
	if len(starts) == 0 {
		starts = []*code.Insn{nil} // not a constructor: enter at the method's start
	}
	ranges := make([]*code.Label, 0, len(starts)) // the label after each entry sequence
	for _, at := range starts {
		start := b.NewLabel()
		s := m.newSeq()
		a.Enter(s)
		if err := b.InsertAfter(at, s.Mark(start)); err != nil {
			return Wrapped{}, err
		}
		ranges = append(ranges, start)
	}
	if prologue != nil {
		if err := b.InsertAfter(nil, prologue); err != nil {
			return Wrapped{}, err
		}
	}
	// 3.
	end, handler := b.NewLabel(), b.NewLabel()
	tail := m.newSeq().Mark(end).Mark(handler)
	a.Unwind(tail)
	if err := b.Append(tail.Op(code.ATHROW)); err != nil {
		return Wrapped{}, err
	}
	// 4.
	var pre map[*code.Insn]bool
	if len(inits) > 0 {
		an, err := m.Constructors()
		if err != nil {
			return Wrapped{}, err
		}
		pre = an.BeforeInit(b)
	}
	if err := cover(b, ranges, end, handler, inits, pre, dead); err != nil {
		return Wrapped{}, err
	}
	return Wrapped{Handler: handler, BeforeInit: pre}, nil
}
