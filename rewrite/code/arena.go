package code

import "sync"

// arena keeps the node memory of released bodies for the next Decode. A rewriter decodes
// every method of every class and drops the body a moment later; handing the same memory to
// the next method instead of to the garbage collector takes the largest allocations off the
// hot path.
//
// The same holds for the other per-method memory of a body: its labels, attributes, tables and
// handlers, and computeMax's worklist.
type arena struct {
	nodes  []Insn // the slab of decoded nodes; its used part is nodes[:used]
	used   int
	chunks [][]Insn // chunks for inserted nodes, handed out in order

	labels   slab[Label]
	attrs    slab[Attr]
	attrPtrs slab[*Attr]
	lines    slab[LineNumber]
	vars     slab[LocalVar]
	handlers slab[Handler]
	work     []*Insn // computeMax's worklist
}

// slab hands out zeroed parts of one array, which release clears for the next body.
type slab[T any] struct {
	buf  []T
	used int
}

// take returns n zeroed elements with room for extra more to be appended in place.
func (s *slab[T]) take(n, extra int) []T {
	if s.used+n+extra > len(s.buf) {
		// The parts handed out of the old array stay with their holders until release.
		s.buf = make([]T, max(n+extra, 2*len(s.buf), 16))
		s.used = 0
	}
	out := s.buf[s.used : s.used+n : s.used+n+extra]
	s.used += n + extra
	return out
}

// release clears what was handed out, and drops an array grown past limit elements.
func (s *slab[T]) release(limit int) {
	clear(s.buf[:s.used])
	s.used = 0
	if len(s.buf) > limit {
		s.buf = nil
	}
}

var arenas = sync.Pool{New: func() any { return new(arena) }}

// maxArenaNodes bounds what an arena keeps: the nodes of a very large method are left to the
// garbage collector rather than held by the pool.
const maxArenaNodes = 1 << 14

// maxArenaChunks bounds the chunks of inserted nodes an arena keeps (they double from 8 nodes
// to 1024): a method that inserted thousands of nodes does not make every arena that large.
const maxArenaChunks = 10

// slab returns n zeroed nodes.
func (a *arena) slab(n int) []Insn {
	if cap(a.nodes) < n {
		a.nodes = make([]Insn, n)
	}
	a.used = n
	return a.nodes[:n:n]
}

// chunk returns the k-th chunk of inserted nodes, zeroed, with size nodes.
func (a *arena) chunk(k, size int) []Insn {
	if k < len(a.chunks) && len(a.chunks[k]) == size {
		return a.chunks[k]
	}
	c := make([]Insn, size)
	if k < len(a.chunks) {
		a.chunks[k] = c
	} else if k == len(a.chunks) {
		a.chunks = append(a.chunks, c)
	}
	return c
}

// Release hands the body's node memory back for the methods decoded after it. It is optional
// and for callers that are done with the body and with everything taken from it: every
// instruction, label node and frame that names an instruction (what Encode returned stays
// valid). A FrameEncoder with a Release method is released with the body, so it can keep its
// memory for the next method too. The body is empty afterwards; releasing it again does nothing.
func (b *Body) Release() {
	if r, ok := b.Frames.(interface{ Release() }); ok {
		b.Frames = nil
		r.Release()
	}
	a := b.arena
	if a == nil {
		return
	}
	b.arena = nil
	clear(a.nodes[:a.used])
	for _, c := range a.chunks[:min(b.chunks, len(a.chunks))] {
		clear(c)
	}
	a.used = 0
	a.labels.release(maxArenaNodes)
	a.attrs.release(maxArenaNodes)
	a.attrPtrs.release(maxArenaNodes)
	a.lines.release(maxArenaNodes)
	a.vars.release(maxArenaNodes)
	a.handlers.release(maxArenaNodes)
	clear(a.work[:cap(a.work)])
	if cap(a.work) > maxArenaNodes {
		a.work = nil
	}
	b.first, b.last, b.insns, b.free, b.labels, b.freeLabels = nil, nil, nil, nil, nil, nil
	b.Handlers, b.Attrs = nil, nil
	if cap(a.nodes) > maxArenaNodes {
		a.nodes = nil
	}
	if len(a.chunks) > maxArenaChunks {
		a.chunks = a.chunks[:maxArenaChunks:maxArenaChunks]
	}
	arenas.Put(a)
}
