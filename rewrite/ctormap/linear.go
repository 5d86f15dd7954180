package ctormap

import (
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// pairLinear pairs the `new`s of a method that is not a constructor with their constructor
// calls without a data flow, for the way compilers make objects: `new`, `dup`, the arguments,
// invokespecial <init>, with no branch or join in between. It follows only which `new` each
// slot of the operand stack holds an uninitialized object of:
//
//  1. the code is walked in order; at every label with a compiler frame the stack is that
//     frame's, which must hold no uninitialized object (frameStack);
//  2. `new` pushes its own object and `dup` copies the top slot; every other instruction pops
//     and pushes by its stack effect and must not pop an uninitialized object;
//  3. invokespecial <init> pairs with the object under its arguments (dup: another copy under
//     it), after which every copy is initialized (initCall);
//  4. a branch, or the end of a path, with an uninitialized object on the stack ends the walk.
//
// It reports false, having changed nothing the data flow would not set again, wherever the
// walk ends early, for code without compiler frames, and for code it cannot follow (jsr and
// ret, an unexpected receiver); follow then pairs the method with the data flow. What is
// reached is what Reach finds, as initCallsWithoutNew has it.
func (a *Analysis) pairLinear(b *code.Body) (bool, error) {
	fm, ok := b.Frames.(*frames.Method)
	if a.IsConstructor || !ok || b.Method.Major < 50 {
		return false, nil
	}
	live := b.Reach(nil)
	l := linear{b: b, fm: fm, known: true}
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			if !l.frameStack(n.Label) {
				return false, nil
			}
			continue
		}
		if !live[n.Num()] {
			l.unreached = append(l.unreached, n)
			l.known = false
			continue
		}
		if ok, err := l.step(n); !ok || err != nil {
			return false, err
		}
	}
	if l.pending() {
		return false, nil
	}
	a.News = l.news
	a.Allocs = l.allocs
	if len(l.unreached) > 0 {
		a.unreached = map[*code.Insn]bool{}
		for _, n := range l.unreached {
			a.unreached[n] = true
		}
	}
	return true, nil
}

// linear is pairLinear's walk.
type linear struct {
	b      *code.Body
	fm     *frames.Method
	origin []*code.Insn // per stack slot: the `new` whose uninitialized object it holds, or nil
	known  bool         // whether origin is the stack here (false after the end of a path)
	news   []NewSite
	allocs []InitCall

	unreached []*code.Insn
}

// frameStack takes the stack of the compiler's frame at label lb, if it has one (step 1).
func (l *linear) frameStack(lb *code.Label) bool {
	st, ok := l.fm.StackAt(lb)
	if !ok {
		return true // a label no branch can target: the stack flows on
	}
	if l.known && l.pending() {
		return false // an uninitialized object reaches a join
	}
	for _, t := range st {
		if t.Kind == frames.Uninitialized {
			return false
		}
	}
	l.origin = l.origin[:0]
	for range st {
		l.origin = append(l.origin, nil)
	}
	l.known = true
	return true
}

// step follows one reached instruction (steps 2–4).
func (l *linear) step(n *code.Insn) (bool, error) {
	if !l.known {
		return false, nil // code after the end of a path with no frame
	}
	switch n.Op {
	case code.NEW:
		name, err := l.b.Pool.ClassName(n.Index)
		if err != nil {
			return false, l.b.Method.Errorf(n.Offset, "new: %w", err)
		}
		l.news = append(l.news, NewSite{New: n, Class: name})
		l.origin = append(l.origin, n)
		return true, nil
	case code.DUP:
		if len(l.origin) == 0 {
			return false, nil
		}
		l.origin = append(l.origin, l.origin[len(l.origin)-1])
		return true, nil
	case code.INVOKESPECIAL:
		if string(l.b.Pool.MemberName(n.Index)) == "<init>" {
			return l.initCall(n)
		}
	case code.JSR, code.JSR_W, code.RET:
		return false, nil
	}
	pop, push, err := l.b.StackEffect(n)
	if err != nil || pop > len(l.origin) {
		return false, nil // the data flow says what is wrong
	}
	for _, o := range l.origin[len(l.origin)-pop:] {
		if o != nil {
			return false, nil // stored, compared or moved: the data flow follows it
		}
	}
	l.origin = l.origin[:len(l.origin)-pop]
	for range push {
		l.origin = append(l.origin, nil)
	}
	if (n.Target != nil || n.Switch != nil) && l.pending() {
		return false, nil
	}
	if code.EndsFlow(n.Op) {
		if l.pending() {
			return false, nil
		}
		l.known = false
	}
	return true, nil
}

// initCall pairs a constructor call with the `new` under its arguments (step 3).
func (l *linear) initCall(n *code.Insn) (bool, error) {
	owner, _, desc, err := l.b.Pool.MemberRef(n.Index)
	if err != nil {
		return false, l.b.Method.Errorf(n.Offset, "invokespecial: %w", err)
	}
	args, err := classfile.MethodArgSlots(desc)
	if err != nil {
		return false, l.b.Method.Errorf(n.Offset, "invokespecial: %w", err)
	}
	r := len(l.origin) - args - 1
	if r < 0 || l.origin[r] == nil {
		return false, nil
	}
	recv := l.origin[r]
	for _, o := range l.origin[r+1:] {
		if o != nil {
			return false, nil // an uninitialized object as an argument
		}
	}
	call := InitCall{Insn: n, Target: Target{Owner: owner, Desc: desc, Alternate: owner == l.b.Method.Class},
		New: recv, Dup: r >= 1 && l.origin[r-1] == recv}
	for i := len(l.news) - 1; i >= 0; i-- {
		if l.news[i].New == recv {
			l.news[i].Inits = append(l.news[i].Inits, call)
			break
		}
	}
	l.allocs = append(l.allocs, call)
	l.origin = l.origin[:r]
	for i, o := range l.origin {
		if o == recv {
			l.origin[i] = nil // initialized now
		}
	}
	return true, nil
}

// pending reports whether the stack holds an uninitialized object.
func (l *linear) pending() bool {
	for _, o := range l.origin {
		if o != nil {
			return true
		}
	}
	return false
}
