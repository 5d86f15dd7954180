package frames

import (
	"fmt"
	"slices"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// machine applies instructions to a frame, the type-level semantics of JVMS 6.5. It needs no
// class hierarchy: every type an instruction produces comes from its own operands (descriptors,
// class constants) or from the types it consumes.
//
// In strict mode it also rejects what the JVM's type checker would reject and can be seen
// without a hierarchy (a load of a local of the wrong kind, a long popped by halves, an
// uninitialized object used before its constructor), because a frame derived from such a state
// would be a guess. In lenient mode, for analysing code without frames, it only needs the stack
// to have the values an instruction takes.
type machine struct {
	pool   *classfile.Pool
	class  string // the method's class: what uninitializedThis becomes
	strict bool
	f      *Frame
	args   []Type // scratch for the argument types of an invoke
	// localsGen changes whenever an instruction may have changed a local's type (a store, a
	// constructor call initializing copies held in locals); the engine's walk compares it to
	// skip merges into handlers that would bring nothing new.
	localsGen uint64
}

// memberDesc returns the descriptor of a field, method or invokedynamic operand and whether
// its name is <init>. Only the descriptor is decoded: names cost an allocation each and are
// needed only for messages (refName).
func (m *machine) memberDesc(idx uint16, op code.Opcode) (desc string, init bool, err error) {
	c, err := m.pool.Entry(idx)
	if err != nil {
		return "", false, err
	}
	want := []uint8{classfile.TagFieldref, classfile.TagMethodref, classfile.TagInterfaceMethodref}
	if op == code.INVOKEDYNAMIC {
		want = []uint8{classfile.TagInvokeDynamic}
	}
	if !slices.Contains(want, c.Tag) {
		return "", false, fmt.Errorf("%s operand %d is a %s constant", code.OpName(op), idx, classfile.TagName(c.Tag))
	}
	nt, err := m.pool.Entry(c.B)
	if err != nil || nt.Tag != classfile.TagNameAndType {
		return "", false, fmt.Errorf("%s operand %d has no NameAndType", code.OpName(op), idx)
	}
	name, err := m.pool.Entry(nt.A)
	if err != nil || name.Tag != classfile.TagUtf8 {
		return "", false, fmt.Errorf("%s operand %d has no name", code.OpName(op), idx)
	}
	desc, err = m.pool.Utf8(nt.B)
	return desc, string(name.Bytes) == "<init>", err
}

// refName names a member operand for messages.
func (m *machine) refName(idx uint16, op code.Opcode) string {
	if op == code.INVOKEDYNAMIC {
		name, desc, _ := m.pool.DynamicNameAndType(idx)
		return "invokedynamic " + name + desc
	}
	owner, name, desc, _ := m.pool.MemberRef(idx)
	return owner + "." + name + desc
}

// methodTypes converts the argument types of a method descriptor into buf and returns them
// with the return type (void when it has none).
func methodTypes(desc string, buf []Type) (args []Type, ret Type, void bool, err error) {
	if desc == "" || desc[0] != '(' {
		return nil, Type{}, false, fmt.Errorf("%q is not a method descriptor", desc)
	}
	i := 1
	for i < len(desc) && desc[i] != ')' {
		j, err := classfile.FieldTypeEnd(desc, i)
		if err != nil {
			return nil, Type{}, false, err
		}
		t, err := FieldType(desc[i:j])
		if err != nil {
			return nil, Type{}, false, fmt.Errorf("%q: %w", desc, err)
		}
		buf = append(buf, t)
		i = j
	}
	if i >= len(desc) {
		return nil, Type{}, false, fmt.Errorf("%q: missing ')'", desc)
	}
	if r := desc[i+1:]; r != "V" {
		ret, err = FieldType(r)
		if err != nil {
			return nil, Type{}, false, fmt.Errorf("%q: %w", desc, err)
		}
		return buf, ret, false, nil
	}
	return buf, Type{}, true, nil
}

func (m *machine) push(t Type) {
	m.f.Stack = append(m.f.Stack, t)
	if t.IsWide() {
		m.f.Stack = append(m.f.Stack, TopType)
	}
}

func (m *machine) need(n int) error {
	if len(m.f.Stack) < n {
		return fmt.Errorf("operand stack underflow: needs %d slots, has %d", n, len(m.f.Stack))
	}
	return nil
}

// popSlots removes n slots without looking at them (pop, pop2).
func (m *machine) popSlots(n int) error {
	if err := m.need(n); err != nil {
		return err
	}
	m.f.Stack = m.f.Stack[:len(m.f.Stack)-n]
	return nil
}

// pop removes one value of the kind of t (two slots for long and double) and returns it.
func (m *machine) pop(want Kind) (Type, error) {
	wide := want == Long || want == Double
	n := 1
	if wide {
		n = 2
	}
	if err := m.need(n); err != nil {
		return Type{}, err
	}
	t := m.f.Stack[len(m.f.Stack)-n]
	m.f.Stack = m.f.Stack[:len(m.f.Stack)-n]
	if !m.strict {
		return t, nil
	}
	switch {
	case want == Object:
		if !t.IsReference() {
			return t, fmt.Errorf("expected a reference on the stack, found %s", t)
		}
	case t.Kind != want:
		return t, fmt.Errorf("expected %s on the stack, found %s", want, t)
	}
	return t, nil
}

// cat1At checks that the value depth slots below the top takes one slot, for pop, dup and
// friends, refusing half of a long.
func (m *machine) cat1At(depth int) error {
	if err := m.need(depth + 1); err != nil {
		return err
	}
	if !m.strict {
		return nil
	}
	i := len(m.f.Stack) - 1 - depth
	if m.f.Stack[i].Kind == Top || m.f.Stack[i].IsWide() {
		return fmt.Errorf("stack slot %d is half of a long or double", i)
	}
	return nil
}

func (m *machine) load(idx int, want Kind) error {
	t := m.f.Local(idx)
	if m.strict {
		ok := t.Kind == want
		if want == Object {
			ok = t.IsReference()
		}
		if !ok {
			return fmt.Errorf("load of local %d: expected %s, found %s", idx, want, t)
		}
		if t.IsWide() && m.f.Local(idx+1).Kind != Top {
			return fmt.Errorf("load of local %d: second half is %s", idx, m.f.Local(idx+1))
		}
	}
	if want != Object && !m.strict {
		// Old code without frames may reuse a slot with another kind in a merge; the load
		// tells what the value is.
		t = Type{Kind: want}
	}
	m.push(t)
	return nil
}

func (m *machine) store(idx int, want Kind) error {
	var t Type
	var err error
	if want == Object {
		// astore also stores the return address of jsr (JVMS 6.5 astore).
		if err = m.need(1); err != nil {
			return err
		}
		t = m.f.Stack[len(m.f.Stack)-1]
		if m.strict && !t.IsReference() && t.Kind != ReturnAddress {
			return fmt.Errorf("astore of %s", t)
		}
		m.f.Stack = m.f.Stack[:len(m.f.Stack)-1]
	} else if t, err = m.pop(want); err != nil {
		return err
	}
	if want != Object {
		t = Type{Kind: want}
	}
	m.f.SetLocal(idx, t)
	m.localsGen++
	return nil
}

var arithKinds = [4]Kind{Integer, Long, Float, Double}

// loadKind maps the order of the typed load, store and return families (i, l, f, d, a).
func loadKind(i int) Kind { return [...]Kind{Integer, Long, Float, Double, Object}[i] }

// binary pops two values of kind k and pushes one.
func (m *machine) binary(k Kind) error {
	if _, err := m.pop(k); err != nil {
		return err
	}
	if _, err := m.pop(k); err != nil {
		return err
	}
	m.push(Type{Kind: k})
	return nil
}

func (m *machine) convert(from, to Kind) error { return m.replace(from, Type{Kind: to}) }

// replace pops a value of kind from and pushes t.
func (m *machine) replace(from Kind, t Type) error {
	if _, err := m.pop(from); err != nil {
		return err
	}
	m.push(t)
	return nil
}

// className returns the class a CONSTANT_Class operand names.
func (m *machine) className(idx uint16) (string, error) { return m.pool.ClassName(idx) }

// exec applies one instruction (not a label) to the frame. Branch targets are the caller's
// business; jsr pushes its return address and ret leaves the frame as it is. The opcodes come
// in ranges of one kind, each applied by a function of its own: constants and loads here,
// then stores (storeOp), the stack's own instructions, arithmetic and conversions (numeric),
// branches and returns (control), and fields, calls and objects (objectOp).
func (m *machine) exec(in *code.Insn) error {
	op := in.Op
	switch {
	case op >= code.ISTORE && op <= code.SASTORE:
		return m.storeOp(op, in.Var)
	case op >= code.POP && op <= code.SWAP:
		return m.stackInsn(op)
	case op >= code.IADD && op <= code.DCMPG:
		return m.numeric(in)
	case op >= code.IFEQ && op <= code.RETURN:
		return m.control(op)
	case op >= code.GETSTATIC:
		return m.objectOp(in)
	case op == code.NOP:
	case op == code.ACONST_NULL:
		m.push(NullType)
	case op >= code.ICONST_M1 && op <= code.ICONST_5, op == code.BIPUSH, op == code.SIPUSH:
		m.push(IntType)
	case op == code.LCONST_0 || op == code.LCONST_1:
		m.push(LongType)
	case op >= code.FCONST_0 && op <= code.FCONST_2:
		m.push(FloatType)
	case op == code.DCONST_0 || op == code.DCONST_1:
		m.push(DoubleType)
	case op == code.LDC || op == code.LDC_W || op == code.LDC2_W:
		t, err := m.constant(in.Index)
		if err != nil {
			return err
		}
		m.push(t)
	case op >= code.ILOAD && op <= code.ALOAD:
		return m.load(in.Var, loadKind(int(op-code.ILOAD)))
	case op >= code.ILOAD_0 && op <= code.ALOAD_3:
		return m.load(in.Var, loadKind(int(op-code.ILOAD_0)/4))
	case op >= code.IALOAD && op <= code.SALOAD:
		return m.arrayLoad(op)
	default:
		return fmt.Errorf("%s is not a valid instruction", code.OpName(op))
	}
	return nil
}

// storeOp applies the stores to locals and to array elements (ISTORE to SASTORE).
func (m *machine) storeOp(op code.Opcode, v int) error {
	switch {
	case op >= code.ISTORE && op <= code.ASTORE:
		return m.store(v, loadKind(int(op-code.ISTORE)))
	case op >= code.ISTORE_0 && op <= code.ASTORE_3:
		return m.store(v, loadKind(int(op-code.ISTORE_0)/4))
	}
	k := Integer
	switch op {
	case code.LASTORE:
		k = Long
	case code.FASTORE:
		k = Float
	case code.DASTORE:
		k = Double
	case code.AASTORE:
		k = Object
	}
	if _, err := m.pop(k); err != nil {
		return err
	}
	if _, err := m.pop(Integer); err != nil {
		return err
	}
	_, err := m.pop(Object)
	return err
}

// stackInsn applies pop, pop2 and the dup and swap family (POP to SWAP).
func (m *machine) stackInsn(op code.Opcode) error {
	switch op {
	case code.POP:
		if err := m.cat1At(0); err != nil {
			return err
		}
		return m.popSlots(1)
	case code.POP2:
		return m.popSlots(2)
	}
	return m.stackOp(op)
}

// numeric applies arithmetic, shifts, logic, iinc, conversions and comparisons (IADD to
// DCMPG).
func (m *machine) numeric(in *code.Insn) error {
	op := in.Op
	switch {
	case op >= code.IADD && op <= code.DREM:
		return m.binary(arithKinds[(op-code.IADD)%4])
	case op >= code.INEG && op <= code.DNEG:
		k := arithKinds[(op-code.INEG)%4]
		return m.convert(k, k)
	case op >= code.ISHL && op <= code.LUSHR:
		k := Integer
		if (op-code.ISHL)%2 == 1 {
			k = Long
		}
		if _, err := m.pop(Integer); err != nil {
			return err
		}
		return m.convert(k, k)
	case op >= code.IAND && op <= code.LXOR:
		k := Integer
		if (op-code.IAND)%2 == 1 {
			k = Long
		}
		return m.binary(k)
	case op == code.IINC:
		if m.strict && m.f.Local(in.Var).Kind != Integer {
			return fmt.Errorf("iinc of local %d, which holds %s", in.Var, m.f.Local(in.Var))
		}
		return nil
	case op >= code.I2L && op <= code.D2F:
		conv := [...][2]Kind{
			{Integer, Long}, {Integer, Float}, {Integer, Double},
			{Long, Integer}, {Long, Float}, {Long, Double},
			{Float, Integer}, {Float, Long}, {Float, Double},
			{Double, Integer}, {Double, Long}, {Double, Float},
		}[op-code.I2L]
		return m.convert(conv[0], conv[1])
	case op >= code.I2B && op <= code.I2S:
		return m.convert(Integer, Integer)
	}
	k := [...]Kind{Long, Float, Float, Double, Double}[op-code.LCMP] // LCMP to DCMPG
	if _, err := m.pop(k); err != nil {
		return err
	}
	return m.convert(k, Integer)
}

// control applies branches, switches, jsr, ret and returns (IFEQ to RETURN).
func (m *machine) control(op code.Opcode) error {
	switch {
	case op >= code.IFEQ && op <= code.IFLE, op == code.TABLESWITCH, op == code.LOOKUPSWITCH:
		_, err := m.pop(Integer)
		return err
	case op >= code.IF_ICMPEQ && op <= code.IF_ICMPLE:
		if _, err := m.pop(Integer); err != nil {
			return err
		}
		_, err := m.pop(Integer)
		return err
	case op == code.IF_ACMPEQ || op == code.IF_ACMPNE:
		if _, err := m.pop(Object); err != nil {
			return err
		}
		_, err := m.pop(Object)
		return err
	case op == code.ARETURN:
		_, err := m.pop(Object)
		return err
	case op == code.JSR:
		m.push(Type{Kind: ReturnAddress})
	case op == code.RET:
		if m.strict {
			return fmt.Errorf("ret needs a class file version below 50")
		}
	case op >= code.IRETURN && op <= code.DRETURN:
		_, err := m.pop(loadKind(int(op - code.IRETURN)))
		return err
	}
	return nil // goto, return
}

// objectOp applies fields, calls, object and array creation, casts, athrow, monitors and the
// opcodes after them (GETSTATIC to JSR_W).
func (m *machine) objectOp(in *code.Insn) error {
	op := in.Op
	switch {
	case op >= code.GETSTATIC && op <= code.PUTFIELD:
		return m.field(in)
	case op >= code.INVOKEVIRTUAL && op <= code.INVOKEDYNAMIC:
		return m.invoke(in)
	case op == code.IFNULL || op == code.IFNONNULL, op == code.ATHROW, op == code.MONITORENTER, op == code.MONITOREXIT:
		_, err := m.pop(Object)
		return err
	case op == code.GOTO_W:
		return nil
	case op == code.JSR_W:
		m.push(Type{Kind: ReturnAddress})
		return nil
	case op == code.ARRAYLENGTH:
		return m.convert(Object, Integer)
	case op == code.NEW, op == code.NEWARRAY, op == code.ANEWARRAY, op == code.CHECKCAST,
		op == code.INSTANCEOF, op == code.MULTIANEWARRAY:
		return m.typeInsn(in)
	}
	return fmt.Errorf("%s is not a valid instruction", code.OpName(op))
}

// typeInsn applies the instructions that name a type: new, newarray, anewarray, checkcast,
// instanceof, multianewarray.
func (m *machine) typeInsn(in *code.Insn) error {
	if in.Op == code.NEWARRAY {
		name, ok := classfile.NewArrayClass(in.Int)
		if !ok {
			return fmt.Errorf("newarray of unknown type %d", in.Int)
		}
		return m.replace(Integer, ObjectType(name))
	}
	name, err := m.className(in.Index)
	if err != nil {
		return err
	}
	switch in.Op {
	case code.NEW:
		m.push(Type{Kind: Uninitialized, Site: in})
	case code.ANEWARRAY:
		return m.replace(Integer, ObjectType("["+classfile.DescriptorOfClass(name)))
	case code.CHECKCAST:
		return m.replace(Object, ObjectType(name))
	case code.INSTANCEOF:
		return m.convert(Object, Integer)
	case code.MULTIANEWARRAY:
		if in.Int < 1 {
			return fmt.Errorf("multianewarray with %d dimensions", in.Int)
		}
		for i := int32(0); i < in.Int; i++ {
			if _, err := m.pop(Integer); err != nil {
				return err
			}
		}
		m.push(ObjectType(name))
	}
	return nil
}

// constant returns the type ldc pushes for the pool entry.
func (m *machine) constant(idx uint16) (Type, error) {
	c, err := m.pool.Entry(idx)
	if err != nil {
		return Type{}, err
	}
	switch c.Tag {
	case classfile.TagInteger:
		return IntType, nil
	case classfile.TagFloat:
		return FloatType, nil
	case classfile.TagLong:
		return LongType, nil
	case classfile.TagDouble:
		return DoubleType, nil
	case classfile.TagString:
		return ObjectType("java/lang/String"), nil
	case classfile.TagClass:
		return ObjectType("java/lang/Class"), nil
	case classfile.TagMethodType:
		return ObjectType("java/lang/invoke/MethodType"), nil
	case classfile.TagMethodHandle:
		return ObjectType("java/lang/invoke/MethodHandle"), nil
	case classfile.TagDynamic:
		_, desc, err := m.pool.DynamicNameAndType(idx)
		if err != nil {
			return Type{}, err
		}
		return FieldType(desc)
	}
	return Type{}, fmt.Errorf("ldc of a %s constant", classfile.TagName(c.Tag))
}

// arrayLoad pops index and array and pushes the element; aaload's element type comes from the
// array's own type.
func (m *machine) arrayLoad(op code.Opcode) error {
	if _, err := m.pop(Integer); err != nil {
		return err
	}
	arr, err := m.pop(Object)
	if err != nil {
		return err
	}
	switch op {
	case code.LALOAD:
		m.push(LongType)
	case code.FALOAD:
		m.push(FloatType)
	case code.DALOAD:
		m.push(DoubleType)
	case code.AALOAD:
		switch {
		case arr.Kind == Null:
			// The type checker gives null for an element of the null array; it throws anyway.
			m.push(NullType)
		case arr.Kind == Object && len(arr.Class) > 1 && arr.Class[0] == '[':
			t, err := FieldType(arr.Class[1:])
			if err != nil {
				return err
			}
			if !t.IsReference() && m.strict {
				return fmt.Errorf("aaload from %s", arr)
			}
			m.push(t)
		case !m.strict:
			m.push(ObjectType(""))
		default:
			return fmt.Errorf("aaload from %s, which is not an array of references", arr)
		}
	default:
		m.push(IntType)
	}
	return nil
}

// stackOp runs dup, dup_x1, dup_x2, dup2, dup2_x1, dup2_x2 and swap on slots. In the expanded
// view a long is two slots, so the slot form of each instruction is exact; strict mode checks
// that no long is split.
func (m *machine) stackOp(op code.Opcode) error {
	if op == code.SWAP {
		if err := m.cat1At(0); err != nil {
			return err
		}
		if err := m.cat1At(1); err != nil {
			return err
		}
		n := len(m.f.Stack)
		m.f.Stack[n-1], m.f.Stack[n-2] = m.f.Stack[n-2], m.f.Stack[n-1]
		return nil
	}
	// dup, dup_x1, dup_x2, dup2, dup2_x1, dup2_x2 are consecutive opcodes: one or two slots
	// copied, under zero, one or two slots.
	k := int(op - code.DUP)
	take, under := k/3+1, k%3
	if err := m.need(take + under); err != nil {
		return err
	}
	n := len(m.f.Stack)
	if m.strict {
		// A group boundary may not fall inside a long: the slot just below each group must not
		// be the first half of one whose second half is above it.
		for _, b := range []int{n - take, n - take - under} {
			if b > 0 && b < n && m.f.Stack[b-1].IsWide() {
				return fmt.Errorf("%s would split a %s", code.OpName(op), m.f.Stack[b-1])
			}
		}
		if take == 1 && m.f.Stack[n-1].Kind == Top {
			return fmt.Errorf("%s of half of a long or double", code.OpName(op))
		}
	}
	var top [2]Type
	copy(top[:], m.f.Stack[n-take:])
	m.f.Stack = append(m.f.Stack, top[:take]...)
	// Shift the `under` slots and the copied ones up by take, then put the copy beneath them.
	copy(m.f.Stack[n-take-under+take:], m.f.Stack[n-take-under:n])
	copy(m.f.Stack[n-take-under:], top[:take])
	return nil
}

func (m *machine) field(in *code.Insn) error {
	desc, _, err := m.memberDesc(in.Index, in.Op)
	if err != nil {
		return err
	}
	t, err := FieldType(desc)
	if err != nil {
		return err
	}
	switch in.Op {
	case code.GETSTATIC:
		m.push(t)
	case code.PUTSTATIC:
		_, err := m.pop(t.Kind)
		return err
	case code.GETFIELD:
		if _, err := m.pop(Object); err != nil {
			return err
		}
		m.push(t)
	case code.PUTFIELD:
		if _, err := m.pop(t.Kind); err != nil {
			return err
		}
		// Constructors store fields of uninitializedThis before super() (javac's outer-this,
		// Kotlin and Scala fields, Java 25 prologues); that is allowed and changes no type.
		_, err := m.pop(Object)
		return err
	}
	return nil
}

func (m *machine) invoke(in *code.Insn) error {
	desc, init, err := m.memberDesc(in.Index, in.Op)
	if err != nil {
		return err
	}
	args, ret, void, err := methodTypes(desc, m.args[:0])
	if err != nil {
		return err
	}
	m.args = args
	for i := len(args) - 1; i >= 0; i-- {
		if _, err := m.pop(args[i].Kind); err != nil {
			return fmt.Errorf("argument %d of %s: %w", i+1, m.refName(in.Index, in.Op), err)
		}
	}
	if in.Op != code.INVOKESTATIC && in.Op != code.INVOKEDYNAMIC {
		recv, err := m.pop(Object)
		if err != nil {
			return fmt.Errorf("receiver of %s: %w", m.refName(in.Index, in.Op), err)
		}
		if in.Op == code.INVOKESPECIAL && init {
			if err := m.initialize(recv); err != nil {
				return err
			}
		} else if m.strict && (recv.Kind == Uninitialized || recv.Kind == UninitializedThis) {
			return fmt.Errorf("%s called on %s", m.refName(in.Index, in.Op), recv)
		}
	}
	if !void {
		m.push(ret)
	}
	return nil
}

// initialize replaces every copy of the object a constructor call initialized, in the locals
// and on the stack, by its class type (JVMS 4.10.1.9 invokespecial).
func (m *machine) initialize(recv Type) error {
	var to Type
	switch recv.Kind {
	case UninitializedThis:
		to = ObjectType(m.class)
	case Uninitialized:
		if recv.Site == nil {
			return fmt.Errorf("constructor call on %s, whose new is unknown", recv)
		}
		name, err := m.className(recv.Site.Index)
		if err != nil {
			return err
		}
		to = ObjectType(name)
	default:
		if m.strict {
			return fmt.Errorf("constructor call on %s, which is already initialized", recv)
		}
		return nil
	}
	for _, ts := range [][]Type{m.f.Locals, m.f.Stack} {
		for i := range ts {
			if ts[i].Equal(recv) {
				ts[i] = to
			}
		}
	}
	m.localsGen++
	return nil
}
