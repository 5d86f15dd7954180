package code

import (
	"encoding/binary"
	"math"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// size returns the encoded size of node n placed at pos, with the forms Encode will write.
func (n *Insn) size(pos int) int {
	if n.Op == OpLabel {
		return 0
	}
	switch formats[n.Op] {
	case fmtNone:
		return 1
	case fmtLocal:
		if n.Wide || n.Var > 255 {
			return 4
		}
		return 2
	case fmtByte:
		return 2
	case fmtLdc:
		if n.Index > 255 {
			return 3
		}
		return 2
	case fmtShort, fmtCP, fmtBranch16:
		return 3
	case fmtIinc:
		if n.wideIinc() {
			return 6
		}
		return 3
	case fmtBranch32, fmtInvokeInterface, fmtInvokeDynamic:
		return 5
	case fmtMulti:
		return 4
	case fmtTableSwitch:
		return (pos+4)&^3 - pos + 12 + 4*len(n.Switch.Targets)
	case fmtLookupSwitch:
		return (pos+4)&^3 - pos + 8 + 8*len(n.Switch.Targets)
	}
	return 1
}

func (n *Insn) wideIinc() bool {
	return n.Wide || n.Var > 255 || n.Int < math.MinInt8 || n.Int > math.MaxInt8
}

// layout assigns offsets to every node and returns the code length. It also stamps every
// placed node so that references to labels outside the list can be detected.
func (b *Body) layout() int {
	pos := 0
	b.epoch++
	for n := b.first; n != nil; n = n.next {
		n.pos = int32(pos)
		n.seen = b.epoch
		pos += n.size(pos)
	}
	return pos
}

func (b *Body) placed(l *Label) bool {
	return l != nil && l.node != nil && l.node.seen == b.epoch
}

// widen lays the code out until every branch reaches its target, widening the ones that do
// not: goto→goto_w and jsr→jsr_w in place, a conditional into the inverted condition jumping
// over a new goto_w to the old target. Widening only ever grows code, so it ends; each round
// re-lays the code because growth moves switch padding and other branches' distances.
func (b *Body) widen() (int, error) {
	for {
		total := b.layout()
		grew := false
		for n := b.first; n != nil; n = n.next {
			if n.Op > 0xff || formats[n.Op] != fmtBranch16 {
				continue
			}
			if !b.placed(n.Target) {
				return 0, b.unplaced(n, "branch target")
			}
			d := n.Target.node.pos - n.pos
			if d >= math.MinInt16 && d <= math.MaxInt16 {
				continue
			}
			grew = true
			switch n.Op {
			case GOTO:
				n.Op = GOTO_W
			case JSR:
				n.Op = JSR_W
			default:
				g := b.newNode()
				g.Op, g.Target = GOTO_W, n.Target
				skip := b.NewLabel()
				ln := b.labelNode(skip)
				n.Op, n.Target = invert(n.Op), skip
				g.prev, g.next = n, ln
				ln.prev, ln.next = g, n.next
				if n.next != nil {
					n.next.prev = ln
				} else {
					b.last = ln
				}
				n.next = g
				n = ln
			}
		}
		if !grew {
			return total, nil
		}
	}
}

func (b *Body) unplaced(n *Insn, what string) error {
	return b.Method.Errorf(n.Offset, "%s of %s is a label that is not in the code", what, n)
}

// Encode writes the body back into a Code attribute. An unedited body encodes to the bytes it
// was decoded from. After edits it recomputes offsets (widening as needed), remaps the
// exception table and the line, local-variable and type-annotation tables, asks Frames for
// the StackMapTable and recomputes max_stack and max_locals.
//
// It fails with a *TooLargeError (errors.Is ErrCodeTooLarge) when the code would exceed 65535
// bytes, and with ErrUnmappableAttribute when offsets changed but an attribute cannot follow
// them. In both cases the caller keeps the method as it was.
func (b *Body) Encode() (*classfile.Code, error) {
	a, err := b.EncodeAttribute(0)
	if err != nil {
		return nil, err
	}
	return classfile.ParseCode(a)
}

// EncodeAttribute is Encode written straight into the bytes of a Code attribute named by
// nameIndex (a Utf8 "Code"), what a rewriter keeps of the body: the steps are Encode's, and
// nothing is built between the body and the bytes.
//
//  1. lay the code out (encodeLayout), widening branches until every offset fits;
//  2. recompute max_stack and max_locals when the body was edited (encodeMax);
//  3. write the header, the instructions and the exception table (appendHandlers);
//  4. write the nested attributes (appendAttrs): kept, remapped or new frames.
func (b *Body) EncodeAttribute(nameIndex uint16) (*classfile.Attribute, error) {
	total, same, err := b.encodeLayout()
	if err != nil {
		return nil, err
	}
	ms, ml, err := b.encodeMax()
	if err != nil {
		return nil, err
	}
	if len(b.Handlers) > math.MaxUint16 {
		return nil, b.Method.Errorf(-1, "%d exception table entries, at most 65535 allowed", len(b.Handlers))
	}
	size := 8 + total + 2 + 8*len(b.Handlers) + 2
	for _, a := range b.Attrs {
		size += 6 + len(a.orig) + len(a.Raw) // the old contents: the new ones are about as long
	}
	out := make([]byte, 8+total, size+16)
	binary.BigEndian.PutUint16(out, ms)
	binary.BigEndian.PutUint16(out[2:], ml)
	binary.BigEndian.PutUint32(out[4:], uint32(total))
	if err := b.write(out[8:]); err != nil {
		return nil, err
	}
	if out, err = b.appendHandlers(out, total); err != nil {
		return nil, err
	}
	if out, err = b.appendAttrs(out, same); err != nil {
		return nil, err
	}
	if uint64(len(out)) > math.MaxUint32 {
		return nil, b.Method.Errorf(-1, "Code attribute of %d bytes does not fit a u4 length", len(out))
	}
	return &classfile.Attribute{NameIndex: nameIndex, Data: out}, nil
}

// encodeLayout assigns the final offsets and returns the code's length, and whether every
// offset and the structure are as decoded (so attributes that hold offsets stay valid as read).
func (b *Body) encodeLayout() (total int, same bool, err error) {
	if b.insertErr != nil {
		return 0, false, b.insertErr
	}
	if b.first == nil {
		return 0, false, b.Method.Errorf(-1, "no instructions")
	}
	if total, err = b.widen(); err != nil {
		return 0, false, err
	}
	if total == 0 {
		return 0, false, b.Method.Errorf(-1, "no instructions left to encode")
	}
	if total > classfile.MaxCodeLength {
		return 0, false, b.Method.Errorf(-1, "%w", &TooLargeError{Size: total})
	}
	same = total == b.codeLen
	for n := b.first; n != nil && same; n = n.next {
		if n.Offset != int(n.pos) && (n.Offset >= 0 || n.Op != OpLabel) {
			same = false
		}
	}
	// An instruction removed or replaced keeps the layout but may change what frames hold.
	return total, same && !b.structureChanged(), nil
}

// encodeMax returns max_stack and max_locals: the decoded values, or for an edited body the
// larger of those and what the code needs now.
func (b *Body) encodeMax() (uint16, uint16, error) {
	if !b.modified {
		return uint16(b.MaxStack), uint16(b.MaxLocals), nil
	}
	ms, ml, err := b.computeMax()
	if err != nil {
		return 0, 0, err
	}
	ms, ml = max(ms, b.MaxStack), max(ml, b.MaxLocals)
	if ms > math.MaxUint16 || ml > math.MaxUint16 {
		return 0, 0, b.Method.Errorf(-1, "max_stack %d or max_locals %d exceeds 65535", ms, ml)
	}
	return uint16(ms), uint16(ml), nil
}

// appendHandlers appends the exception table at its final offsets.
func (b *Body) appendHandlers(out []byte, total int) ([]byte, error) {
	out = binary.BigEndian.AppendUint16(out, uint16(len(b.Handlers)))
	for i, h := range b.Handlers {
		if !b.placed(h.Start) || !b.placed(h.End) || !b.placed(h.Handler) {
			return nil, b.Method.Errorf(-1, "exception table entry %d uses a label that is not in the code", i)
		}
		s, e, hp := h.Start.Pos(), h.End.Pos(), h.Handler.Pos()
		if s >= e || hp >= total {
			return nil, b.Method.Errorf(h.Start.Offset, "exception table entry %d: range [%d, %d) handler %d is empty or invalid after editing", i, s, e, hp)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(s))
		out = binary.BigEndian.AppendUint16(out, uint16(e))
		out = binary.BigEndian.AppendUint16(out, uint16(hp))
		out = binary.BigEndian.AppendUint16(out, h.CatchType)
	}
	return out, nil
}

// appendAttrs appends attributes_count and the attributes: raw ones as read while the layout
// is the same, tables that hold offsets remapped, and the frames from Frames when the body was
// edited (a StackMapTable added for a method that had none).
func (b *Body) appendAttrs(out []byte, same bool) ([]byte, error) {
	countAt := len(out)
	out = append(out, 0, 0)
	count := 0
	hasFrames := false
	var err error
	for _, a := range b.Attrs {
		start := len(out)
		out = appendAttrHeader(out, a.Name)
		switch a.Kind {
		case AttrRaw:
			if !same {
				name, _ := b.Pool.Utf8(a.Name)
				return nil, b.Method.Errorf(-1, "code changed but attribute %q inside Code is unknown and may hold offsets: %w", name, ErrUnmappableAttribute)
			}
			out = append(out, a.Raw...)
		case AttrStackMap:
			hasFrames = true
			if b.Frames != nil && b.modified {
				if out, err = b.appendFrames(out); err != nil {
					return nil, err
				}
				if len(out) == start+6 {
					out = out[:start] // the encoder wants no table
					continue
				}
				break
			}
			if !same {
				return nil, b.Method.Errorf(-1, "code changed but no frame encoder was given for its StackMapTable: %w", ErrUnmappableAttribute)
			}
			out = append(out, a.Raw...)
		default:
			if !b.modified && same && a.orig != nil {
				out = append(out, a.orig...)
			} else if out, err = b.appendAttr(out, a); err != nil {
				return nil, err
			}
		}
		if out, err = b.endAttr(out, start); err != nil {
			return nil, err
		}
		count++
	}
	if !hasFrames && b.Frames != nil && b.modified {
		start := len(out)
		out = appendAttrHeader(out, 0) // named below, once the encoder wrote a table
		if out, err = b.appendFrames(out); err != nil {
			return nil, err
		}
		if len(out) == start+6 {
			out = out[:start]
		} else {
			name, err := b.Pool.AddUtf8("StackMapTable")
			if err != nil {
				return nil, b.Method.Errorf(-1, "%w", err)
			}
			binary.BigEndian.PutUint16(out[start:], name)
			if out, err = b.endAttr(out, start); err != nil {
				return nil, err
			}
			count++
		}
	}
	if count > math.MaxUint16 {
		return nil, b.Method.Errorf(-1, "%d attributes in the Code attribute, at most 65535 allowed", count)
	}
	binary.BigEndian.PutUint16(out[countAt:], uint16(count))
	return out, nil
}

// appendAttrHeader appends an attribute's name and a length that endAttr fills in.
func appendAttrHeader(out []byte, name uint16) []byte {
	return append(binary.BigEndian.AppendUint16(out, name), 0, 0, 0, 0)
}

// endAttr fills in the length of the attribute that starts at start.
func (b *Body) endAttr(out []byte, start int) ([]byte, error) {
	n := len(out) - start - 6
	if uint64(n) > math.MaxUint32 {
		return nil, b.Method.Errorf(-1, "attribute of %d bytes does not fit a u4 length", n)
	}
	binary.BigEndian.PutUint32(out[start+2:], uint32(n))
	return out, nil
}

// appendFrames appends the StackMapTable's contents from Frames, nothing when it wants none.
func (b *Body) appendFrames(out []byte) ([]byte, error) {
	if fa, ok := b.Frames.(FrameAppender); ok {
		return fa.AppendFrames(out, b)
	}
	data, err := b.Frames.EncodeFrames(b)
	if err != nil {
		return nil, err
	}
	return append(out, data...), nil
}

// structureChanged reports whether an instruction or handler was added or removed, which can
// change what frames must say even when every offset stays the same.
func (b *Body) structureChanged() bool {
	if !b.modified {
		return false
	}
	if len(b.Handlers) != b.nHandlers {
		return true // a new handler needs a frame at its start
	}
	for i := range b.insns {
		if b.insns[i].removed {
			return true
		}
	}
	for n := b.first; n != nil; n = n.next {
		if n.Offset < 0 && n.Op != OpLabel {
			return true
		}
	}
	return false
}

// write emits the instructions at the offsets layout assigned.
func (b *Body) write(out []byte) error {
	for n := b.first; n != nil; n = n.next {
		if n.Op == OpLabel {
			continue
		}
		p := int(n.pos)
		op := n.Op
		switch formats[op] {
		case fmtNone:
			out[p] = byte(op)
		case fmtLocal:
			if n.Wide || n.Var > 255 {
				out[p], out[p+1] = byte(WIDE), byte(op)
				binary.BigEndian.PutUint16(out[p+2:], uint16(n.Var))
			} else {
				out[p], out[p+1] = byte(op), byte(n.Var)
			}
		case fmtByte:
			out[p], out[p+1] = byte(op), byte(n.Int)
		case fmtShort:
			out[p] = byte(op)
			binary.BigEndian.PutUint16(out[p+1:], uint16(n.Int))
		case fmtLdc:
			if n.Index > 255 {
				out[p] = byte(LDC_W)
				binary.BigEndian.PutUint16(out[p+1:], n.Index)
			} else {
				out[p], out[p+1] = byte(op), byte(n.Index)
			}
		case fmtCP, fmtInvokeDynamic:
			out[p] = byte(op)
			binary.BigEndian.PutUint16(out[p+1:], n.Index)
		case fmtInvokeInterface, fmtMulti:
			out[p] = byte(op)
			binary.BigEndian.PutUint16(out[p+1:], n.Index)
			out[p+3] = byte(n.Int)
		case fmtIinc:
			if n.wideIinc() {
				out[p], out[p+1] = byte(WIDE), byte(op)
				binary.BigEndian.PutUint16(out[p+2:], uint16(n.Var))
				binary.BigEndian.PutUint16(out[p+4:], uint16(int16(n.Int)))
			} else {
				out[p], out[p+1], out[p+2] = byte(op), byte(n.Var), byte(int8(n.Int))
			}
		case fmtBranch16:
			out[p] = byte(op)
			binary.BigEndian.PutUint16(out[p+1:], uint16(int16(int(n.Target.node.pos)-p)))
		case fmtBranch32:
			if !b.placed(n.Target) {
				return b.unplaced(n, "branch target")
			}
			out[p] = byte(op)
			binary.BigEndian.PutUint32(out[p+1:], uint32(int32(int(n.Target.node.pos)-p)))
		case fmtTableSwitch, fmtLookupSwitch:
			if err := b.writeSwitch(out, n); err != nil {
				return err
			}
		default:
			return b.Method.Errorf(n.Offset, "cannot encode %s", OpName(op))
		}
	}
	return nil
}

func (b *Body) writeSwitch(out []byte, n *Insn) error {
	sw := n.Switch
	p := int(n.pos)
	out[p] = byte(n.Op)
	q := (p + 4) &^ 3
	put := func(at int, l *Label) error {
		if !b.placed(l) {
			return b.unplaced(n, "switch target")
		}
		binary.BigEndian.PutUint32(out[at:], uint32(int32(int(l.node.pos)-p)))
		return nil
	}
	if err := put(q, sw.Default); err != nil {
		return err
	}
	if n.Op == TABLESWITCH {
		if len(sw.Targets) == 0 || int64(sw.Low)+int64(len(sw.Targets))-1 > math.MaxInt32 {
			return b.Method.Errorf(n.Offset, "tableswitch with low %d and %d targets", sw.Low, len(sw.Targets))
		}
		binary.BigEndian.PutUint32(out[q+4:], uint32(sw.Low))
		binary.BigEndian.PutUint32(out[q+8:], uint32(sw.Low+int32(len(sw.Targets))-1))
		for i, t := range sw.Targets {
			if err := put(q+12+4*i, t); err != nil {
				return err
			}
		}
		return nil
	}
	if len(sw.Keys) != len(sw.Targets) {
		return b.Method.Errorf(n.Offset, "lookupswitch with %d keys and %d targets", len(sw.Keys), len(sw.Targets))
	}
	binary.BigEndian.PutUint32(out[q+4:], uint32(len(sw.Targets)))
	for i, t := range sw.Targets {
		binary.BigEndian.PutUint32(out[q+8+8*i:], uint32(sw.Keys[i]))
		if err := put(q+12+8*i, t); err != nil {
			return err
		}
	}
	return nil
}

// appendAttr re-encodes an attribute whose offsets are held as labels, appending it to w.
func (b *Body) appendAttr(w []byte, a *Attr) ([]byte, error) {
	u2 := func(v int) { w = binary.BigEndian.AppendUint16(w, uint16(v)) }
	lab := func(l *Label, what string, i int) (int, error) {
		if !b.placed(l) {
			return 0, b.Method.Errorf(-1, "%s entry %d uses a label that is not in the code", what, i)
		}
		return int(l.node.pos), nil
	}
	rng := func(v LocalVar, what string, i int) (int, int, error) {
		s, err := lab(v.Start, what, i)
		if err != nil {
			return 0, 0, err
		}
		e, err := lab(v.End, what, i)
		if err != nil {
			return 0, 0, err
		}
		if e < s {
			return 0, 0, b.Method.Errorf(v.Start.Offset, "%s entry %d ends before it starts after editing", what, i)
		}
		return s, e - s, nil
	}
	name := attrKindName(a.Kind)
	switch a.Kind {
	case AttrLineNumbers:
		if len(a.Lines) > math.MaxUint16 {
			return nil, b.Method.Errorf(-1, "LineNumberTable has more than 65535 entries")
		}
		u2(len(a.Lines))
		for i, l := range a.Lines {
			s, err := lab(l.Start, name, i)
			if err != nil {
				return nil, err
			}
			u2(s)
			u2(int(l.Line))
		}
	case AttrLocalVars, AttrLocalVarTypes:
		if len(a.Vars) > math.MaxUint16 {
			return nil, b.Method.Errorf(-1, "%s has more than 65535 entries", name)
		}
		u2(len(a.Vars))
		for i, v := range a.Vars {
			s, l, err := rng(v, name, i)
			if err != nil {
				return nil, err
			}
			u2(s)
			u2(l)
			u2(int(v.Name))
			u2(int(v.Desc))
			u2(int(v.Index))
		}
	case AttrVisibleTypeAnnotations, AttrInvisibleTypeAnnotations:
		u2(len(a.Annos))
		for i, ta := range a.Annos {
			w = append(w, ta.TargetType)
			switch tt := ta.TargetType; {
			case tt == 0x40 || tt == 0x41:
				u2(len(ta.Ranges))
				for _, v := range ta.Ranges {
					s, l, err := rng(v, name, i)
					if err != nil {
						return nil, err
					}
					u2(s)
					u2(l)
					u2(int(v.Index))
				}
			case tt == 0x42:
				u2(int(ta.ExceptionIndex))
			default:
				if ta.Insn == nil || ta.Insn.removed || ta.Insn.seen != b.epoch {
					return nil, b.Method.Errorf(-1, "%s entry %d names an instruction that is no longer in the code", name, i)
				}
				u2(int(ta.Insn.pos))
				if tt >= 0x47 {
					w = append(w, ta.TypeArgIndex)
				}
			}
			w = append(w, ta.Rest...)
		}
	}
	return w, nil
}
