// Package ctormap analyses constructors and object creation by abstract interpretation of
// uninitialized types (section 4 and appendices A and B of "Portable profiling of memory
// allocation in Java").
//
// For a constructor it finds the invokespecial <init> that initializes `this` on each path (the
// constructor's own super() or this() call, which is not an allocation), the instructions
// before which `this` is initialized on every path (only those may be covered by a handler
// whose frame does not say uninitializedThis), and the map from the constructor to the
// alternate or superclass constructor it invokes, with a warning when different paths invoke
// different ones. For every method it pairs each `new` with the constructor call that
// initializes the object, the point after which the object counts as allocated.
//
// Code before super() is real: javac stores outer-this and captured variables first, Kotlin and
// Scala null-check arguments and store fields, Java 25 allows statements there, and
// hand-written bytecode may branch to different constructors. The analysis follows values, not
// patterns: it runs a data flow of package frames, which tracks uninitializedThis and
// uninitialized(new) through locals, the stack, branches, handlers and subroutines — one pass
// over the compiler's frames where the method has them, inference where it has none. A method
// without a `new` needs neither (initCallsWithoutNew), and one that is not a constructor and
// makes its objects in straight-line code, as compilers do, is paired by following the stack's
// slots alone (pairLinear); anything else in it goes to the data flow.
package ctormap

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// Target is a constructor invoked on an object: its class and descriptor.
type Target struct {
	Owner string // internal class name
	Desc  string
	// Alternate is true for this(...), a constructor of the same class; false for super(...).
	Alternate bool
}

func (t Target) String() string {
	kind := "superclass"
	if t.Alternate {
		kind = "alternate"
	}
	return fmt.Sprintf("%s.<init>%s (%s)", t.Owner, t.Desc, kind)
}

// InitCall is one invokespecial <init> and the constructor it invokes.
type InitCall struct {
	Insn *code.Insn
	Target
	// New is the `new` whose object the call initialises, nil for super()/this().
	New *code.Insn
	// Dup says a second reference to that object lies under the receiver (new; dup; ...), as
	// javac, Kotlin and Scala leave it: after the call it is on top of the stack.
	Dup bool
}

// NewSite is a `new` and the constructor calls that initialize the object it creates. Inits is
// empty when no path calls a constructor on it (appendix A: the object is never initialized);
// it has more than one entry when different paths do.
type NewSite struct {
	New   *code.Insn
	Class string
	Inits []InitCall
}

// Analysis is the result for one method.
type Analysis struct {
	Method code.Method
	// IsConstructor is true for <init> methods of every class but java/lang/Object, whose
	// receiver starts uninitialized.
	IsConstructor bool
	// Calls are the invokespecial <init> instructions whose receiver is this constructor's own
	// uninitialized `this`, in code order: the super()/this() call of each path.
	Calls []InitCall
	// Targets are the distinct constructors Calls invoke, in code order of their first call.
	Targets []Target
	// Warning is set when the constructor map cannot name one constructor: different paths
	// invoke different constructors (appendix B), or no path initializes `this`.
	Warning string
	// News lists every reachable `new` in code order.
	News []NewSite
	// Allocs are the calls that initialise a new object (the point after which it counts as
	// allocated), in the order the data flow visits them: code order of straight-line stretches.
	Allocs []InitCall

	// Every instruction is reached in compiled code and `this` is uninitialized only in a
	// constructor's prologue, so only the exceptions are stored.
	unreached map[*code.Insn]bool // nil when every instruction is reached
	// before is BeforeInit of the analysed body, worked out when ThisInitialized first asks
	// (passes ask BeforeInit of the body they edited instead).
	body       *code.Body
	before     map[*code.Insn]bool
	beforeDone bool
}

// Analyze runs the constructor analysis over a decoded body. It works the same for every class
// file version, including old code with jsr: the compiler's frames, when frames.Attach gave the
// body them, only make it faster (follow).
func Analyze(b *code.Body) (*Analysis, error) {
	a := &Analysis{
		Method:        b.Method,
		IsConstructor: b.Method.Name == "<init>" && b.Method.Access&classfile.AccStatic == 0 && b.Method.Class != frames.ObjectClass,
		body:          b,
	}
	hasNew := false
	for n := b.First(); n != nil && !hasNew; n = n.Next() {
		hasNew = n.Op == code.NEW
	}
	var err error
	if hasNew {
		// Most methods make their objects in straight-line code, which needs no data flow;
		// what that walk cannot follow, or finds wrong, the data flow does and reports.
		if ok, lerr := a.pairLinear(b); !ok || lerr != nil {
			err = a.follow(b)
		}
	} else {
		err = a.initCallsWithoutNew(b)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range a.Calls {
		if !containsTarget(a.Targets, c.Target) {
			a.Targets = append(a.Targets, c.Target)
		}
	}
	if a.IsConstructor {
		switch {
		case len(a.Targets) == 0:
			a.Warning = fmt.Sprintf("constructor %s never calls super() or this() on any path", b.Method)
		case len(a.Targets) > 1:
			var parts []string
			for _, c := range a.Calls {
				parts = append(parts, fmt.Sprintf("%s at offset %d", c.Target, c.Insn.Offset))
			}
			a.Warning = fmt.Sprintf("constructor %s invokes different constructors on different paths: %s; each invocation still creates one object", b.Method, strings.Join(parts, ", "))
		}
	}
	return a, nil
}

// follow runs the data flow over b and gathers Calls, News, Allocs and what it did not reach.
// A method with the compiler's frames is checked in one pass with them (frames.VisitReached);
// one without, or whose frames that pass refuses, is inferred (frames.Infer), as old code with
// jsr and the dead code some compilers leave under frames need.
func (a *Analysis) follow(b *code.Body) error {
	w := walker{a: a, b: b, news: map[*code.Insn]*NewSite{}}
	if fm, ok := b.Frames.(*frames.Method); ok && fm.VisitReached(w.visit) == nil {
		w.inCodeOrder()
	} else {
		a.Calls, a.Allocs = nil, nil
		w = walker{a: a, b: b, news: map[*code.Insn]*NewSite{}}
		fa, err := frames.Infer(b)
		if err != nil {
			return err
		}
		err = fa.Walk(w.visit)
		fa.Release()
		if err != nil {
			return err
		}
		// Walk visits the stretches of straight-line code in code order, so Calls and News
		// are in code order already.
	}
	insns := 0
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() {
			insns++
		}
	}
	if w.reached < insns {
		a.unreached = b.Unreached()
	}
	for _, n := range w.order {
		a.News = append(a.News, *w.news[n])
	}
	return nil
}

// initCallsWithoutNew gathers Calls of a method that has no `new`, without the data flow. The
// only uninitialized value such a method can hold is a constructor's own `this`, and an
// invokespecial <init> needs an uninitialized receiver (JVMS 4.10.1.9), so every reached one is
// the super()/this() call of its path; a method that is no constructor has none. Most
// constructors are like this (they store their arguments and call super()), and the count pass
// asks about every constructor of an accounted class, whose switch goes right after that call.
// Reached is what the data flow would reach: code.Body.Reach follows the same edges.
func (a *Analysis) initCallsWithoutNew(b *code.Body) error {
	live := b.Reach(nil)
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			continue
		}
		if !live[n.Num()] {
			if a.unreached == nil {
				a.unreached = map[*code.Insn]bool{}
			}
			a.unreached[n] = true
			continue
		}
		if n.Op != code.INVOKESPECIAL || !a.IsConstructor {
			continue
		}
		owner, name, desc, err := b.Pool.MemberRef(n.Index)
		if err != nil {
			return b.Method.Errorf(n.Offset, "invokespecial: %w", err)
		}
		if name == "<init>" {
			a.Calls = append(a.Calls, InitCall{Insn: n, Target: Target{Owner: owner, Desc: desc, Alternate: owner == b.Method.Class}})
		}
	}
	return nil
}

func appendCall(cs []InitCall, c InitCall) []InitCall {
	for _, x := range cs {
		if x.Insn == c.Insn {
			return cs
		}
	}
	return append(cs, c)
}

func containsTarget(ts []Target, t Target) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// walker gathers an Analysis from the frame-free data flow, instruction by instruction.
type walker struct {
	a       *Analysis
	b       *code.Body
	news    map[*code.Insn]*NewSite
	order   []*code.Insn
	reached int
}

// inCodeOrder sorts what a visit in data-flow order gathered into code order, the order Walk
// gathers it in: Calls, Allocs, the `new`s and each one's Inits.
func (w *walker) inCodeOrder() {
	byPos := func(x, y *code.Insn) int { return x.Num() - y.Num() }
	slices.SortFunc(w.a.Calls, func(x, y InitCall) int { return byPos(x.Insn, y.Insn) })
	slices.SortFunc(w.a.Allocs, func(x, y InitCall) int { return byPos(x.Insn, y.Insn) })
	slices.SortFunc(w.order, byPos)
	for _, site := range w.news {
		slices.SortFunc(site.Inits, func(x, y InitCall) int { return byPos(x.Insn, y.Insn) })
	}
}

func (w *walker) visit(in *code.Insn, before *frames.Frame) error {
	w.reached++
	b := w.b
	switch in.Op {
	case code.NEW:
		if w.news[in] == nil {
			name, err := b.Pool.ClassName(in.Index)
			if err != nil {
				return b.Method.Errorf(in.Offset, "new: %w", err)
			}
			w.news[in] = &NewSite{New: in, Class: name}
			w.order = append(w.order, in)
		}
	case code.INVOKESPECIAL:
		owner, name, desc, err := b.Pool.MemberRef(in.Index)
		if err != nil {
			return b.Method.Errorf(in.Offset, "invokespecial: %w", err)
		}
		if name != "<init>" {
			return nil
		}
		args, err := classfile.MethodArgSlots(desc)
		if err != nil {
			return b.Method.Errorf(in.Offset, "invokespecial: %w", err)
		}
		st := before.Stack
		if len(st) < args+1 {
			return b.Method.Errorf(in.Offset, "constructor call with %d stack slots", len(st))
		}
		recv := st[len(st)-args-1]
		call := InitCall{Insn: in, Target: Target{Owner: owner, Desc: desc, Alternate: owner == b.Method.Class}}
		switch recv.Kind {
		case frames.UninitializedThis:
			w.a.Calls = append(w.a.Calls, call)
		case frames.Uninitialized:
			site := w.news[recv.Site]
			if site == nil {
				return b.Method.Errorf(in.Offset, "constructor call on an object whose new was not seen")
			}
			call.New = recv.Site
			call.Dup = len(st) >= args+2 && st[len(st)-2-args].Equal(recv)
			site.Inits = appendCall(site.Inits, call)
			w.a.Allocs = append(w.a.Allocs, call)
		}
	}
	return nil
}

// BeforeInit returns the instructions of b, as it is now, that a path from the method's start
// reaches before the super()/this() call of Calls on that path, `this` still uninitialized:
// nil outside constructors. A handler must not cover them (its frame would have to say
// uninitializedThis, and it could neither use `this` nor return), and an entry probe cannot run
// there. Asked after a pass inserted code, it includes what was inserted before those calls.
func (a *Analysis) BeforeInit(b *code.Body) map[*code.Insn]bool {
	if !a.IsConstructor {
		return nil
	}
	stop := make(map[*code.Insn]bool, len(a.Calls))
	for _, c := range a.Calls {
		stop[c.Insn] = true
	}
	seen := b.Reach(stop)
	out := map[*code.Insn]bool{}
	for n := b.First(); n != nil; n = n.Next() {
		if !n.IsLabel() && seen[n.Num()] {
			out[n] = true
		}
	}
	return out
}

// Reached reports whether some path from the method's start reaches the instruction.
func (a *Analysis) Reached(in *code.Insn) bool { return !in.IsLabel() && !a.unreached[in] }

// ThisInitialized reports whether `this` is initialized on every path that reaches the
// instruction, before it runs: true for every reached instruction of a method that is not a
// constructor, and in a constructor for the instructions after its super()/this() call on all
// paths. Only such instructions may be covered by a handler whose frame does not hold
// uninitializedThis (the JVM's flagThisUninit). It is false for unreached code.
//
// It reads the body the analysis was made of, which must not have been released, and takes no
// account of edits made since.
func (a *Analysis) ThisInitialized(in *code.Insn) bool {
	if !a.beforeDone {
		a.beforeDone = true
		a.before = a.BeforeInit(a.body)
	}
	return a.Reached(in) && !a.before[in]
}

// Coverable returns the maximal runs of consecutive instructions, in code order, that are
// reached and before which `this` is initialized on every path: the ranges a handler over the
// whole body may cover. Each run is given by its first instruction and its last one.
func (a *Analysis) Coverable(b *code.Body) [][2]*code.Insn {
	var out [][2]*code.Insn
	var first, last *code.Insn
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			continue
		}
		if a.ThisInitialized(n) {
			if first == nil {
				first = n
			}
			last = n
			continue
		}
		if first != nil {
			out = append(out, [2]*code.Insn{first, last})
			first = nil
		}
	}
	if first != nil {
		out = append(out, [2]*code.Insn{first, last})
	}
	return out
}
