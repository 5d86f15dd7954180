package code

import "fmt"

// First returns the first node of the body, nil when it is empty.
func (b *Body) First() *Insn { return b.first }

// Last returns the last node of the body.
func (b *Body) Last() *Insn { return b.last }

// Modified reports whether the body was edited since Decode.
func (b *Body) Modified() bool { return b.modified }

// MarkModified makes Encode treat the body as edited: recompute max_stack and max_locals,
// re-encode every table from its parsed form and ask Frames for the StackMapTable. Editing
// methods call it themselves; a pass that changes only the exported tables calls it.
func (b *Body) MarkModified() { b.modified = true }

// Number gives every node its position in the list (0, 1, ...) and returns the node count,
// so that analyses can keep per-node facts in slices indexed by Insn.Num instead of maps
// keyed by pointer. Numbers are stale after the next edit; number again then.
func (b *Body) Number() int {
	k := int32(0)
	for n := b.first; n != nil; n = n.next {
		n.num = k
		k++
	}
	return int(k)
}

// Num is the node's position from the last Body.Number.
func (i *Insn) Num() int { return int(i.num) }

// CodeLen is the length of the decoded code.
func (b *Body) CodeLen() int { return b.codeLen }

// newNode hands out nodes from chunks so that inserted code does not cost an allocation per
// instruction either. Chunks start small and double: most passes insert a handful of nodes
// per method, a few insert thousands.
func (b *Body) newNode() *Insn {
	if len(b.free) == 0 {
		b.chunk = min(max(2*b.chunk, 8), 1024)
		b.free = b.arena.chunk(b.chunks, b.chunk)
		b.chunks++
	}
	n := &b.free[0]
	b.free = b.free[1:]
	n.Offset = -1
	n.depth = -1
	return n
}

// NewLabel returns a label that is not yet placed; Seq.Mark places it where the sequence goes.
func (b *Body) NewLabel() *Label {
	if len(b.freeLabels) == 0 {
		b.labelChunk = min(max(2*b.labelChunk, 4), 256)
		if b.arena != nil {
			b.freeLabels = b.arena.labels.take(b.labelChunk, 0)
		} else {
			b.freeLabels = make([]Label, b.labelChunk)
		}
	}
	l := &b.freeLabels[0]
	b.freeLabels = b.freeLabels[1:]
	l.Offset = -1
	return l
}

// NewLocal reserves size consecutive local slots (2 for long and double) that no existing code
// uses and returns the first.
func (b *Body) NewLocal(size int) int {
	if size != 1 && size != 2 {
		panic(fmt.Sprintf("code: NewLocal size %d, want 1 or 2", size))
	}
	n := b.nextLocal
	b.nextLocal += size
	b.localsHigh = b.nextLocal
	b.modified = true
	return n
}

// AddHandler appends an exception-table entry. It goes at the end of the table because the
// JVM picks the first matching entry, so new handlers never steal exceptions from the
// program's own ones, and type annotations keep indexing the existing entries.
func (b *Body) AddHandler(start, end, handler *Label, catchType uint16) {
	b.Handlers = append(b.Handlers, Handler{Start: start, End: end, Handler: handler, CatchType: catchType})
	b.modified = true
}

// refuse empties a sequence whose building failed and returns its error, which it also keeps
// for Encode: an insert never splices part of a failed sequence.
func (b *Body) refuse(s *Seq) error {
	if s.err == nil {
		return nil
	}
	if b.insertErr == nil {
		b.insertErr = s.err
	}
	s.first, s.last = nil, nil
	return s.err
}

// InsertBefore splices the nodes of s in front of at. When at is an instruction the inserted
// code comes after any labels before it, so branches to those labels run the new code; when
// at is a label node, branches to that label skip it. s is empty afterwards. A sequence whose
// building failed is not inserted: its error (Seq.Err) is returned, and Encode fails with it.
func (b *Body) InsertBefore(at *Insn, s *Seq) error {
	if err := b.refuse(s); err != nil {
		return err
	}
	if s.first == nil {
		return nil
	}
	b.modified = true
	first, last := s.first, s.last
	s.first, s.last = nil, nil
	first.prev = at.prev
	last.next = at
	if at.prev != nil {
		at.prev.next = first
	} else {
		b.first = first
	}
	at.prev = last
	return nil
}

// InsertAfter splices the nodes of s after at (or at the start of the body when at is nil).
// s is empty afterwards. A failed sequence is refused as by InsertBefore.
func (b *Body) InsertAfter(at *Insn, s *Seq) error {
	if err := b.refuse(s); err != nil {
		return err
	}
	if s.first == nil {
		return nil
	}
	if at == nil {
		if b.first == nil {
			return b.Append(s)
		}
		return b.InsertBefore(b.first, s)
	}
	b.modified = true
	first, last := s.first, s.last
	s.first, s.last = nil, nil
	last.next = at.next
	first.prev = at
	if at.next != nil {
		at.next.prev = last
	} else {
		b.last = last
	}
	at.next = first
	return nil
}

// Append adds the nodes of s at the end of the body. A failed sequence is refused as by
// InsertBefore.
func (b *Body) Append(s *Seq) error {
	if err := b.refuse(s); err != nil {
		return err
	}
	if s.first == nil {
		return nil
	}
	if b.last != nil {
		return b.InsertAfter(b.last, s)
	}
	b.modified = true
	b.first, b.last = s.first, s.last
	s.first, s.last = nil, nil
	return nil
}

// Remove unlinks an instruction. Removing a label node is refused (labels may be referenced
// from tables), as is removing an instruction twice.
func (b *Body) Remove(i *Insn) error {
	if i.IsLabel() {
		return b.Method.Errorf(i.Offset, "a label node cannot be removed")
	}
	if i.removed {
		return b.Method.Errorf(i.Offset, "instruction already removed")
	}
	b.modified = true
	if i.prev != nil {
		i.prev.next = i.next
	} else {
		b.first = i.next
	}
	if i.next != nil {
		i.next.prev = i.prev
	} else {
		b.last = i.prev
	}
	i.prev, i.next = nil, nil
	i.removed = true
	return nil
}

// Replace puts the nodes of s where instruction i was.
func (b *Body) Replace(i *Insn, s *Seq) error {
	if i.IsLabel() {
		return b.Method.Errorf(i.Offset, "a label node cannot be replaced")
	}
	if err := b.InsertBefore(i, s); err != nil {
		return err
	}
	return b.Remove(i)
}

// labelNode returns the node that places l, creating it (unlinked) if needed.
func (b *Body) labelNode(l *Label) *Insn {
	if l.node == nil {
		n := b.newNode()
		n.Op = OpLabel
		n.Label = l
		n.Offset = l.Offset
		l.node = n
	}
	return l.node
}
