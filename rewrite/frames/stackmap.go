package frames

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Entry is a frame and the bytecode offset of the instruction it describes.
type Entry struct {
	Offset int
	Frame  Frame
}

// Error is a problem with one frame; Offset is the bytecode offset the frame describes, or -1
// when the problem is in the attribute's framing rather than in one frame. Callers add the class
// and method.
type Error struct {
	Offset int
	Err    error
}

func (e *Error) Error() string {
	if e.Offset < 0 {
		return "StackMapTable: " + e.Err.Error()
	}
	return fmt.Sprintf("frame at bytecode offset %d: %v", e.Offset, e.Err)
}

// Unwrap lets callers test for classfile.ErrPoolOverflow.
func (e *Error) Unwrap() error { return e.Err }

func errorf(offset int, format string, args ...any) *Error {
	return &Error{offset, fmt.Errorf(format, args...)}
}

// Limits bounds what a frame of one method may hold; a frame outside them cannot verify, and the
// reader rejects it rather than hand a pass a frame it would have to trust.
type Limits struct {
	CodeLength int // offsets must be below this
	MaxLocals  int
	MaxStack   int
}

// Frame kinds of the class file (JVMS 4.7.4), by their first frame_type value.
const (
	sameFrameMax         = 63
	sameLocals1Min       = 64
	sameLocals1Max       = 127
	sameLocals1Extended  = 247
	chopMin              = 248
	sameFrameExtended    = 251
	appendMax            = 254
	fullFrame            = 255
	maxDeltaLocalChanges = 3
)

// Decode reads the contents of a StackMapTable attribute into full frames with absolute
// offsets, in order. initial is the method's implicit first frame (see Initial); the deltas of
// the attribute are applied to it and to each frame in turn.
func Decode(data []byte, pool *classfile.Pool, initial Frame, lim Limits) ([]Entry, error) {
	r := reader{data: data}
	n := int(r.u2())
	if r.err != nil {
		return nil, errorf(-1, "truncated before number_of_entries")
	}
	// Every frame needs at least one byte, so a count larger than the data is a lie that would
	// otherwise make us allocate for it.
	if n > len(data)-2 {
		return nil, errorf(-1, "%d entries declared in %d bytes", n, len(data))
	}
	out := make([]Entry, 0, n)
	prevLocals, err := compact(initial.Locals)
	if err != nil {
		return nil, errorf(0, "initial frame: %w", err)
	}
	offset := -1
	for i := 0; i < n; i++ {
		start := r.pos
		ft := int(r.u1())
		var delta int
		var locals, stack []Type
		switch {
		case ft <= sameFrameMax:
			delta = ft
			locals = prevLocals
		case ft <= sameLocals1Max:
			delta = ft - sameLocals1Min
			locals = prevLocals
			stack = []Type{r.vtype(pool)}
		case ft < sameLocals1Extended:
			return nil, errorf(-1, "entry %d at byte %d: reserved frame type %d", i, start, ft)
		case ft == sameLocals1Extended:
			delta = int(r.u2())
			locals = prevLocals
			stack = []Type{r.vtype(pool)}
		case ft < sameFrameExtended:
			delta = int(r.u2())
			k := sameFrameExtended - ft
			if k > len(prevLocals) {
				return nil, errorf(-1, "entry %d at byte %d: chops %d locals from %d", i, start, k, len(prevLocals))
			}
			locals = prevLocals[:len(prevLocals)-k]
		case ft == sameFrameExtended:
			delta = int(r.u2())
			locals = prevLocals
		case ft <= appendMax:
			delta = int(r.u2())
			k := ft - sameFrameExtended
			locals = append(append([]Type(nil), prevLocals...), r.vtypes(k, pool)...)
		default:
			delta = int(r.u2())
			locals = r.vtypes(int(r.u2()), pool)
			stack = r.vtypes(int(r.u2()), pool)
		}
		if r.err != nil {
			return nil, errorf(-1, "entry %d at byte %d: %w", i, start, r.err)
		}
		if i == 0 {
			offset = delta
		} else {
			offset += delta + 1
		}
		if offset >= lim.CodeLength {
			return nil, errorf(offset, "beyond the code (%d bytes)", lim.CodeLength)
		}
		f := Frame{Locals: expand(locals), Stack: expand(stack)}
		if len(f.Locals) > lim.MaxLocals {
			return nil, errorf(offset, "%d local slots, max_locals is %d", len(f.Locals), lim.MaxLocals)
		}
		if len(f.Stack) > lim.MaxStack {
			return nil, errorf(offset, "%d stack slots, max_stack is %d", len(f.Stack), lim.MaxStack)
		}
		if err := checkUninitialized(f, lim.CodeLength); err != nil {
			return nil, &Error{offset, err}
		}
		out = append(out, Entry{Offset: offset, Frame: f})
		prevLocals = locals
	}
	if r.pos != len(data) {
		return nil, errorf(-1, "%d bytes after the last of %d entries", len(data)-r.pos, n)
	}
	return out, nil
}

func checkUninitialized(f Frame, codeLen int) error {
	for _, ts := range [][]Type{f.Locals, f.Stack} {
		for _, t := range ts {
			if t.Kind == Uninitialized && t.New >= codeLen {
				return fmt.Errorf("uninitialized(%d) is beyond the code", t.New)
			}
		}
	}
	return nil
}

// Encode writes frames (in increasing offset order) as the contents of a StackMapTable
// attribute, each as the smallest frame kind that expresses it relative to the frame before, as
// javac does. Object types made by the rewriter get a pool entry, which can fail with
// classfile.ErrPoolOverflow.
func Encode(entries []Entry, initial Frame, pool *classfile.Pool) ([]byte, error) {
	if len(entries) > 0xFFFF {
		return nil, errorf(-1, "%d frames, at most 65535 fit", len(entries))
	}
	// Most frames take a few bytes; the compact views alternate between two buffers (the
	// previous frame's locals are compared with the next), so a table costs few allocations.
	w := writer{pool: pool, buf: make([]byte, 0, 2+4*len(entries))}
	w.u2(len(entries))
	var bufs [2][]Type
	var stackBuf []Type
	prevLocals, err := compactInto(bufs[1][:0], initial.Locals)
	if err != nil {
		return nil, errorf(0, "initial frame: %w", err)
	}
	bufs[1] = prevLocals
	last := -1
	for i, e := range entries {
		if e.Offset <= last || e.Offset > 0xFFFF {
			return nil, errorf(e.Offset, "out of order after the frame at %d", last)
		}
		delta := e.Offset
		if i > 0 {
			delta = e.Offset - last - 1
		}
		last = e.Offset
		locals, err := compactInto(bufs[i%2][:0], e.Frame.Locals)
		if err != nil {
			return nil, errorf(e.Offset, "locals: %w", err)
		}
		bufs[i%2] = locals
		stack, err := compactInto(stackBuf[:0], e.Frame.Stack)
		if err != nil {
			return nil, errorf(e.Offset, "stack: %w", err)
		}
		stackBuf = stack
		if err := w.frame(delta, prevLocals, locals, stack); err != nil {
			return nil, &Error{e.Offset, err}
		}
		prevLocals = locals
	}
	return w.buf, nil
}

func (w *writer) frame(delta int, prev, locals, stack []Type) error {
	same := typesEqual(prev, locals)
	switch {
	case same && len(stack) == 0:
		if delta <= sameFrameMax {
			w.u1(delta)
		} else {
			w.u1(sameFrameExtended)
			w.u2(delta)
		}
		return w.err
	case same && len(stack) == 1:
		if delta <= sameLocals1Max-sameLocals1Min {
			w.u1(sameLocals1Min + delta)
		} else {
			w.u1(sameLocals1Extended)
			w.u2(delta)
		}
		w.vtype(stack[0])
		return w.err
	case len(stack) == 0 && len(locals) < len(prev) && len(prev)-len(locals) <= maxDeltaLocalChanges &&
		typesEqual(prev[:len(locals)], locals):
		w.u1(sameFrameExtended - (len(prev) - len(locals)))
		w.u2(delta)
		return w.err
	case len(stack) == 0 && len(locals) > len(prev) && len(locals)-len(prev) <= maxDeltaLocalChanges &&
		typesEqual(locals[:len(prev)], prev):
		w.u1(sameFrameExtended + len(locals) - len(prev))
		w.u2(delta)
		for _, t := range locals[len(prev):] {
			w.vtype(t)
		}
		return w.err
	}
	w.u1(fullFrame)
	w.u2(delta)
	w.u2(len(locals))
	for _, t := range locals {
		w.vtype(t)
	}
	w.u2(len(stack))
	for _, t := range stack {
		w.vtype(t)
	}
	return w.err
}

type reader struct {
	data []byte
	pos  int
	err  error
}

var errTruncated = errors.New("truncated")

func (r *reader) u1() uint8 {
	if r.err != nil || r.pos+1 > len(r.data) {
		r.err = errTruncated
		return 0
	}
	r.pos++
	return r.data[r.pos-1]
}

func (r *reader) u2() uint16 {
	if r.err != nil || r.pos+2 > len(r.data) {
		r.err = errTruncated
		return 0
	}
	r.pos += 2
	return binary.BigEndian.Uint16(r.data[r.pos-2:])
}

// vtypes reads n types. Each takes at least one byte, so a count beyond the remaining data is
// reported as truncation before anything is allocated for it.
func (r *reader) vtypes(n int, pool *classfile.Pool) []Type {
	if r.err != nil {
		return nil
	}
	if n > len(r.data)-r.pos {
		r.err = fmt.Errorf("%d types declared in the %d bytes left", n, len(r.data)-r.pos)
		return nil
	}
	ts := make([]Type, n)
	for j := range ts {
		ts[j] = r.vtype(pool)
	}
	return ts
}

func (r *reader) vtype(pool *classfile.Pool) Type {
	tag := r.u1()
	if r.err != nil {
		return Type{}
	}
	switch Kind(tag) {
	case Top, Integer, Float, Double, Long, Null, UninitializedThis:
		return Type{Kind: Kind(tag)}
	case Object:
		i := r.u2()
		if r.err != nil {
			return Type{}
		}
		name, err := pool.ClassName(i)
		if err != nil {
			r.err = fmt.Errorf("object type at byte %d: %w", r.pos-2, err)
			return Type{}
		}
		return Type{Kind: Object, Class: name, Index: i}
	case Uninitialized:
		return Type{Kind: Uninitialized, New: int(r.u2())}
	}
	r.err = fmt.Errorf("verification type tag %d at byte %d", tag, r.pos-1)
	return Type{}
}

type writer struct {
	buf  []byte
	pool *classfile.Pool
	err  error
}

func (w *writer) u1(v int) { w.buf = append(w.buf, byte(v)) }
func (w *writer) u2(v int) { w.buf = append(w.buf, byte(v>>8), byte(v)) }

func (w *writer) vtype(t Type) {
	w.u1(int(t.Kind))
	switch t.Kind {
	case Object:
		w.u2(int(w.classIndex(t)))
	case Uninitialized:
		if t.New < 0 || t.New > 0xFFFF {
			w.setErr(fmt.Errorf("uninitialized(%d) is not a bytecode offset", t.New))
		}
		w.u2(t.New)
	case Top, Integer, Float, Double, Long, Null, UninitializedThis:
	default:
		w.setErr(fmt.Errorf("unknown verification type %s", t.Kind))
	}
}

// classIndex reuses the pool index the type was read from while it still names the same
// class, so an unchanged frame is written back byte for byte.
func (w *writer) classIndex(t Type) uint16 {
	if t.Index != 0 && w.pool.IsClassNamed(t.Index, t.Class) {
		return t.Index
	}
	if t.Class == "" {
		w.setErr(errors.New("object type without a class name"))
		return 0
	}
	i, err := w.pool.AddClass(t.Class)
	if err != nil {
		w.setErr(err)
	}
	return i
}

func (w *writer) setErr(err error) {
	if w.err == nil {
		w.err = err
	}
}
