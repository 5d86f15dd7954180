package code

import (
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Bits of the per-offset scratch marks used while decoding; the label number (1-based) sits
// above them.
const (
	markStart = 1 << iota // an instruction starts here
	markLabel             // something refers to this offset
	markShift = 2
)

var marksPool = sync.Pool{New: func() any { return new([]int32) }}

// Decode turns a parsed Code attribute into an editable Body. Every offset the attribute
// mentions must be an instruction boundary (or the code length, for range ends); otherwise
// the method cannot be edited safely and Decode fails naming the offset.
func Decode(c *classfile.Code, pool *classfile.Pool, m Method) (*Body, error) {
	bc := c.Bytecode
	n := len(bc)
	if n == 0 {
		return nil, m.Errorf(-1, "empty code")
	}
	mp := marksPool.Get().(*[]int32)
	defer marksPool.Put(mp)
	if cap(*mp) < n+1 {
		*mp = make([]int32, n+1)
	}
	marks := (*mp)[:n+1]
	clear(marks)
	d := decoder{m: m, bc: bc, marks: marks, pool: pool}

	ninsn, err := d.scan()
	if err != nil {
		return nil, err
	}
	for i, e := range c.Exceptions {
		if err := d.ref(int(e.StartPC), false, "exception table", i, " start"); err != nil {
			return nil, err
		}
		if err := d.ref(int(e.EndPC), true, "exception table", i, " end"); err != nil {
			return nil, err
		}
		if err := d.ref(int(e.HandlerPC), false, "exception table", i, " handler"); err != nil {
			return nil, err
		}
	}
	kinds := make([]AttrKind, len(c.Attributes))
	for i, a := range c.Attributes {
		kinds[i] = attrKind(pool, a.NameIndex)
		if err := d.markAttr(kinds[i], a.Data); err != nil {
			return nil, err
		}
	}

	nlab := 0
	for i := range marks {
		if marks[i]&markLabel != 0 {
			nlab++
			marks[i] |= int32(nlab) << markShift
		}
	}
	b := &Body{Method: m, Pool: pool, MaxStack: int(c.MaxStack), MaxLocals: int(c.MaxLocals), codeLen: n}
	b.nextLocal = b.MaxLocals
	if args := argSlots(m); args > b.nextLocal {
		b.nextLocal = args
	}
	b.arena = arenas.Get().(*arena)
	d.arena = b.arena
	nodes := b.arena.slab(ninsn + nlab)
	b.insns = nodes[:ninsn:ninsn]
	labNodes := nodes[ninsn:]
	b.labels = b.arena.labels.take(nlab, 0)
	d.labels = b.labels
	d.insns = b.insns
	var prev *Insn
	link := func(x *Insn) {
		x.prev = prev
		if prev != nil {
			prev.next = x
		} else {
			b.first = x
		}
		prev = x
	}
	li, ii := 0, 0
	for pc := 0; pc <= n; pc++ {
		mk := marks[pc]
		if mk&markLabel != 0 {
			l := &b.labels[li]
			ln := &labNodes[li]
			li++
			l.Offset, l.node = pc, ln
			ln.Op, ln.Label, ln.Offset, ln.pos, ln.depth = OpLabel, l, pc, int32(pc), -1
			link(ln)
		}
		if pc < n && mk&markStart != 0 {
			x := &b.insns[ii]
			ii++
			if err := d.insn(x, pc); err != nil {
				return nil, err
			}
			link(x)
		}
	}
	b.last = prev

	b.nHandlers = len(c.Exceptions)
	if len(c.Exceptions) > 0 {
		b.Handlers = b.arena.handlers.take(len(c.Exceptions), 1)
		for i, e := range c.Exceptions {
			b.Handlers[i] = Handler{Start: d.label(int(e.StartPC)), End: d.label(int(e.EndPC)), Handler: d.label(int(e.HandlerPC)), CatchType: e.CatchType}
		}
	}
	// Room for one more: a pass may add a StackMapTable to a method that had none.
	b.Attrs = b.arena.attrPtrs.take(len(c.Attributes), 1)
	attrs := b.arena.attrs.take(len(c.Attributes), 1)
	for i, a := range c.Attributes {
		at := &attrs[i]
		at.Kind, at.Name, at.orig = kinds[i], a.NameIndex, a.Data
		if err := d.buildAttr(at, a.Data); err != nil {
			return nil, err
		}
		b.Attrs[i] = at
	}
	return b, nil
}

// argSlots is the number of local slots the arguments (and receiver) occupy on entry.
func argSlots(m Method) int {
	args, _, ok := classfile.MethodSlots(m.Desc)
	if !ok {
		return 0
	}
	if m.Access&classfile.AccStatic == 0 {
		args++
	}
	return args
}

func attrKind(pool *classfile.Pool, name uint16) AttrKind {
	c, err := pool.Entry(name)
	if err != nil || c.Tag != classfile.TagUtf8 {
		return AttrRaw
	}
	switch string(c.Bytes) {
	case "LineNumberTable":
		return AttrLineNumbers
	case "LocalVariableTable":
		return AttrLocalVars
	case "LocalVariableTypeTable":
		return AttrLocalVarTypes
	case "RuntimeVisibleTypeAnnotations":
		return AttrVisibleTypeAnnotations
	case "RuntimeInvisibleTypeAnnotations":
		return AttrInvisibleTypeAnnotations
	case "StackMapTable":
		return AttrStackMap
	}
	return AttrRaw
}

type decoder struct {
	m      Method
	bc     []byte
	marks  []int32
	labels []Label
	insns  []Insn
	pool   *classfile.Pool
	arena  *arena // the body's, for its tables
}

func (d *decoder) insnAt(off int) *Insn {
	i := sort.Search(len(d.insns), func(i int) bool { return d.insns[i].Offset >= off })
	return &d.insns[i] // off was checked to be an instruction start
}

func (d *decoder) errf(off int, format string, args ...any) error {
	return d.m.Errorf(off, format, args...)
}

func (d *decoder) s2(pc int) int { return int(int16(binary.BigEndian.Uint16(d.bc[pc:]))) }
func (d *decoder) u2(pc int) int { return int(binary.BigEndian.Uint16(d.bc[pc:])) }
func (d *decoder) s4(pc int) int { return int(int32(binary.BigEndian.Uint32(d.bc[pc:]))) }
func (d *decoder) label(off int) *Label {
	return &d.labels[d.marks[off]>>markShift-1]
}

// branch resolves a jump target, which scan could not check against instruction starts
// before it had seen the whole code.
func (d *decoder) branch(pc, dest int) (*Label, error) {
	if d.marks[dest]&markStart == 0 {
		return nil, d.errf(pc, "%s jumps to offset %d, which is inside an instruction", OpName(Opcode(d.bc[pc])), dest)
	}
	return d.label(dest), nil
}

// target marks a branch destination, which must lie inside the code (checked for boundaries
// after the scan).
func (d *decoder) target(pc, dest int) error {
	if dest < 0 || dest >= len(d.bc) {
		return d.errf(pc, "%s jumps to %d, outside the code (length %d)", OpName(Opcode(d.bc[pc])), dest, len(d.bc))
	}
	d.marks[dest] |= markLabel
	return nil
}

// switchLen returns the size of a switch at pc, checking that it fits in the code.
func (d *decoder) switchLen(pc int) (int, error) {
	size, why := insnLen(d.bc, pc)
	if why != "" {
		return 0, d.errf(pc, "%s", why)
	}
	return size, nil
}

// insnLen returns the size of the instruction at pc, or why it has none: an invalid opcode, a
// malformed switch or wide, or an instruction that runs past the end of bc.
func insnLen(bc []byte, pc int) (size int, why string) {
	op := Opcode(bc[pc])
	switch formats[op] {
	case fmtInvalid:
		return 0, fmt.Sprintf("invalid opcode 0x%02x", uint8(op))
	case fmtNone:
		size = 1
	case fmtLocal, fmtByte, fmtLdc:
		size = 2
	case fmtShort, fmtCP, fmtIinc, fmtBranch16:
		size = 3
	case fmtMulti:
		size = 4
	case fmtBranch32, fmtInvokeInterface, fmtInvokeDynamic:
		size = 5
	case fmtTableSwitch, fmtLookupSwitch:
		return switchSize(bc, pc)
	case fmtWide:
		if pc+1 >= len(bc) {
			return 0, "wide truncated"
		}
		switch w := Opcode(bc[pc+1]); {
		case w == IINC:
			size = 6
		case (w >= ILOAD && w <= ALOAD) || (w >= ISTORE && w <= ASTORE) || w == RET:
			size = 4
		default:
			return 0, "wide applied to " + OpName(w)
		}
	}
	if pc+size > len(bc) {
		return 0, OpName(op) + " truncated at the end of the code"
	}
	return size, ""
}

// switchSize is insnLen of a tableswitch or lookupswitch.
func switchSize(bc []byte, pc int) (int, string) {
	p := (pc + 4) &^ 3
	op := bc[pc]
	fixed := 8 // default, npairs: a lookupswitch may have no pairs at all
	if op == byte(TABLESWITCH) {
		fixed = 12
	}
	if p+fixed > len(bc) {
		return 0, OpName(Opcode(op)) + " truncated"
	}
	s4 := func(at int) int { return int(int32(binary.BigEndian.Uint32(bc[at:]))) }
	if op == byte(TABLESWITCH) {
		lo, hi := s4(p+4), s4(p+8)
		if lo > hi {
			return 0, fmt.Sprintf("tableswitch low %d > high %d", lo, hi)
		}
		cnt := int64(hi) - int64(lo) + 1
		if int64(p)+12+4*cnt > int64(len(bc)) {
			return 0, fmt.Sprintf("tableswitch with %d cases truncated", cnt)
		}
		return p + 12 + 4*int(cnt) - pc, ""
	}
	np := s4(p + 4)
	if np < 0 || int64(p)+8+8*int64(np) > int64(len(bc)) {
		return 0, fmt.Sprintf("lookupswitch with %d pairs truncated", np)
	}
	return p + 8 + 8*np - pc, ""
}

// Scan calls fn with the offset and opcode of each instruction of bc, in order, until fn
// returns false. It decodes nothing, so a pass can learn what a method holds for the price of
// a walk over its bytes. A malformed instruction ends the walk with an error naming its offset.
func Scan(bc []byte, fn func(pc int, op Opcode) bool) error {
	for pc := 0; pc < len(bc); {
		size, why := insnLen(bc, pc)
		if why != "" {
			return fmt.Errorf("bytecode offset %d: %s", pc, why)
		}
		if !fn(pc, Opcode(bc[pc])) {
			return nil
		}
		pc += size
	}
	return nil
}

// scan walks the bytecode once, checking every instruction, marking instruction starts and
// branch targets and counting instructions.
func (d *decoder) scan() (int, error) {
	bc := d.bc
	count := 0
	for pc := 0; pc < len(bc); {
		op := Opcode(bc[pc])
		d.marks[pc] |= markStart
		count++
		size, why := insnLen(bc, pc)
		if why != "" {
			return 0, d.errf(pc, "%s", why)
		}
		switch formats[op] {
		case fmtBranch16:
			if err := d.target(pc, pc+d.s2(pc+1)); err != nil {
				return 0, err
			}
		case fmtBranch32:
			if err := d.target(pc, pc+d.s4(pc+1)); err != nil {
				return 0, err
			}
		case fmtTableSwitch, fmtLookupSwitch:
			p := (pc + 4) &^ 3
			if err := d.target(pc, pc+d.s4(p)); err != nil {
				return 0, err
			}
			if op == TABLESWITCH {
				for q := p + 12; q < pc+size; q += 4 {
					if err := d.target(pc, pc+d.s4(q)); err != nil {
						return 0, err
					}
				}
			} else {
				for q := p + 8; q < pc+size; q += 8 {
					if err := d.target(pc, pc+d.s4(q+4)); err != nil {
						return 0, err
					}
				}
			}
		}
		pc += size
	}
	return count, nil
}

// ref marks an offset named by a table. end allows the code length (exclusive range ends).
// The message parts are separate arguments so the hot path formats nothing.
func (d *decoder) ref(off int, end bool, what string, i int, part string) error {
	n := len(d.bc)
	if off > n || (off == n && !end) || (off < n && d.marks[off]&markStart == 0) {
		return d.errf(off, "%s entry %d%s: offset %d is not an instruction boundary", what, i, part, off)
	}
	d.marks[off] |= markLabel
	return nil
}

// insn fills x from the instruction at pc (already checked by scan).
func (d *decoder) insn(x *Insn, pc int) error {
	bc := d.bc
	op := Opcode(bc[pc])
	x.Op, x.Offset, x.pos, x.depth = op, pc, int32(pc), -1
	switch formats[op] {
	case fmtNone:
		switch {
		case op >= ILOAD_0 && op <= ALOAD_3:
			x.Var = int(op-ILOAD_0) & 3
		case op >= ISTORE_0 && op <= ASTORE_3:
			x.Var = int(op-ISTORE_0) & 3
		}
	case fmtLocal:
		x.Var = int(bc[pc+1])
	case fmtByte:
		if op == BIPUSH {
			x.Int = int32(int8(bc[pc+1]))
		} else {
			x.Int = int32(bc[pc+1])
		}
	case fmtShort:
		x.Int = int32(d.s2(pc + 1))
	case fmtLdc:
		x.Index = uint16(bc[pc+1])
	case fmtCP, fmtInvokeDynamic:
		x.Index = uint16(d.u2(pc + 1))
	case fmtInvokeInterface:
		x.Index = uint16(d.u2(pc + 1))
		x.Int = int32(bc[pc+3])
	case fmtMulti:
		x.Index = uint16(d.u2(pc + 1))
		x.Int = int32(bc[pc+3])
	case fmtIinc:
		x.Var = int(bc[pc+1])
		x.Int = int32(int8(bc[pc+2]))
	case fmtBranch16:
		var err error
		x.Target, err = d.branch(pc, pc+d.s2(pc+1))
		return err
	case fmtBranch32:
		var err error
		x.Target, err = d.branch(pc, pc+d.s4(pc+1))
		return err
	case fmtTableSwitch, fmtLookupSwitch:
		size, _ := d.switchLen(pc)
		p := (pc + 4) &^ 3
		def, err := d.branch(pc, pc+d.s4(p))
		if err != nil {
			return err
		}
		sw := &Switch{Default: def}
		if op == TABLESWITCH {
			sw.Low = int32(d.s4(p + 4))
			sw.Targets = make([]*Label, 0, (pc+size-p-12)/4)
			for q := p + 12; q < pc+size; q += 4 {
				l, err := d.branch(pc, pc+d.s4(q))
				if err != nil {
					return err
				}
				sw.Targets = append(sw.Targets, l)
			}
		} else {
			np := (pc + size - p - 8) / 8
			sw.Keys = make([]int32, 0, np)
			sw.Targets = make([]*Label, 0, np)
			for q := p + 8; q < pc+size; q += 8 {
				l, err := d.branch(pc, pc+d.s4(q+4))
				if err != nil {
					return err
				}
				sw.Keys = append(sw.Keys, int32(d.s4(q)))
				sw.Targets = append(sw.Targets, l)
			}
		}
		x.Switch = sw
	case fmtWide:
		w := Opcode(bc[pc+1])
		x.Op, x.Wide, x.Var = w, true, d.u2(pc+2)
		if w == IINC {
			x.Int = int32(d.s2(pc + 4))
		}
	}
	return nil
}

// attrReader reads a Code sub-attribute with bounds checks; the first failure sticks.
type attrReader struct {
	b   []byte
	off int
	bad bool
}

func (r *attrReader) u1() int {
	if r.off+1 > len(r.b) {
		r.bad = true
		return 0
	}
	v := r.b[r.off]
	r.off++
	return int(v)
}

func (r *attrReader) u2() int {
	if r.off+2 > len(r.b) {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint16(r.b[r.off:])
	r.off += 2
	return int(v)
}

// markAttr marks the offsets a known attribute refers to, validating them.
func (d *decoder) markAttr(k AttrKind, data []byte) error {
	r := &attrReader{b: data}
	switch k {
	case AttrLineNumbers:
		cnt := r.u2()
		for i := 0; i < cnt && !r.bad; i++ {
			start := r.u2()
			r.u2()
			if !r.bad {
				if err := d.ref(start, false, "LineNumberTable", i, ""); err != nil {
					return err
				}
			}
		}
	case AttrLocalVars, AttrLocalVarTypes:
		cnt := r.u2()
		for i := 0; i < cnt && !r.bad; i++ {
			start, length := r.u2(), r.u2()
			r.off += 6
			if err := d.rangeRef(start, length, k, i); err != nil {
				return err
			}
		}
	case AttrVisibleTypeAnnotations, AttrInvisibleTypeAnnotations:
		return d.walkTypeAnnos(r, k, nil)
	case AttrStackMap:
		return d.markFrames(r)
	default:
		return nil
	}
	if r.bad || r.off != len(data) {
		return d.errf(-1, "malformed %s attribute", attrKindName(k))
	}
	return nil
}

func (d *decoder) rangeRef(start, length int, k AttrKind, i int) error {
	if err := d.ref(start, false, attrKindName(k), i, " start"); err != nil {
		return err
	}
	return d.ref(start+length, true, attrKindName(k), i, " end")
}

func attrKindName(k AttrKind) string {
	switch k {
	case AttrLineNumbers:
		return "LineNumberTable"
	case AttrLocalVars:
		return "LocalVariableTable"
	case AttrLocalVarTypes:
		return "LocalVariableTypeTable"
	case AttrVisibleTypeAnnotations:
		return "RuntimeVisibleTypeAnnotations"
	case AttrInvisibleTypeAnnotations:
		return "RuntimeInvisibleTypeAnnotations"
	case AttrStackMap:
		return "StackMapTable"
	}
	return "attribute"
}

// markFrames marks the offsets of StackMapTable frames so package frames finds a label at
// each of them (LabelAt) even after code was inserted around them.
func (d *decoder) markFrames(r *attrReader) error {
	cnt := r.u2()
	off := -1
	for i := 0; i < cnt && !r.bad; i++ {
		ft := r.u1()
		var delta int
		switch {
		case ft < 64:
			delta = ft
		case ft < 128:
			delta = ft - 64
			d.skipVType(r)
		case ft < 247:
			return d.errf(-1, "StackMapTable frame %d has reserved type %d", i, ft)
		case ft == 247:
			delta = r.u2()
			d.skipVType(r)
		case ft < 252:
			delta = r.u2()
		case ft < 255:
			delta = r.u2()
			for j := 0; j < ft-251; j++ {
				d.skipVType(r)
			}
		default:
			delta = r.u2()
			nl := r.u2()
			for j := 0; j < nl && !r.bad; j++ {
				d.skipVType(r)
			}
			ns := r.u2()
			for j := 0; j < ns && !r.bad; j++ {
				d.skipVType(r)
			}
		}
		if r.bad {
			break
		}
		off += delta + 1
		if err := d.ref(off, false, "StackMapTable", i, ""); err != nil {
			return err
		}
	}
	if r.bad || r.off != len(r.b) {
		return d.errf(-1, "malformed StackMapTable attribute")
	}
	return nil
}

func (d *decoder) skipVType(r *attrReader) {
	switch r.u1() {
	case 7, 8: // Object (pool index), Uninitialized (offset of the new)
		r.u2()
	}
}

// walkTypeAnnos parses a type-annotation attribute. With out nil it only marks and validates
// offsets; otherwise it appends the parsed annotations to out.
func (d *decoder) walkTypeAnnos(r *attrReader, k AttrKind, out *[]TypeAnnotation) error {
	cnt := r.u2()
	if out != nil {
		*out = make([]TypeAnnotation, 0, cnt)
	}
	for i := 0; i < cnt && !r.bad; i++ {
		var ta TypeAnnotation
		ta.TargetType = uint8(r.u1())
		switch tt := ta.TargetType; {
		case tt == 0x40 || tt == 0x41:
			n := r.u2()
			for j := 0; j < n && !r.bad; j++ {
				start, length, idx := r.u2(), r.u2(), r.u2()
				if r.bad {
					break
				}
				if out == nil {
					if err := d.rangeRef(start, length, k, i); err != nil {
						return err
					}
				} else {
					ta.Ranges = append(ta.Ranges, LocalVar{Start: d.label(start), End: d.label(start + length), Index: uint16(idx)})
				}
			}
		case tt == 0x42:
			ta.ExceptionIndex = uint16(r.u2())
		case tt >= 0x43 && tt <= 0x4b:
			off := r.u2()
			if tt >= 0x47 {
				ta.TypeArgIndex = uint8(r.u1())
			}
			if r.bad {
				break
			}
			if out == nil {
				if err := d.ref(off, false, attrKindName(k), i, ""); err != nil {
					return err
				}
			} else {
				ta.Insn = d.insnAt(off)
			}
		default:
			return d.errf(-1, "%s entry %d has target type 0x%02x, which does not belong in a Code attribute", attrKindName(k), i, tt)
		}
		restStart := r.off
		pl := r.u1()
		r.off += 2 * pl
		r.u2() // type_index
		skipElementPairs(r, 0)
		if r.bad {
			break
		}
		if out != nil {
			ta.Rest = r.b[restStart:r.off:r.off]
			*out = append(*out, ta)
		}
	}
	if r.bad || r.off != len(r.b) {
		return d.errf(-1, "malformed %s attribute", attrKindName(k))
	}
	return nil
}

// maxAnnotationNesting bounds recursion on hostile input; real annotations nest a few levels.
const maxAnnotationNesting = 256

func skipElementPairs(r *attrReader, depth int) {
	n := r.u2()
	for i := 0; i < n && !r.bad; i++ {
		r.u2()
		skipElementValue(r, depth)
	}
}

func skipElementValue(r *attrReader, depth int) {
	if depth > maxAnnotationNesting {
		r.bad = true
		return
	}
	switch r.u1() {
	case 'B', 'C', 'D', 'F', 'I', 'J', 'S', 'Z', 's', 'c':
		r.u2()
	case 'e':
		r.u2()
		r.u2()
	case '@':
		r.u2()
		skipElementPairs(r, depth+1)
	case '[':
		n := r.u2()
		for i := 0; i < n && !r.bad; i++ {
			skipElementValue(r, depth+1)
		}
	default:
		r.bad = true
	}
	if r.off > len(r.b) {
		r.bad = true
	}
}

// buildAttr fills a parsed attribute with labels (offsets were validated by markAttr).
func (d *decoder) buildAttr(at *Attr, data []byte) error {
	r := &attrReader{b: data}
	switch at.Kind {
	case AttrLineNumbers:
		cnt := r.u2()
		at.Lines = d.arena.lines.take(int(cnt), 0)
		for i := range at.Lines {
			start := r.u2()
			at.Lines[i] = LineNumber{Start: d.label(start), Line: uint16(r.u2())}
		}
	case AttrLocalVars, AttrLocalVarTypes:
		cnt := r.u2()
		at.Vars = d.arena.vars.take(int(cnt), 0)
		for i := range at.Vars {
			start, length := r.u2(), r.u2()
			at.Vars[i] = LocalVar{Start: d.label(start), End: d.label(start + length), Name: uint16(r.u2()), Desc: uint16(r.u2()), Index: uint16(r.u2())}
		}
	case AttrVisibleTypeAnnotations, AttrInvisibleTypeAnnotations:
		return d.walkTypeAnnos(r, at.Kind, &at.Annos)
	default:
		at.Raw = data
	}
	return nil
}

// LabelAt returns the label decoded at original offset off, or nil when nothing in the
// decoded attribute referred to that offset. Every branch target, table offset and
// StackMapTable frame position has one.
func (b *Body) LabelAt(off int) *Label {
	i := sort.Search(len(b.labels), func(i int) bool { return b.labels[i].Offset >= off })
	if i < len(b.labels) && b.labels[i].Offset == off {
		return &b.labels[i]
	}
	return nil
}

// InsnAt returns the decoded instruction at original offset off (for example the `new` that
// an uninitialized(off) verification type names), or nil when no instruction started there.
// It still finds instructions that were later removed; check Removed.
func (b *Body) InsnAt(off int) *Insn {
	i := sort.Search(len(b.insns), func(i int) bool { return b.insns[i].Offset >= off })
	if i < len(b.insns) && b.insns[i].Offset == off {
		return &b.insns[i]
	}
	return nil
}

// Removed reports whether the instruction was removed from its body.
func (i *Insn) Removed() bool { return i.removed }
