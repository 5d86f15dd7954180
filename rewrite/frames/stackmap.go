package frames

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

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
//
// The compact lists a frame is read into are scratch, reused from frame to frame; only the
// expanded frames are kept, and they share one backing array (each its own part of it, with no
// room to grow into its neighbour), so a table costs a few allocations rather than some per frame.
func Decode(data []byte, pool *classfile.Pool, initial Frame, lim Limits) ([]Entry, error) {
	var c Coder
	return c.Decode(data, pool, initial, lim)
}

// Coder decodes and encodes StackMapTables with memory it keeps from one table to the next, for
// a caller that handles one method after another (Reset between them): what Decode returned is
// valid until Reset.
type Coder struct {
	ar      arena
	bufs    [2][]Type // Decode's compact locals, Encode's compact views
	stack   []Type
	entries []Entry
}

// Reset makes the memory of everything the Coder returned before free for the next method.
func (c *Coder) Reset() {
	c.ar.reset()
	clear(c.entries)
	c.entries = c.entries[:0]
}

// Decode is the package's Decode with the Coder's memory.
func (c *Coder) Decode(data []byte, pool *classfile.Pool, initial Frame, lim Limits) ([]Entry, error) {
	r := reader{data: data, pool: pool}
	n := int(r.u2())
	if r.err != nil {
		return nil, errorf(-1, "truncated before number_of_entries")
	}
	// Every frame needs at least one byte, so a count larger than the data is a lie that would
	// otherwise make us allocate for it.
	if n > len(data)-2 {
		return nil, errorf(-1, "%d entries declared in %d bytes", n, len(data))
	}
	// The entries follow those decoded since Reset, in the same array while it has room.
	start := len(c.entries)
	out := slices.Grow(c.entries, n)
	// The previous frame's compact locals live in bufs[cur]; a frame that lists its locals
	// (append, full) is read into the other buffer, so it can start from the previous ones.
	bufs := &c.bufs
	stackBuf := c.stack
	cur := 0
	prevLocals, err := compactInto(bufs[cur][:0], initial.Locals)
	if err != nil {
		return nil, errorf(0, "initial frame: %w", err)
	}
	bufs[cur] = prevLocals
	ar := &c.ar
	ar.next = max(ar.next, 4*(len(initial.Locals)+1))
	offset := -1
	for i := 0; i < n; i++ {
		start := r.pos
		ft := int(r.u1())
		var delta int
		locals, stack := prevLocals, stackBuf[:0]
		switch {
		case ft <= sameFrameMax:
			delta = ft
		case ft <= sameLocals1Max:
			delta = ft - sameLocals1Min
			stack = append(stack, r.vtype())
		case ft < sameLocals1Extended:
			return nil, errorf(-1, "entry %d at byte %d: reserved frame type %d", i, start, ft)
		case ft == sameLocals1Extended:
			delta = int(r.u2())
			stack = append(stack, r.vtype())
		case ft < sameFrameExtended:
			delta = int(r.u2())
			k := sameFrameExtended - ft
			if k > len(prevLocals) {
				return nil, errorf(-1, "entry %d at byte %d: chops %d locals from %d", i, start, k, len(prevLocals))
			}
			locals = prevLocals[:len(prevLocals)-k]
		case ft == sameFrameExtended:
			delta = int(r.u2())
		case ft <= appendMax:
			delta = int(r.u2())
			cur = 1 - cur
			locals = r.vtypes(append(bufs[cur][:0], prevLocals...), ft-sameFrameExtended)
			bufs[cur] = locals
		default:
			delta = int(r.u2())
			cur = 1 - cur
			locals = r.vtypes(bufs[cur][:0], int(r.u2()))
			bufs[cur] = locals
			stack = r.vtypes(stack, int(r.u2()))
		}
		stackBuf = stack
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
		f := Frame{Locals: ar.expand(locals), Stack: ar.expand(stack)}
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
	c.stack = stackBuf
	if r.pos != len(data) {
		return nil, errorf(-1, "%d bytes after the last of %d entries", len(data)-r.pos, n)
	}
	c.entries = out
	return out[start:len(out):len(out)], nil
}

// arena hands out the expanded frames of one table from shared backing arrays.
type arena struct {
	free []Type
	next int // the capacity of the next backing array, doubled each time one is made
	// last is the most recent backing array, which reset hands out again from its start.
	last []Type
}

// reset clears the last backing array and hands it out again; earlier ones are left to their
// holders and the collector.
func (a *arena) reset() {
	clear(a.last[:len(a.last)-len(a.free)]) // the part handed out
	a.free = a.last
}

// expand is the inverse of compact, into the arena. The result's capacity is its length, so
// appending to one frame's slots copies them rather than overwrite the next frame's.
func (a *arena) expand(ts []Type) []Type {
	n := len(ts)
	for _, t := range ts {
		if t.IsWide() {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	if len(a.free) < n {
		c := max(a.next, n)
		a.next = 2 * c
		a.free = make([]Type, c)
		a.last = a.free
	}
	out := a.free[:0:n]
	a.free = a.free[n:]
	for _, t := range ts {
		out = append(out, t)
		if t.IsWide() {
			out = append(out, TopType)
		}
	}
	return out
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
	// Most frames take a few bytes.
	return AppendEncode(make([]byte, 0, 2+4*len(entries)), entries, initial, pool)
}

// AppendEncode is Encode appending the contents to dst, for a writer that builds the whole
// Code attribute in one buffer.
func AppendEncode(dst []byte, entries []Entry, initial Frame, pool *classfile.Pool) ([]byte, error) {
	var c Coder
	return c.AppendEncode(dst, entries, initial, pool)
}

// AppendEncode is the package's AppendEncode with the Coder's memory.
func (c *Coder) AppendEncode(dst []byte, entries []Entry, initial Frame, pool *classfile.Pool) ([]byte, error) {
	if len(entries) > 0xFFFF {
		return nil, errorf(-1, "%d frames, at most 65535 fit", len(entries))
	}
	// The compact views alternate between two buffers (the previous frame's locals are compared
	// with the next), kept by the Coder, so a table costs no allocation of its own.
	w := writer{pool: pool, buf: dst}
	w.u2(len(entries))
	// The buffers are sized for the largest frame, so compacting never grows one.
	maxLocals, maxStack := len(initial.Locals), 0
	for _, e := range entries {
		maxLocals, maxStack = max(maxLocals, len(e.Frame.Locals)), max(maxStack, len(e.Frame.Stack))
	}
	bufs := [2][]Type{grown(c.bufs[0], maxLocals), grown(c.bufs[1], maxLocals)}
	stackBuf := grown(c.stack, maxStack)
	c.bufs, c.stack = bufs, stackBuf
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

// grown returns buf emptied, with room for n types.
func grown(buf []Type, n int) []Type {
	if cap(buf) < n {
		return make([]Type, 0, n)
	}
	return buf[:0]
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
	pool *classfile.Pool
	// names holds the class names read most recently, by pool index (0: an empty slot, never
	// a valid index).
	names    [8]namedIndex
	nextName int
}

type namedIndex struct {
	index uint16
	name  string
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

// vtypes reads n types, appending them to dst. Each takes at least one byte, so a count beyond
// the remaining data is reported as truncation before anything is allocated for it.
func (r *reader) vtypes(dst []Type, n int) []Type {
	if r.err != nil {
		return dst
	}
	if n > len(r.data)-r.pos {
		r.err = fmt.Errorf("%d types declared in the %d bytes left", n, len(r.data)-r.pos)
		return dst
	}
	for j := 0; j < n; j++ {
		dst = append(dst, r.vtype())
	}
	return dst
}

func (r *reader) vtype() Type {
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
		name, err := r.className(i)
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

// className is the pool's ClassName, remembering the last few names read: a table names the
// same few classes in frame after frame, and each decoding would make a new string.
func (r *reader) className(i uint16) (string, error) {
	for _, c := range r.names {
		if c.index == i && i != 0 {
			return c.name, nil
		}
	}
	name, err := r.pool.ClassName(i)
	if err != nil {
		return "", err
	}
	r.names[r.nextName%len(r.names)] = namedIndex{i, name}
	r.nextName++
	return name, nil
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
