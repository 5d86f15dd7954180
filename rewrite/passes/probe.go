package passes

import (
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/commons"
	"github.com/heapledger/heapledger/rewrite/frames"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// ProbeClass is the internal name of the runtime class the probe pass calls.
const ProbeClass = "heapledger/probe/Probe"

// Probe returns the probe pass (issue 2, item 6). In every method with code it inserts
//
//	invokestatic Probe.enter()I; istore T           at entry (in constructors: after super()/this())
//	iload T; invokestatic Probe.exit(I)V            before every return
//	iload T; invokestatic Probe.unwind(I)V; athrow  a catch-all handler covering the body
//	invokestatic Probe.alloc()V                     after every new
//	dup; invokestatic Probe.array(Object)V          after every newarray, anewarray, multianewarray
//
// where T is a new local. In a constructor, code before the super()/this() call runs on an
// uninitialised `this`, which a handler must not cover, so entry and handler start where
// `this` becomes initialised. The exception stays on the stack through the handler, so it is
// rethrown unchanged.
func Probe() transform.Class { return &driver{name: "probe", ed: probeEditor{}} }

type probeEditor struct {
	// dataFlow makes every method's frames come from the general data flow of package frames,
	// so tests can check the frames the edits describe (frames.Known) against it.
	dataFlow bool
}

// probeRefs are the pool indices of the runtime's methods in one class, resolved once per class
// rather than once per inserted call.
type probeRefs struct {
	enter, exit, unwind, alloc, array code.Insn
	throwable                         uint16 // CONSTANT_Class of the handler frame's stack type
	stackMapName                      uint16 // Utf8 "StackMapTable", for methods that had none

	// token is the local of the method being edited that holds enter's token: the refs are the
	// probe's commons.Advice, and the class's methods are edited one after another.
	token int

	// known describes the edits of the method being edited to its frames.
	known frames.Known
	local [1]frames.KnownLocal
}

func (probeEditor) prepareClass(cf *classfile.Class) (any, error) {
	var r probeRefs
	var pr poolRefs
	idx, err := pr.resolve(cf.Pool, []memberRef{
		{ProbeClass, "enter", "()I"},
		{ProbeClass, "exit", "(I)V"},
		{ProbeClass, "unwind", "(I)V"},
		{ProbeClass, "alloc", "()V"},
		{ProbeClass, "array", "(Ljava/lang/Object;)V"},
	}, "java/lang/Throwable")
	if err != nil {
		return nil, err
	}
	for i, insn := range []*code.Insn{&r.enter, &r.exit, &r.unwind, &r.alloc, &r.array} {
		*insn = code.Insn{Op: code.INVOKESTATIC, Index: idx[i]}
	}
	r.throwable = idx[len(idx)-1]
	if cf.Major >= 50 {
		// Straight-line methods have no StackMapTable yet and need one for the handler.
		if r.stackMapName, _, err = pr.str(cf.Pool, "StackMapTable"); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

func (e probeEditor) editMethod(cf *classfile.Class, m *classfile.Member, cm *commons.Method, state any) error {
	r := state.(*probeRefs)
	b := cm.Body
	dead := cm.Dead()
	// Allocation calls first, while the node list holds only original instructions.
	for n := b.First(); n != nil; n = n.Next() {
		if dead[n] {
			continue
		}
		switch n.Op {
		case code.NEW:
			if err := b.InsertAfter(n, b.Seq().Insn(r.alloc)); err != nil {
				return err
			}
			n = n.Next() // past the inserted call
		case code.NEWARRAY, code.ANEWARRAY, code.MULTIANEWARRAY:
			if err := b.InsertAfter(n, b.Seq().Op(code.DUP).Insn(r.array)); err != nil {
				return err
			}
			n = n.Next().Next()
		}
	}
	r.token = b.NewLocal(1)
	w, err := commons.Wrap(cm, r)
	if err != nil {
		return err
	}
	// The edits are known, so the frames follow from the compiler's without a data flow.
	if r.stackMapName != 0 && !hasStackMap(b) {
		// Named here, from the constants resolved once per class, so that encoding does not
		// look the name up through the pool's index.
		b.Attrs = append(b.Attrs, &code.Attr{Kind: code.AttrStackMap, Name: r.stackMapName})
	}
	fm, ok := b.Frames.(*frames.Method)
	if !ok || e.dataFlow {
		return nil
	}
	// The edits add the token, an int from the entry (after super()/this()) on, and the
	// handler, which reads it alone: the frames follow from the compiler's (frames.Known).
	// The description is the class's, reused method after method: the method is encoded
	// before the next is edited.
	r.local[0] = frames.KnownLocal{Slot: r.token, Type: frames.IntType, AfterInit: true}
	r.known = frames.Known{
		Locals:     r.local[:],
		Handler:    w.Handler,
		Throwable:  frames.Type{Kind: frames.Object, Class: "java/lang/Throwable", Index: r.throwable},
		BeforeInit: w.BeforeInit,
	}
	fm.SetKnown(&r.known)
	return nil
}

// Enter, Exit and Unwind make the refs the probe's commons.Advice: the token enter returns is
// kept in a new local and handed to exit, or to unwind when an exception leaves the method.
func (r *probeRefs) Enter(s *code.Seq)              { s.Insn(r.enter).Store(code.ISTORE, r.token) }
func (r *probeRefs) Exit(s *code.Seq, _ *code.Insn) { s.Load(code.ILOAD, r.token).Insn(r.exit) }
func (r *probeRefs) Unwind(s *code.Seq)             { s.Load(code.ILOAD, r.token).Insn(r.unwind) }

func hasStackMap(b *code.Body) bool {
	for _, a := range b.Attrs {
		if a.Kind == code.AttrStackMap {
			return true
		}
	}
	return false
}
