package passes

import (
	"sync"

	"github.com/heapledger/heapledger/rewrite/code"
	"github.com/heapledger/heapledger/rewrite/frames"
)

// probeFrames writes the StackMapTable of a probed method without running a data flow, because
// the probe's edits change the frames in a way known in advance:
//
//   - the entry sequence runs before everything else (in a constructor: right after each
//     super()/this() call), so every compiler frame after it gains the token (an int) in its new
//     slot and is otherwise unchanged, while frames of code that runs before `this` is
//     initialised stay as they were: the inserted exit, alloc and array calls leave the stack
//     as they found it, and none of them is a branch target;
//   - the handler is the only new branch target, and its frame — every local Top but the token,
//     the Throwable on the stack — is valid for any instruction it covers, since Top accepts
//     every type.
//
// When encoding created a branch target of its own (a conditional branch widened into an
// inverted branch over a goto_w), the frame there depends on the types at that point, so the
// general data flow of package frames writes the table instead. This path exists for
// speed: it skips a fixed-point data flow over every method, which dominated the pass's cost.
type probeFrames struct {
	initial frames.Frame
	fixed   []labeledFrame
	token   int
	handler *code.Label
	pre     map[*code.Insn]bool // constructors: instructions that run before `this` is initialised
	// throwable is the pool index of java/lang/Throwable, resolved with the probe's constants.
	throwable uint16
	// handlerStack holds the handler frame's one stack type.
	handlerStack [1]frames.Type

	// The memory of the frames read and written, kept for the next method (Release).
	coder   frames.Coder
	slots   []frames.Type
	entries []frames.Entry
}

// probeFramesPool keeps released probeFrames with their memory: every probed method has one.
var probeFramesPool = sync.Pool{New: func() any { return new(probeFrames) }}

// Release is called by the body's Release once the method is encoded: the frames and their
// memory go to the next method.
func (p *probeFrames) Release() {
	p.coder.Reset()
	clear(p.fixed)
	clear(p.entries)
	*p = probeFrames{coder: p.coder, fixed: p.fixed[:0], slots: p.slots[:0], entries: p.entries[:0]}
	probeFramesPool.Put(p)
}

type labeledFrame struct {
	label *code.Label
	frame frames.Frame
}

// newProbeFrames reads the compiler's frames of a body, keyed by the labels of their original
// offsets (which edits never move), and returns nil when this path cannot apply: class files
// older than version 50 (no frames), or frames that do not decode cleanly, which the general
// data flow will then report.
func newProbeFrames(b *code.Body, r *probeRefs) *probeFrames {
	if b.Method.Major < 50 {
		return nil
	}
	initial, err := frames.Initial(b.Method.Class, b.Method.Name, b.Method.Desc, b.Method.Access)
	if err != nil {
		return nil
	}
	// The implicit frame's classes carry no pool index; frames derived from it would make the
	// writer look each one up by adding it to the pool. Names only: a class the pool lacks (ASCII
	// or not) stays 0 and the writer adds it.
	for i, t := range initial.Locals {
		if t.Kind == frames.Object && t.Index == 0 {
			initial.Locals[i].Index = r.classIndex(t.Class)
		}
	}
	p := probeFramesPool.Get().(*probeFrames)
	p.initial = initial
	for _, a := range b.Attrs {
		if a.Kind != code.AttrStackMap || a.Raw == nil {
			continue // none, or the empty one named for a method that had none
		}
		if !p.readFixed(b, a.Raw) {
			p.Release()
			return nil
		}
	}
	return p
}

// readFixed decodes the compiler's frames and keys them to their labels; false when they do
// not decode cleanly or name offsets the body has no label or `new` for.
func (p *probeFrames) readFixed(b *code.Body, raw []byte) bool {
	entries, err := p.coder.Decode(raw, b.Pool, p.initial, frames.Limits{CodeLength: b.CodeLen(), MaxLocals: b.MaxLocals, MaxStack: b.MaxStack})
	if err != nil {
		return false
	}
	for _, en := range entries {
		l := b.LabelAt(en.Offset)
		if l == nil {
			return false
		}
		for _, ts := range [][]frames.Type{en.Frame.Locals, en.Frame.Stack} {
			for i := range ts {
				if ts[i].Kind == frames.Uninitialized {
					site := b.InsnAt(ts[i].New)
					if site == nil || site.Op != code.NEW {
						return false
					}
					ts[i].Site = site
				}
			}
		}
		p.fixed = append(p.fixed, labeledFrame{l, en.Frame})
	}
	return true
}

// EncodeFrames implements code.FrameEncoder.
func (p *probeFrames) EncodeFrames(b *code.Body) ([]byte, error) { return p.AppendFrames(nil, b) }

// AppendFrames implements code.FrameAppender.
func (p *probeFrames) AppendFrames(dst []byte, b *code.Body) ([]byte, error) {
	if p.encoderMadeTargets(b) {
		m, err := frames.Attach(b)
		if err != nil {
			return nil, err
		}
		return m.AppendFrames(dst, b)
	}
	entries := p.entries[:0]
	// The token's slot is past every slot the compiler's frames use, so every frame that has
	// it holds token+1 locals: they are cut from one array, the handler's included.
	width := p.token + 1
	if n := width * (len(p.fixed) + 1); cap(p.slots) < n {
		p.slots = make([]frames.Type, n)
	} else {
		p.slots = p.slots[:n]
		clear(p.slots)
	}
	slots := p.slots
	for _, ff := range p.fixed {
		f := ff.frame
		if !p.pre[nextInsn(ff.label)] {
			// The locals grow by Top padding and the int; no copy of the stack.
			locals := slots[:width:width]
			slots = slots[width:]
			copy(locals, f.Locals)
			for i := len(f.Locals); i < p.token; i++ {
				locals[i] = frames.TopType
			}
			locals[p.token] = frames.IntType
			f.Locals = locals
		}
		if hasUninitialized(f) {
			f = f.Clone()
			for _, ts := range [][]frames.Type{f.Locals, f.Stack} {
				for i := range ts {
					if ts[i].Kind == frames.Uninitialized {
						ts[i].New = ts[i].Site.Pos()
					}
				}
			}
		}
		entries = append(entries, frames.Entry{Offset: ff.label.Pos(), Frame: f})
	}
	// The handler's frame: every local Top (the zero Type) but the token.
	h := frames.Frame{Locals: slots[:width:width], Stack: p.handlerStack[:]}
	h.Locals[p.token] = frames.IntType
	p.handlerStack[0] = frames.Type{Kind: frames.Object, Class: "java/lang/Throwable", Index: p.throwable}
	entries = append(entries, frames.Entry{Offset: p.handler.Pos(), Frame: h})
	p.entries = entries
	return p.coder.AppendEncode(dst, entries, p.initial, b.Pool)
}

// encoderMadeTargets reports whether some branch goes to a label that neither the decoder nor
// the pass made: one the encoder added when it widened a conditional branch.
func (p *probeFrames) encoderMadeTargets(b *code.Body) bool {
	for n := b.First(); n != nil; n = n.Next() {
		if n.Target != nil && n.Target.Offset < 0 {
			return true
		}
	}
	return false
}

// nextInsn is the instruction a label stands before.
func nextInsn(l *code.Label) *code.Insn {
	n := l.Node()
	for n != nil && n.IsLabel() {
		n = n.Next()
	}
	return n
}

func hasUninitialized(f frames.Frame) bool {
	for _, ts := range [][]frames.Type{f.Locals, f.Stack} {
		for _, t := range ts {
			if t.Kind == frames.Uninitialized {
				return true
			}
		}
	}
	return false
}
