package frames

import (
	"errors"
	"fmt"
	"sync"

	"github.com/heapledger/heapledger/rewrite/code"
)

// Method keeps the frames of one method while a pass edits its body and writes the
// StackMapTable of the edited code: Attach installs it as the body's code.FrameEncoder.
//
// The compiler's frames stay on their labels, so they move with the code they describe. When
// the body is encoded, a data flow over the final instruction list (the compiler's frames are
// authoritative where they exist, as in the JVM's type checker) does three things:
//
//   - locals added by a pass (slots from the method's original max_locals up) are added to every
//     compiler frame that all incoming paths reach with the local assigned; a frame that some
//     path reaches without it keeps Top there, which is what the JVM would see;
//   - uninitialized types keep naming their `new` instruction, whose offset is taken only now;
//   - every point that needs a frame and has none (a branch target or handler made by inserted
//     code, the fall-through of a conditional branch that encoding widened, code after an
//     inserted jump) gets one: the join of its incoming states. A join that would need a
//     common supertype of two classes is an error, never a guess.
//
// A handler a pass adds over the whole body gets the join of the states before and after every
// instruction it covers (the JVM checks a handler against both): each local keeps its type where
// all of them agree and is Top elsewhere, and the stack is the caught exception alone. That
// frame is assignable from every covered state by construction, because Top is a supertype of
// everything and an agreed type of itself, so no class hierarchy is needed. The one exception
// is the JVM's flagThisUninit: a state whose locals hold uninitializedThis (a constructor before
// its super()/this() call) is assignable only to a frame that holds it too, and a join with
// states after the call loses it. Such a handler is refused, which is why a pass must start its
// handler ranges after super()/this() on every path (package ctormap finds where).
//
// Class files older than version 50 have no frames and get none. Version 50 is treated like
// every later version: JVMS 4.10 lets a JVM fall back to verification by type inference when
// the frames of a version 50 class fail, but a rewritten method should not depend on a
// fallback that is optional and costs a second verification, so frames are maintained the same
// way and a method whose frames cannot be derived is left unmodified.
type Method struct {
	body       *code.Body
	initial    Frame
	fixed      []fixedFrame
	origLocals int
	noFrames   bool
	known      *Known // SetKnown
	coder      *Coder // holds the memory of fixed (Attach, Release)
}

type fixedFrame struct {
	label *code.Label
	frame Frame
}

// LabelFrame is one frame of the class file and the label of the instruction it describes.
// Uninitialized types in it name their `new` by Site.
type LabelFrame struct {
	Label *code.Label
	Frame Frame
}

// CompilerFrames returns the frames the method's StackMapTable had, in their original order,
// keyed by labels so that they stay valid while the body is edited. The frames are shared with
// m: a caller that changes one must Clone it first.
func (m *Method) CompilerFrames() []LabelFrame {
	out := make([]LabelFrame, len(m.fixed))
	for i, f := range m.fixed {
		out[i] = LabelFrame{f.label, f.frame}
	}
	return out
}

// Attach reads the StackMapTable of a freshly decoded body, keys its frames by the body's
// labels and makes the returned Method the body's FrameEncoder. Call it before editing.
func Attach(b *code.Body) (*Method, error) {
	initial, err := Initial(b.Method.Class, b.Method.Name, b.Method.Desc, b.Method.Access)
	if err != nil {
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	m := methodPool.Get().(*Method)
	*m = Method{body: b, initial: initial, origLocals: b.MaxLocals, noFrames: b.Method.Major < 50, fixed: m.fixed[:0]}
	if len(initial.Locals) > m.origLocals {
		m.origLocals = len(initial.Locals)
	}
	b.Frames = m
	if m.noFrames {
		return m, nil
	}
	var raw []byte
	for _, a := range b.Attrs {
		if a.Kind == code.AttrStackMap {
			raw = a.Raw
		}
	}
	if raw == nil {
		return m, nil
	}
	m.coder = coderPool.Get().(*Coder)
	entries, err := m.coder.Decode(raw, b.Pool, initial, Limits{CodeLength: b.CodeLen(), MaxLocals: b.MaxLocals, MaxStack: b.MaxStack})
	if err != nil {
		// m stays the body's FrameEncoder, which the body's Release gives back.
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	for _, en := range entries {
		l := b.LabelAt(en.Offset)
		if l == nil {
			return nil, b.Method.Errorf(en.Offset, "%w: frame here: no instruction starts there", ErrNoFrames)
		}
		for _, ts := range [][]Type{en.Frame.Locals, en.Frame.Stack} {
			for i := range ts {
				if ts[i].Kind != Uninitialized {
					continue
				}
				site := b.InsnAt(ts[i].New)
				if site == nil || site.Op != code.NEW {
					return nil, b.Method.Errorf(en.Offset, "%w: frame here: uninitialized(%d) does not name a new instruction", ErrNoFrames, ts[i].New)
				}
				ts[i].Site = site
			}
		}
		m.fixed = append(m.fixed, fixedFrame{l, en.Frame})
	}
	return m, nil
}

// The memory the compiler's frames are decoded into (Attach), and the Method itself, go to the
// next method: every method a pass edits has its frames attached.
var (
	coderPool  = sync.Pool{New: func() any { return new(Coder) }}
	methodPool = sync.Pool{New: func() any { return new(Method) }}
)

// Release gives m and the memory of the compiler's frames to the next method Attach reads; m
// must not be used afterwards. The body's Release calls it (code.Body.Release).
func (m *Method) Release() {
	if m.coder != nil {
		m.coder.Reset()
		coderPool.Put(m.coder)
	}
	clear(m.fixed)
	*m = Method{fixed: m.fixed[:0]}
	methodPool.Put(m)
}

// Initial is the method's implicit first frame.
func (m *Method) Initial() Frame { return m.initial }

// engine builds a strict engine over the body as it is now and runs it to its fixed point.
func (m *Method) engine() (*engine, error) {
	e, err := m.fixedEngine()
	if err != nil {
		return nil, err
	}
	if err := e.run(); err != nil {
		e.release()
		return nil, err
	}
	return e, nil
}

// fixedEngine builds a strict engine over the body as it is now, with the compiler's frames on
// their heads, not yet run.
func (m *Method) fixedEngine() (*engine, error) {
	e := newEngine(m.body, m.initial, true)
	e.origLocals = m.origLocals
	if err := e.findHeads(); err != nil {
		e.release()
		return nil, err
	}
	for _, ff := range m.fixed {
		i, err := e.labelIndex(ff.label)
		if err != nil {
			e.release()
			return nil, fmt.Errorf("frame at original offset %d: %w", ff.label.Offset, err)
		}
		h := e.headAt(i)
		if h.fixed != nil && !h.fixed.Equal(ff.frame) {
			e.release()
			return nil, fmt.Errorf("frames at original offsets %d and %d now describe one position and differ", h.fixedAt, ff.label.Offset)
		}
		f := ff.frame
		h.fixed, h.fixedAt = &f, ff.label.Offset
	}
	return e, nil
}

// errNotOnePass is VisitReached's refusal of a method it cannot check in one pass.
var errNotOnePass = errors.New("a join without a compiler frame, or one walked twice")

// VisitReached calls fn before every instruction that a path from the method's start reaches,
// with the frame there, once each, in one pass over the code: at every join it takes the
// compiler's frame as it is, as the JVM's type checker does (JVMS 4.10.1), where Analyze and
// Infer find the frames by iterating to a fixed point and Walk then replays the code a second
// time. Instructions come in the order the data flow meets them, not in code order. It fails,
// possibly after visiting some, for a class file without frames, for code the strict machine
// rejects, and for a join the compiler's frames do not describe (code a pass inserted);
// Infer is the way then. The compiler's frames are taken as given, not checked against the
// states that reach them, as the JVM's verifier would check them. fn must not change the frame.
func (m *Method) VisitReached(fn func(in *code.Insn, before *Frame) error) error {
	if m.noFrames {
		return ErrNoFrames
	}
	e, err := m.fixedEngine()
	if err != nil {
		return err
	}
	defer e.release()
	for _, h := range e.heads {
		if h != nil && h.fixed == nil {
			return errNotOnePass
		}
	}
	e.visit, e.once = fn, true
	return e.fromEntry()
}

// Analyze computes the frames of the body as it is now, for a pass that needs to know the
// types at a point (what is on the stack before an instruction, which locals hold what). A
// method of a class file older than version 50 is analysed without frames, as Infer does.
func (m *Method) Analyze() (*Analysis, error) {
	if m.noFrames {
		return Infer(m.body)
	}
	e, err := m.engine()
	if err != nil {
		return nil, m.body.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	return &Analysis{e: e}, nil
}

// EncodeFrames implements code.FrameEncoder: it returns the contents of the StackMapTable of
// the encoded body, or nil for a class file that has no frames.
func (m *Method) EncodeFrames(b *code.Body) ([]byte, error) {
	data, err := m.AppendFrames(nil, b)
	if len(data) == 0 {
		return nil, err
	}
	return data, err
}

// AppendFrames implements code.FrameAppender: EncodeFrames appending to dst, which it returns
// as it was when no table is needed.
func (m *Method) AppendFrames(dst []byte, b *code.Body) ([]byte, error) {
	if m.noFrames {
		return dst, nil
	}
	if b != m.body {
		return nil, b.Method.Errorf(-1, "%w: frames attached to another body", ErrNoFrames)
	}
	if m.known != nil {
		if out, ok := m.appendKnown(dst, b); ok {
			return out, nil
		}
	}
	e, err := m.engine()
	if err != nil {
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	defer e.release()
	var entries []Entry
	for _, i := range e.sortedHeads() {
		h := e.heads[i]
		if h.fixed == nil && !h.needed {
			continue
		}
		next := e.nextInsn(i)
		if next == nil {
			return nil, b.Method.Errorf(-1, "%w: the %s is at the end of the code", ErrNoFrames, h.why())
		}
		if !h.visited {
			return nil, b.Method.Errorf(-1, "%w: no path reaches the %s at %s, so no frame can be derived for it", ErrNoFrames, h.why(), where(next))
		}
		f := h.frame(e.origLocals)
		if h.fixed == nil && h.sawUninitThis && !hasUninitThis(f.Locals) {
			return nil, b.Method.Errorf(-1, "%w: the %s at %s is reached both before and after this is initialized by super()/this(); no frame can hold both", ErrNoFrames, h.why(), where(next))
		}
		f, err := withOffsets(f)
		if err != nil {
			return nil, b.Method.Errorf(-1, "%w: frame at %s: %w", ErrNoFrames, where(next), err)
		}
		entries = append(entries, Entry{Offset: next.Pos(), Frame: f})
	}
	if len(entries) == 0 {
		// Straight-line code needs no table; an empty one would only cost bytes.
		return dst, nil
	}
	data, err := AppendEncode(dst, entries, m.initial, b.Pool)
	if err != nil {
		return nil, b.Method.Errorf(-1, "writing the StackMapTable: %w", err)
	}
	return data, nil
}

// nextInsn returns the first instruction at or after node i.
func (e *engine) nextInsn(i int) *code.Insn {
	for ; i < len(e.nodes); i++ {
		if !e.nodes[i].IsLabel() {
			return e.nodes[i]
		}
	}
	return nil
}

// withOffsets returns f with every uninitialized type naming its `new` by the offset it was
// encoded at.
func withOffsets(f Frame) (Frame, error) {
	if !hasKind(f.Locals, Uninitialized) && !hasKind(f.Stack, Uninitialized) {
		return f, nil
	}
	out := f.Clone()
	for _, ts := range [][]Type{out.Locals, out.Stack} {
		for i, t := range ts {
			if t.Kind != Uninitialized {
				continue
			}
			if t.Site == nil || t.Site.Removed() {
				return Frame{}, fmt.Errorf("%s names a new instruction that is no longer in the code", t)
			}
			ts[i].New = t.Site.Pos()
		}
	}
	return out, nil
}

func hasKind(ts []Type, k Kind) bool {
	for _, t := range ts {
		if t.Kind == k {
			return true
		}
	}
	return false
}

// Analysis holds the result of a data flow over a body: the state at every join, from which
// the state before any instruction is replayed on demand.
type Analysis struct {
	e *engine
}

// Infer analyses a body without using its frames, for class files that have none (versions
// below 50, which may use jsr and ret) and for analyses that must not depend on them. Joins
// never fail on valid code: two different classes become "some reference" (an Object type with
// an empty Class), and uninitializedThis met by anything stays uninitializedThis, the JVM's
// flagThisUninit kept in the type. Its frames are for analysis only and are never written.
func Infer(b *code.Body) (*Analysis, error) {
	initial, err := Initial(b.Method.Class, b.Method.Name, b.Method.Desc, b.Method.Access)
	if err != nil {
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	e := newEngine(b, initial, false)
	e.origLocals = 1 << 16 // no compiler frames: nothing is "added"
	if err := e.findHeads(); err != nil {
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	if err := e.run(); err != nil {
		return nil, b.Method.Errorf(-1, "%w: %w", ErrNoFrames, err)
	}
	return &Analysis{e: e}, nil
}

// Release hands the analysis's working memory back for reuse by later analyses; a must not be
// used afterwards. Calling it is optional and saves allocations on hot paths.
func (a *Analysis) Release() {
	if a.e != nil {
		a.e.release()
		a.e = nil
	}
}

// Before returns the frame before instruction in, and false when no path reaches it.
func (a *Analysis) Before(in *code.Insn) (Frame, bool) {
	e := a.e
	if in.IsLabel() {
		return Frame{}, false
	}
	// Insn.Num is the index the analysis numbered the body with, unless later edits
	// renumbered it: then the node at that index is another one.
	idx := in.Num()
	if idx < 0 || idx >= len(e.nodes) || e.nodes[idx] != in {
		return Frame{}, false
	}
	start, state := -1, e.initial
	for j := idx; j >= 0; j-- {
		if h := e.heads[j]; h != nil {
			if !h.visited {
				return Frame{}, false
			}
			start, state = j, h.frame(e.origLocals)
			break
		}
		if j < idx && !e.nodes[j].IsLabel() && code.EndsFlow(e.nodes[j].Op) {
			return Frame{}, false
		}
	}
	if start < 0 {
		start = 0
	}
	f := state.Clone()
	m := e.m
	m.f = &f
	for j := start; j < idx; j++ {
		if n := e.nodes[j]; !n.IsLabel() {
			if err := m.exec(n); err != nil {
				return Frame{}, false
			}
		}
	}
	return f, true
}

// Walk calls fn once for every instruction that some path reaches, in code order within each
// stretch of straight-line code, with the frame before it. The frame is only valid during the
// call; fn must copy what it keeps. An error from fn stops the walk and is returned.
func (a *Analysis) Walk(fn func(in *code.Insn, before *Frame) error) error {
	e := a.e
	e.visit = fn
	defer func() { e.visit = nil }()
	if e.heads[0] == nil && len(e.nodes) > 0 {
		if err := e.walk(0, e.initial); err != nil {
			return err
		}
	}
	for _, i := range e.sortedHeads() {
		if h := e.heads[i]; h.visited {
			if err := e.walk(i, h.frame(e.origLocals)); err != nil {
				return err
			}
		}
	}
	return nil
}
