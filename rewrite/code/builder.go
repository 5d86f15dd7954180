package code

import (
	"math"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Seq is a detached run of nodes being built for insertion into a Body. Methods chain; the
// first error (a constant pool overflow, a bad operand) sticks and is returned by Err, and
// later calls do nothing, so a pass checks once before inserting.
type Seq struct {
	b           *Body
	first, last *Insn
	err         error
}

// Seq starts an empty sequence whose nodes and constants belong to b.
func (b *Body) Seq() *Seq { return &Seq{b: b} }

// Reset empties s for building another sequence of b, its nodes and its error dropped: a pass
// that builds many short sequences in turn (advice at every return) keeps one.
func (s *Seq) Reset(b *Body) { *s = Seq{b: b} }

// Err returns the first error met while building.
func (s *Seq) Err() error { return s.err }

// Empty reports whether the sequence has no nodes.
func (s *Seq) Empty() bool { return s.first == nil }

func (s *Seq) fail(format string, args ...any) *Seq {
	if s.err == nil {
		s.err = s.b.Method.Errorf(-1, format, args...)
	}
	return s
}

func (s *Seq) poolErr(err error) *Seq {
	if s.err == nil {
		s.err = s.b.Method.Errorf(-1, "%w", err)
	}
	return s
}

func (s *Seq) push(n *Insn) *Seq {
	n.prev = s.last
	n.next = nil
	if s.last != nil {
		s.last.next = n
	} else {
		s.first = n
	}
	s.last = n
	return s
}

// Insn appends a copy of a prepared node (operands already set).
func (s *Seq) Insn(proto Insn) *Seq {
	if s.err != nil {
		return s
	}
	if proto.Op > 0xff || formats[proto.Op] == fmtInvalid || formats[proto.Op] == fmtWide {
		return s.fail("%s is not an instruction to insert (labels go in with Mark)", OpName(proto.Op))
	}
	n := s.b.newNode()
	n.Op, n.Var, n.Index, n.Int, n.Wide, n.Target, n.Switch = proto.Op, proto.Var, proto.Index, proto.Int, proto.Wide, proto.Target, proto.Switch
	return s.push(n)
}

// Op appends an instruction without operands (dup, pop, athrow, iadd, return, ...).
func (s *Seq) Op(op Opcode) *Seq {
	if s.err != nil {
		return s
	}
	if op > 0xff || formats[op] != fmtNone {
		return s.fail("opcode %s needs operands", OpName(op))
	}
	n := s.b.newNode()
	n.Op = op
	return s.push(n)
}

// Int pushes an int constant with the shortest instruction: iconst_*, bipush, sipush or ldc.
func (s *Seq) Int(v int32) *Seq {
	if s.err != nil {
		return s
	}
	n := s.b.newNode()
	switch {
	case v >= -1 && v <= 5:
		n.Op = ICONST_0 + Opcode(v)
	case v >= math.MinInt8 && v <= math.MaxInt8:
		n.Op, n.Int = BIPUSH, v
	case v >= math.MinInt16 && v <= math.MaxInt16:
		n.Op, n.Int = SIPUSH, v
	default:
		idx, err := s.b.Pool.AddInteger(v)
		if err != nil {
			return s.poolErr(err)
		}
		n.Op, n.Index = LDC, idx
	}
	return s.push(n)
}

// Long pushes a long constant: lconst_0/1 or ldc2_w.
func (s *Seq) Long(v int64) *Seq {
	if s.err != nil {
		return s
	}
	n := s.b.newNode()
	if v == 0 || v == 1 {
		n.Op = LCONST_0 + Opcode(v)
		return s.push(n)
	}
	idx, err := s.b.Pool.AddLong(v)
	if err != nil {
		return s.poolErr(err)
	}
	n.Op, n.Index = LDC2_W, idx
	return s.push(n)
}

// String pushes a string constant (ldc, or ldc_w when the index does not fit a byte).
func (s *Seq) String(v string) *Seq {
	if s.err != nil {
		return s
	}
	idx, err := s.b.Pool.AddString(v)
	if err != nil {
		return s.poolErr(err)
	}
	return s.Ldc(idx)
}

// Ldc pushes the single-slot constant at pool index idx; Encode picks ldc or ldc_w.
func (s *Seq) Ldc(idx uint16) *Seq {
	if s.err != nil {
		return s
	}
	n := s.b.newNode()
	n.Op, n.Index = LDC, idx
	return s.push(n)
}

// Load appends a load of local slot idx; op is one of iload, lload, fload, dload, aload. The
// one-byte iload_0-style form is used for slots 0–3 and wide for slots above 255.
func (s *Seq) Load(op Opcode, idx int) *Seq { return s.local(op, ILOAD, ILOAD_0, idx) }

// Store appends a store to local slot idx; op is one of istore, lstore, fstore, dstore, astore.
func (s *Seq) Store(op Opcode, idx int) *Seq { return s.local(op, ISTORE, ISTORE_0, idx) }

func (s *Seq) local(op, base, short0 Opcode, idx int) *Seq {
	if s.err != nil {
		return s
	}
	if op < base || op > base+4 {
		return s.fail("%s is not a local-variable %s", OpName(op), OpName(base))
	}
	if idx < 0 || idx > math.MaxUint16 {
		return s.fail("local slot %d out of range", idx)
	}
	n := s.b.newNode()
	n.Var = idx
	if idx <= 3 {
		n.Op = short0 + (op-base)*4 + Opcode(idx)
	} else {
		n.Op = op
	}
	return s.push(n)
}

// Iinc appends iinc (wide when the slot or increment needs it).
func (s *Seq) Iinc(idx int, delta int16) *Seq {
	if s.err != nil {
		return s
	}
	if idx < 0 || idx > math.MaxUint16 {
		return s.fail("local slot %d out of range", idx)
	}
	n := s.b.newNode()
	n.Op, n.Var, n.Int = IINC, idx, int32(delta)
	return s.push(n)
}

// Invoke appends a method call. iface selects an InterfaceMethodref (required for
// invokeinterface, and for static or special calls to interface methods).
func (s *Seq) Invoke(op Opcode, owner, name, desc string, iface bool) *Seq {
	if s.err != nil {
		return s
	}
	if op < INVOKEVIRTUAL || op > INVOKEINTERFACE {
		return s.fail("%s is not an invoke instruction", OpName(op))
	}
	idx, err := s.b.Pool.AddMethodref(owner, name, desc, iface || op == INVOKEINTERFACE)
	if err != nil {
		return s.poolErr(err)
	}
	n := s.b.newNode()
	n.Op, n.Index = op, idx
	if op == INVOKEINTERFACE {
		args, _, ok := classfile.MethodSlots(desc)
		if !ok {
			return s.fail("bad method descriptor %q", desc)
		}
		n.Int = int32(args + 1)
	}
	return s.push(n)
}

// InvokeStatic appends invokestatic of a class method.
func (s *Seq) InvokeStatic(owner, name, desc string) *Seq {
	return s.Invoke(INVOKESTATIC, owner, name, desc, false)
}

// Field appends getstatic, putstatic, getfield or putfield.
func (s *Seq) Field(op Opcode, owner, name, desc string) *Seq {
	if s.err != nil {
		return s
	}
	if op < GETSTATIC || op > PUTFIELD {
		return s.fail("%s is not a field instruction", OpName(op))
	}
	idx, err := s.b.Pool.AddFieldref(owner, name, desc)
	if err != nil {
		return s.poolErr(err)
	}
	n := s.b.newNode()
	n.Op, n.Index = op, idx
	return s.push(n)
}

// Type appends new, anewarray, checkcast or instanceof of the internal class name.
func (s *Seq) Type(op Opcode, class string) *Seq {
	if s.err != nil {
		return s
	}
	switch op {
	case NEW, ANEWARRAY, CHECKCAST, INSTANCEOF:
	default:
		return s.fail("%s does not take a class operand", OpName(op))
	}
	idx, err := s.b.Pool.AddClass(class)
	if err != nil {
		return s.poolErr(err)
	}
	n := s.b.newNode()
	n.Op, n.Index = op, idx
	return s.push(n)
}

// Jump appends a branch (if*, goto, jsr) to target. Encode picks the short or wide form.
func (s *Seq) Jump(op Opcode, target *Label) *Seq {
	if s.err != nil {
		return s
	}
	if op > 0xff || (formats[op] != fmtBranch16 && formats[op] != fmtBranch32) {
		return s.fail("%s is not a branch", OpName(op))
	}
	n := s.b.newNode()
	n.Op, n.Target = op, target
	return s.push(n)
}

// Mark places label l at this point of the sequence. A label can be placed once.
func (s *Seq) Mark(l *Label) *Seq {
	if s.err != nil {
		return s
	}
	if l.node != nil && (l.node.prev != nil || l.node.next != nil || s.b.first == l.node) {
		return s.fail("label already placed")
	}
	return s.push(s.b.labelNode(l))
}
