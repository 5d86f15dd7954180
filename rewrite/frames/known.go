package frames

import (
	"cmp"
	"slices"
	"sync"

	"github.com/heapledger/heapledger/rewrite/code"
)

// Known describes edits whose effect on the frames a pass knows in advance, so that the
// StackMapTable of the edited method follows from the compiler's frames without a data flow
// (Method.SetKnown). It holds for edits that
//
//   - add locals that are assigned before the first compiler frame and keep their type at every
//     later one (a local the pass stores again holds the same type, or null where the type is
//     a class), or, with AfterInit, that hold it at every frame after `this` is initialised;
//   - insert code that leaves the stack as it found it, touches no other local the program
//     reads, and makes no branch target;
//   - add at most one handler, Handler, over code after initialisation only, whose code reads
//     the added locals alone.
//
// Locals a pass adds for a moment (copies it makes and reads within one inserted sequence) are
// left out: the frames hold Top there, which every type is assignable to.
type Known struct {
	// Locals are the added locals that frames must hold.
	Locals []KnownLocal
	// Handler is the catch-all handler the pass added, nil for none. Its frame holds Locals
	// and, on the stack, Throwable.
	Handler   *code.Label
	Throwable Type
	// BeforeInit holds, in a constructor, the instructions that run before `this` is
	// initialised (commons.Wrapped.BeforeInit): frames there hold no AfterInit local.
	BeforeInit map[*code.Insn]bool
}

// KnownLocal is one added local and its type at the frames.
type KnownLocal struct {
	Slot      int
	Type      Type
	AfterInit bool
}

// SetKnown tells m that the edits made since Attach are described by k (see Known), so that
// AppendFrames writes the compiler's frames with the added locals instead of running the data
// flow. Where the encoded body has a branch target or handler that neither the compiler's
// frames nor k describe (a conditional branch that encoding widened), or the frames would not
// come out in order, AppendFrames runs the data flow after all.
func (m *Method) SetKnown(k *Known) { m.known = k }

// appendKnown writes the frames as Known describes them; ok is false when k does not describe
// the body, and the data flow must write them.
func (m *Method) appendKnown(dst []byte, b *code.Body) (out []byte, ok bool) {
	k := m.known
	if !m.describes(b, k) {
		return dst, false
	}
	width := 0
	for _, l := range k.Locals {
		width = max(width, l.Slot+1)
	}
	for _, ff := range m.fixed {
		width = max(width, len(ff.frame.Locals))
	}
	n := len(m.fixed)
	if k.Handler != nil {
		n++
	}
	sc := knownScratchPool.Get().(*knownScratch)
	defer sc.release()
	if cap(sc.slots) < width*n {
		sc.slots = make([]Type, width*n)
	}
	sc.slots = sc.slots[:width*n] // release clears what was used
	slots := sc.slots
	entries := sc.entries[:0]
	last := -1
	for _, ff := range m.fixed {
		f := ff.frame
		locals := slots[:width:width]
		slots = slots[width:]
		copy(locals, f.Locals)
		top := len(f.Locals)
		before := k.BeforeInit[nextOf(ff.label)]
		for _, l := range k.Locals {
			if !l.AfterInit || !before {
				locals[l.Slot] = l.Type
				top = max(top, l.Slot+1)
			}
		}
		f.Locals = locals[:top]
		f, err := withOffsets(f)
		if err != nil || ff.label.Pos() <= last {
			return dst, false
		}
		last = ff.label.Pos()
		entries = append(entries, Entry{Offset: last, Frame: f})
	}
	if k.Handler != nil {
		locals := slots[:width:width]
		top := 0
		for _, l := range k.Locals {
			locals[l.Slot] = l.Type
			top = max(top, l.Slot+1)
		}
		if k.Handler.Pos() <= last {
			return dst, false
		}
		sc.stack[0] = k.Throwable
		entries = append(entries, Entry{Offset: k.Handler.Pos(), Frame: Frame{Locals: locals[:top], Stack: sc.stack[:]}})
	}
	sc.entries = entries
	if len(entries) == 0 {
		return dst, true
	}
	data, err := sc.coder.AppendEncode(dst, entries, m.initial, b.Pool)
	if err != nil {
		return dst, false
	}
	return data, true
}

// knownScratch is appendKnown's memory, kept for the next method: every edited method of a
// pass that describes its edits has its frames written so.
type knownScratch struct {
	slots   []Type
	entries []Entry
	stack   [1]Type
	coder   Coder
}

var knownScratchPool = sync.Pool{New: func() any { return new(knownScratch) }}

func (sc *knownScratch) release() {
	clear(sc.slots)
	clear(sc.entries)
	sc.entries = sc.entries[:0]
	sc.stack[0] = Type{}
	sc.coder.Reset()
	knownScratchPool.Put(sc)
}

// describes reports whether every branch target and handler of b is a label one of the
// compiler's frames describes, or k's handler.
func (m *Method) describes(b *code.Body, k *Known) bool {
	for n := b.First(); n != nil; n = n.Next() {
		if n.Target != nil && !m.hasFrame(n.Target) {
			return false
		}
		if s := n.Switch; s != nil {
			if !m.hasFrame(s.Default) {
				return false
			}
			for _, t := range s.Targets {
				if !m.hasFrame(t) {
					return false
				}
			}
		}
	}
	for _, h := range b.Handlers {
		if h.Handler != k.Handler && !m.hasFrame(h.Handler) {
			return false
		}
	}
	return true
}

// hasFrame reports whether a compiler frame is keyed to l.
func (m *Method) hasFrame(l *code.Label) bool {
	_, ok := m.frameAt(l)
	return ok
}

// StackAt returns the operand stack of the compiler's frame at l (a long or a double in two
// slots, the second Top), and whether there is one. It is m's: the caller must not change it.
func (m *Method) StackAt(l *code.Label) ([]Type, bool) {
	i, ok := m.frameAt(l)
	if !ok {
		return nil, false
	}
	return m.fixed[i].frame.Stack, true
}

// frameAt finds the compiler frame keyed to l; they are in the order of their original
// offsets, which a decoded label keeps.
func (m *Method) frameAt(l *code.Label) (int, bool) {
	if l == nil || l.Offset < 0 {
		return 0, false
	}
	i, found := slices.BinarySearchFunc(m.fixed, l.Offset, func(f fixedFrame, off int) int { return cmp.Compare(f.label.Offset, off) })
	return i, found && m.fixed[i].label == l
}

// nextOf is the instruction a label stands before.
func nextOf(l *code.Label) *code.Insn {
	n := l.Node()
	for n != nil && n.IsLabel() {
		n = n.Next()
	}
	return n
}
