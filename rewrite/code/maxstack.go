package code

import (
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// ComputeMax returns the operand-stack depth and local-variable count the body needs: a
// depth data flow from the entry and from every handler (entered with the exception on the
// stack), and the highest slot any instruction, argument or NewLocal touches. Unreachable
// code is not counted, so the result can be below a compiler's value, never below what the
// verifier needs for reachable code. Encode writes the larger of this and the decoded values.
func (b *Body) ComputeMax() (maxStack, maxLocals int, err error) { return b.computeMax() }

func (b *Body) computeMax() (int, int, error) {
	maxLocals := max(argSlots(b.Method), b.localsHigh)
	for n := b.first; n != nil; n = n.next {
		n.depth = -1
		if n.Op > 0xff {
			continue
		}
		switch n.Op {
		case LLOAD, DLOAD, LSTORE, DSTORE, LLOAD_0, LLOAD_1, LLOAD_2, LLOAD_3, DLOAD_0, DLOAD_1, DLOAD_2, DLOAD_3,
			LSTORE_0, LSTORE_1, LSTORE_2, LSTORE_3, DSTORE_0, DSTORE_1, DSTORE_2, DSTORE_3:
			maxLocals = max(maxLocals, n.Var+2)
		case ILOAD, FLOAD, ALOAD, ISTORE, FSTORE, ASTORE, IINC, RET,
			ILOAD_0, ILOAD_1, ILOAD_2, ILOAD_3, FLOAD_0, FLOAD_1, FLOAD_2, FLOAD_3, ALOAD_0, ALOAD_1, ALOAD_2, ALOAD_3,
			ISTORE_0, ISTORE_1, ISTORE_2, ISTORE_3, FSTORE_0, FSTORE_1, FSTORE_2, FSTORE_3, ASTORE_0, ASTORE_1, ASTORE_2, ASTORE_3:
			maxLocals = max(maxLocals, n.Var+1)
		}
	}
	if b.first == nil {
		return 0, maxLocals, nil
	}
	var work []*Insn
	if b.arena != nil {
		work = b.arena.work[:0]
	}
	maxStack := 0
	var ferr error
	visit := func(from, t *Insn, d int32) {
		if t.depth < 0 {
			t.depth = d
			work = append(work, t)
		} else if t.depth != d && ferr == nil {
			ferr = b.Method.Errorf(from.Offset, "%s reaches %s with stack depth %d, but it is reached elsewhere with depth %d", from, t, d, t.depth)
		}
	}
	b.first.depth = 0
	work = append(work, b.first)
	for _, h := range b.Handlers {
		if h.Handler == nil || h.Handler.node == nil {
			return 0, 0, b.Method.Errorf(-1, "exception handler label is not placed")
		}
		if h.Handler.node.depth < 0 {
			maxStack = max(maxStack, 1)
		}
		visit(h.Handler.node, h.Handler.node, 1)
	}
	for len(work) > 0 && ferr == nil {
		start := work[len(work)-1]
		work = work[:len(work)-1]
		d := start.depth
		for n := start; n != nil; n = n.next {
			if n != start {
				if n.depth >= 0 {
					if n.depth != d {
						visit(n.prev, n, d)
					}
					break
				}
				n.depth = d
			}
			if n.Op == OpLabel {
				continue
			}
			pop, push, err := b.effect(n)
			if err != nil {
				return 0, 0, err
			}
			if int(d) < pop {
				return 0, 0, b.Method.Errorf(n.Offset, "%s pops %d values from a stack of depth %d", n, pop, d)
			}
			after := d - int32(pop) + int32(push)
			maxStack = max(maxStack, int(after))
			switch {
			case n.Op == JSR || n.Op == JSR_W:
				// The subroutine starts with the return address pushed; its ret resumes after
				// the jsr with the depth the jsr saw.
				if !b.placedNode(n.Target) {
					return 0, 0, b.unplaced(n, "jsr target")
				}
				visit(n, n.Target.node, after)
				after = d
			case n.Target != nil:
				if !b.placedNode(n.Target) {
					return 0, 0, b.unplaced(n, "branch target")
				}
				visit(n, n.Target.node, after)
			case n.Switch != nil:
				if !b.placedNode(n.Switch.Default) {
					return 0, 0, b.unplaced(n, "switch default")
				}
				visit(n, n.Switch.Default.node, after)
				for _, t := range n.Switch.Targets {
					if !b.placedNode(t) {
						return 0, 0, b.unplaced(n, "switch target")
					}
					visit(n, t.node, after)
				}
			}
			if EndsFlow(n.Op) {
				break
			}
			d = after
			if n.next == nil {
				return 0, 0, b.Method.Errorf(n.Offset, "execution falls off the end of the code after %s", n)
			}
		}
	}
	if b.arena != nil {
		b.arena.work = work[:0]
	}
	if ferr != nil {
		return 0, 0, ferr
	}
	return maxStack, maxLocals, nil
}

// placedNode is the check computeMax can make without a layout: the label has a node that is
// linked into some list.
func (b *Body) placedNode(l *Label) bool {
	return l != nil && l.node != nil && (l.node.prev != nil || l.node.next != nil || b.first == l.node)
}

// StackEffect returns how many operand stack slots n pops and pushes (a long or a double takes
// two), for analyses that follow the stack's depth.
func (b *Body) StackEffect(n *Insn) (pop, push int, err error) { return b.effect(n) }

// effect returns how many stack slots n pops and pushes.
func (b *Body) effect(n *Insn) (pop, push int, err error) {
	op := n.Op
	switch formats[op] {
	case fmtCP, fmtInvokeInterface, fmtInvokeDynamic, fmtMulti, fmtLdc:
	default:
		return int(stackPop[op]), int(stackPush[op]), nil
	}
	switch op {
	case LDC, LDC_W, LDC2_W, NEW, ANEWARRAY, CHECKCAST, INSTANCEOF:
		return int(stackPop[op]), int(stackPush[op]), nil
	case MULTIANEWARRAY:
		if n.Int < 1 {
			return 0, 0, b.Method.Errorf(n.Offset, "multianewarray with 0 dimensions")
		}
		return int(n.Int), 1, nil
	}
	desc, ok := b.refDesc(n.Index)
	if !ok {
		return 0, 0, b.Method.Errorf(n.Offset, "%s: constant pool entry %d is not a usable member reference", OpName(op), n.Index)
	}
	if op >= GETSTATIC && op <= PUTFIELD {
		s, ok := classfile.FieldSlots(desc)
		if !ok {
			return 0, 0, b.Method.Errorf(n.Offset, "%s: bad field descriptor %q", OpName(op), desc)
		}
		switch op {
		case GETSTATIC:
			return 0, s, nil
		case PUTSTATIC:
			return s, 0, nil
		case GETFIELD:
			return 1, s, nil
		}
		return 1 + s, 0, nil
	}
	args, ret, ok := classfile.MethodSlots(desc)
	if !ok {
		return 0, 0, b.Method.Errorf(n.Offset, "%s: bad method descriptor %q", OpName(op), desc)
	}
	if op != INVOKESTATIC && op != INVOKEDYNAMIC {
		args++
	}
	return args, ret, nil
}

// refDesc returns the raw descriptor bytes of a member or dynamic reference. Descriptors are
// ASCII where it matters, so the modified UTF-8 bytes are scanned without decoding.
func (b *Body) refDesc(idx uint16) ([]byte, bool) {
	e := b.Pool.Entries
	if int(idx) >= len(e) {
		return nil, false
	}
	switch e[idx].Tag {
	case classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref,
		classfile.TagInvokeDynamic, classfile.TagDynamic:
	default:
		return nil, false
	}
	nt := e[idx].B
	if int(nt) >= len(e) || e[nt].Tag != classfile.TagNameAndType {
		return nil, false
	}
	d := e[nt].B
	if int(d) >= len(e) || e[d].Tag != classfile.TagUtf8 {
		return nil, false
	}
	return e[d].Bytes, true
}
