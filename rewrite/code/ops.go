package code

import "fmt"

// Operand formats: how an opcode's operands are laid out in the bytecode.
const (
	fmtInvalid         uint8 = iota // not a valid opcode in a class file
	fmtNone                         // no operands
	fmtLocal                        // u1 local index (u2 after wide)
	fmtByte                         // bipush, newarray: one byte
	fmtShort                        // sipush: s2
	fmtLdc                          // ldc: u1 pool index
	fmtCP                           // u2 pool index
	fmtIinc                         // u1 index, s1 const (u2, s2 after wide)
	fmtBranch16                     // s2 offset
	fmtBranch32                     // s4 offset
	fmtTableSwitch                  // padding, default, low, high, offsets
	fmtLookupSwitch                 // padding, default, npairs, pairs
	fmtInvokeInterface              // u2 index, count, 0
	fmtInvokeDynamic                // u2 index, 0, 0
	fmtMulti                        // u2 index, dims
	fmtWide                         // prefix
)

var formats [256]uint8

// stackPop and stackPush are the fixed operand-stack effects in slots; variable ones
// (invokes, fields, ldc, multianewarray) are computed from the pool.
var stackPop, stackPush [256]int8

func init() {
	set := func(from, to Opcode, f uint8, pop, push int8) {
		for o := from; o <= to; o++ {
			formats[o], stackPop[o], stackPush[o] = f, pop, push
		}
	}
	set(NOP, NOP, fmtNone, 0, 0)
	set(ACONST_NULL, ICONST_5, fmtNone, 0, 1)
	set(LCONST_0, LCONST_1, fmtNone, 0, 2)
	set(FCONST_0, FCONST_2, fmtNone, 0, 1)
	set(DCONST_0, DCONST_1, fmtNone, 0, 2)
	set(BIPUSH, BIPUSH, fmtByte, 0, 1)
	set(SIPUSH, SIPUSH, fmtShort, 0, 1)
	set(LDC, LDC, fmtLdc, 0, 1)
	set(LDC_W, LDC_W, fmtCP, 0, 1)
	set(LDC2_W, LDC2_W, fmtCP, 0, 2)
	set(ILOAD, ALOAD, fmtLocal, 0, 1)
	set(LLOAD, LLOAD, fmtLocal, 0, 2)
	set(DLOAD, DLOAD, fmtLocal, 0, 2)
	set(ILOAD_0, ALOAD_3, fmtNone, 0, 1)
	set(LLOAD_0, LLOAD_3, fmtNone, 0, 2)
	set(DLOAD_0, DLOAD_3, fmtNone, 0, 2)
	set(IALOAD, SALOAD, fmtNone, 2, 1)
	set(LALOAD, LALOAD, fmtNone, 2, 2)
	set(DALOAD, DALOAD, fmtNone, 2, 2)
	set(ISTORE, ASTORE, fmtLocal, 1, 0)
	set(LSTORE, LSTORE, fmtLocal, 2, 0)
	set(DSTORE, DSTORE, fmtLocal, 2, 0)
	set(ISTORE_0, ASTORE_3, fmtNone, 1, 0)
	set(LSTORE_0, LSTORE_3, fmtNone, 2, 0)
	set(DSTORE_0, DSTORE_3, fmtNone, 2, 0)
	set(IASTORE, SASTORE, fmtNone, 3, 0)
	set(LASTORE, LASTORE, fmtNone, 4, 0)
	set(DASTORE, DASTORE, fmtNone, 4, 0)
	set(POP, POP, fmtNone, 1, 0)
	set(POP2, POP2, fmtNone, 2, 0)
	set(DUP, DUP, fmtNone, 1, 2)
	set(DUP_X1, DUP_X1, fmtNone, 2, 3)
	set(DUP_X2, DUP_X2, fmtNone, 3, 4)
	set(DUP2, DUP2, fmtNone, 2, 4)
	set(DUP2_X1, DUP2_X1, fmtNone, 3, 5)
	set(DUP2_X2, DUP2_X2, fmtNone, 4, 6)
	set(SWAP, SWAP, fmtNone, 2, 2)
	// Arithmetic: i/f take 2→1, l/d take 4→2, in the order i l f d.
	for o := IADD; o <= DREM; o++ {
		if (o-IADD)%2 == 0 {
			set(o, o, fmtNone, 2, 1)
		} else {
			set(o, o, fmtNone, 4, 2)
		}
	}
	set(INEG, INEG, fmtNone, 1, 1)
	set(LNEG, LNEG, fmtNone, 2, 2)
	set(FNEG, FNEG, fmtNone, 1, 1)
	set(DNEG, DNEG, fmtNone, 2, 2)
	set(ISHL, ISHL, fmtNone, 2, 1)
	set(LSHL, LSHL, fmtNone, 3, 2)
	set(ISHR, ISHR, fmtNone, 2, 1)
	set(LSHR, LSHR, fmtNone, 3, 2)
	set(IUSHR, IUSHR, fmtNone, 2, 1)
	set(LUSHR, LUSHR, fmtNone, 3, 2)
	set(IAND, IAND, fmtNone, 2, 1)
	set(LAND, LAND, fmtNone, 4, 2)
	set(IOR, IOR, fmtNone, 2, 1)
	set(LOR, LOR, fmtNone, 4, 2)
	set(IXOR, IXOR, fmtNone, 2, 1)
	set(LXOR, LXOR, fmtNone, 4, 2)
	set(IINC, IINC, fmtIinc, 0, 0)
	conv := []struct {
		op        Opcode
		pop, push int8
	}{
		{I2L, 1, 2}, {I2F, 1, 1}, {I2D, 1, 2}, {L2I, 2, 1}, {L2F, 2, 1}, {L2D, 2, 2},
		{F2I, 1, 1}, {F2L, 1, 2}, {F2D, 1, 2}, {D2I, 2, 1}, {D2L, 2, 2}, {D2F, 2, 1},
		{I2B, 1, 1}, {I2C, 1, 1}, {I2S, 1, 1}, {LCMP, 4, 1}, {FCMPL, 2, 1}, {FCMPG, 2, 1},
		{DCMPL, 4, 1}, {DCMPG, 4, 1},
	}
	for _, c := range conv {
		set(c.op, c.op, fmtNone, c.pop, c.push)
	}
	set(IFEQ, IFLE, fmtBranch16, 1, 0)
	set(IF_ICMPEQ, IF_ACMPNE, fmtBranch16, 2, 0)
	set(GOTO, GOTO, fmtBranch16, 0, 0)
	set(JSR, JSR, fmtBranch16, 0, 1)
	set(RET, RET, fmtLocal, 0, 0)
	set(TABLESWITCH, TABLESWITCH, fmtTableSwitch, 1, 0)
	set(LOOKUPSWITCH, LOOKUPSWITCH, fmtLookupSwitch, 1, 0)
	set(IRETURN, IRETURN, fmtNone, 1, 0)
	set(LRETURN, LRETURN, fmtNone, 2, 0)
	set(FRETURN, FRETURN, fmtNone, 1, 0)
	set(DRETURN, DRETURN, fmtNone, 2, 0)
	set(ARETURN, ARETURN, fmtNone, 1, 0)
	set(RETURN, RETURN, fmtNone, 0, 0)
	set(GETSTATIC, PUTFIELD, fmtCP, 0, 0)
	set(INVOKEVIRTUAL, INVOKESTATIC, fmtCP, 0, 0)
	set(INVOKEINTERFACE, INVOKEINTERFACE, fmtInvokeInterface, 0, 0)
	set(INVOKEDYNAMIC, INVOKEDYNAMIC, fmtInvokeDynamic, 0, 0)
	set(NEW, NEW, fmtCP, 0, 1)
	set(NEWARRAY, NEWARRAY, fmtByte, 1, 1)
	set(ANEWARRAY, ANEWARRAY, fmtCP, 1, 1)
	set(ARRAYLENGTH, ARRAYLENGTH, fmtNone, 1, 1)
	set(ATHROW, ATHROW, fmtNone, 1, 0)
	set(CHECKCAST, CHECKCAST, fmtCP, 1, 1)
	set(INSTANCEOF, INSTANCEOF, fmtCP, 1, 1)
	set(MONITORENTER, MONITOREXIT, fmtNone, 1, 0)
	set(WIDE, WIDE, fmtWide, 0, 0)
	set(MULTIANEWARRAY, MULTIANEWARRAY, fmtMulti, 0, 1)
	set(IFNULL, IFNONNULL, fmtBranch16, 1, 0)
	set(GOTO_W, GOTO_W, fmtBranch32, 0, 0)
	set(JSR_W, JSR_W, fmtBranch32, 0, 1)
}

// OpName returns the JVMS mnemonic of op ("label" for label nodes).
func OpName(op Opcode) string {
	if op == OpLabel {
		return "label"
	}
	if op < 256 && opNames[op] != "" {
		return opNames[op]
	}
	return fmt.Sprintf("opcode 0x%02x", uint16(op))
}

// IsBranch reports whether op is a conditional or unconditional jump or jsr with one target.
func IsBranch(op Opcode) bool {
	return op < 256 && (formats[op] == fmtBranch16 || formats[op] == fmtBranch32)
}

// IsConditional reports whether op is a two-way conditional branch.
func IsConditional(op Opcode) bool {
	return (op >= IFEQ && op <= IF_ACMPNE) || op == IFNULL || op == IFNONNULL
}

// EndsFlow reports whether control never falls through op to the next instruction.
func EndsFlow(op Opcode) bool {
	switch op {
	case GOTO, GOTO_W, RET, TABLESWITCH, LOOKUPSWITCH, IRETURN, LRETURN, FRETURN, DRETURN,
		ARETURN, RETURN, ATHROW:
		return true
	}
	return false
}

// invert returns the conditional branch with the opposite condition.
func invert(op Opcode) Opcode {
	switch op {
	case IFNULL:
		return IFNONNULL
	case IFNONNULL:
		return IFNULL
	}
	// The pairs eq/ne, lt/ge, gt/le sit next to each other with the first at an even
	// distance from ifeq, and if_icmp*/if_acmp* continue the same pattern.
	if (op-IFEQ)%2 == 0 {
		return op + 1
	}
	return op - 1
}

// String renders an instruction for messages and listings: mnemonic and operands, with
// labels by their original offset ("L12") or identity for new labels.
func (i *Insn) String() string {
	switch {
	case i.Op == OpLabel:
		return labelName(i.Label) + ":"
	case i.Op > 0xff:
		return OpName(i.Op)
	}
	name := OpName(i.Op)
	switch formats[i.Op] {
	case fmtLocal:
		return fmt.Sprintf("%s %d", name, i.Var)
	case fmtByte, fmtShort:
		return fmt.Sprintf("%s %d", name, i.Int)
	case fmtLdc, fmtCP, fmtInvokeDynamic:
		return fmt.Sprintf("%s #%d", name, i.Index)
	case fmtInvokeInterface:
		return fmt.Sprintf("%s #%d, %d", name, i.Index, i.Int)
	case fmtMulti:
		return fmt.Sprintf("%s #%d, %d", name, i.Index, i.Int)
	case fmtIinc:
		return fmt.Sprintf("%s %d, %d", name, i.Var, i.Int)
	case fmtBranch16, fmtBranch32:
		return name + " " + labelName(i.Target)
	case fmtTableSwitch, fmtLookupSwitch:
		if i.Switch == nil {
			return name
		}
		return fmt.Sprintf("%s (%d cases) default %s", name, len(i.Switch.Targets), labelName(i.Switch.Default))
	}
	return name
}

func labelName(l *Label) string {
	switch {
	case l == nil:
		return "<nil>"
	case l.Offset >= 0:
		return fmt.Sprintf("L%d", l.Offset)
	}
	return fmt.Sprintf("L?%p", l)
}
