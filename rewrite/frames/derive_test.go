package frames

import (
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// asm holds a hand-assembled method: bytecode with pool indices patched in by the test.
type asm struct {
	pool *classfile.Pool
	t    *testing.T
}

func newAsm(t *testing.T) *asm { return &asm{pool: newPool(), t: t} }

func (a *asm) class(name string) (hi, lo byte) {
	i, err := a.pool.AddClass(name)
	if err != nil {
		a.t.Fatal(err)
	}
	return byte(i >> 8), byte(i)
}

func (a *asm) method(owner, name, desc string) (hi, lo byte) {
	i, err := a.pool.AddMethodref(owner, name, desc, false)
	if err != nil {
		a.t.Fatal(err)
	}
	return byte(i >> 8), byte(i)
}

// body decodes bytecode as a method of a version 52 class and attaches frames. The code has no
// StackMapTable, so every frame it needs is derived: exactly the frames inserted code needs.
func (a *asm) body(class, name, desc string, access uint16, maxLocals int, bc []byte, handlers ...classfile.ExceptionEntry) (*code.Body, *Method) {
	a.t.Helper()
	c := &classfile.Code{MaxStack: 10, MaxLocals: uint16(maxLocals), Bytecode: bc, Exceptions: handlers}
	b, err := code.Decode(c, a.pool, code.Method{Class: class, Name: name, Desc: desc, Access: access, Major: 52})
	if err != nil {
		a.t.Fatal(err)
	}
	m, err := Attach(b)
	if err != nil {
		a.t.Fatal(err)
	}
	return b, m
}

func (a *asm) frames(b *code.Body, m *Method) ([]Entry, error) {
	data, err := m.EncodeFrames(b)
	if err != nil || data == nil {
		return nil, err
	}
	return Decode(data, a.pool, m.Initial(), Limits{CodeLength: b.CodeLen(), MaxLocals: 10, MaxStack: 10})
}

func wantError(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

// A join of two different classes on the stack would need their common supertype: refused.
func TestJoinOfClassesOnStackRefused(t *testing.T) {
	a := newAsm(t)
	sh, sl := a.class("java/lang/String")
	bh, bl := a.class("java/lang/StringBuilder")
	bc := []byte{
		0x1a,        // 0 iload_0
		0x99, 0, 10, // 1 ifeq 11
		0x01,         // 4 aconst_null
		0xc0, sh, sl, // 5 checkcast String
		0xa7, 0, 7, // 8 goto 15
		0x01,         // 11 aconst_null
		0xc0, bh, bl, // 12 checkcast StringBuilder
		0xb0, // 15 areturn
	}
	b, m := a.body("p/C", "pick", "(Z)Ljava/lang/Object;", classfile.AccStatic, 1, bc)
	_, err := a.frames(b, m)
	wantError(t, err, "p/C.pick(Z)Ljava/lang/Object;", "offset 15", "branch target of offset 8", "java/lang/String and java/lang/StringBuilder have no common supertype")
	if _, err := m.Analyze(); err == nil {
		t.Error("Analyze accepted the join")
	}

	// null joins with any class exactly.
	bc[12], bc[13], bc[14] = 0, 0, 0 // nops
	b, m = a.body("p/C", "pick", "(Z)Ljava/lang/Object;", classfile.AccStatic, 1, bc)
	es, err := a.frames(b, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{11, Frame{Locals: []Type{IntType}}}, {15, Frame{Locals: []Type{IntType}, Stack: []Type{obj("java/lang/String")}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}
}

// Locals that disagree become Top; code that then reads one cannot be given a frame.
func TestJoinOfClassesInLocalsIsTop(t *testing.T) {
	a := newAsm(t)
	sh, sl := a.class("java/lang/String")
	bh, bl := a.class("java/lang/StringBuilder")
	hh, hl := a.method("java/lang/Object", "hashCode", "()I")
	bc := []byte{
		0x1a, 0x99, 0, 11, // 0 iload_0; 1 ifeq 12
		0x01, 0xc0, sh, sl, 0x4c, // 4 aconst_null; 5 checkcast; 8 astore_1
		0xa7, 0, 8, // 9 goto 17
		0x01, 0xc0, bh, bl, 0x4c, // 12 aconst_null; 13 checkcast; 16 astore_1
		0x03, 0xac, // 17 iconst_0; 18 ireturn
	}
	b, m := a.body("p/C", "f", "(Z)I", classfile.AccStatic, 2, bc)
	es, err := a.frames(b, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[1].Offset != 17 || !es[1].Frame.Equal(Frame{Locals: []Type{IntType}}) {
		t.Errorf("frames %v", es)
	}

	bc[17], bc[18] = 0x2b, 0xb6 // 17 aload_1; 18 invokevirtual hashCode; 21 ireturn
	bc = append(bc, hh, hl, 0xac)
	b, m = a.body("p/C", "f", "(Z)I", classfile.AccStatic, 2, bc)
	_, err = a.frames(b, m)
	wantError(t, err, "offset 17 (aload_1)", "load of local 1: expected object, found top")
}

// A handler over super() would have to hold both an uninitialized and an initialized this.
func TestHandlerOverSuperRefused(t *testing.T) {
	a := newAsm(t)
	ih, il := a.method("java/lang/Object", "<init>", "()V")
	bc := []byte{0x2a, 0xb7, ih, il, 0xb1, 0xbf} // aload_0; invokespecial; return; 5: athrow
	b, m := a.body("p/C", "<init>", "()V", 0, 1, bc, classfile.ExceptionEntry{StartPC: 0, EndPC: 4, HandlerPC: 5})
	_, err := a.frames(b, m)
	wantError(t, err, "p/C.<init>()V", "exception handler 0", "offset 5", "both before and after this is initialized")

	// Covering only code before super() is allowed: the frame keeps uninitializedThis.
	b, m = a.body("p/C", "<init>", "()V", 0, 1, bc, classfile.ExceptionEntry{StartPC: 0, EndPC: 1, HandlerPC: 5})
	es, err := a.frames(b, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{5, Frame{Locals: []Type{UninitThis}, Stack: []Type{obj("java/lang/Throwable")}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}
}

// Code that nothing reaches cannot be given a frame.
func TestUnreachableInsertedCodeRefused(t *testing.T) {
	a := newAsm(t)
	b, m := a.body("p/C", "f", "()V", classfile.AccStatic, 0, []byte{0xb1})
	b.Append(b.Seq().Op(code.NOP).Op(code.RETURN))
	_, err := a.frames(b, m)
	wantError(t, err, "no path reaches the code after an unconditional jump", "inserted nop after offset 0")
}

// The uninitialized type of a new on the stack at a derived frame names the new's offset in the
// encoded code, wherever inserted code moved it.
func TestUninitializedFollowsNew(t *testing.T) {
	a := newAsm(t)
	sh, sl := a.class("java/lang/Object")
	ih, il := a.method("java/lang/Object", "<init>", "()V")
	bc := []byte{0xbb, sh, sl, 0x59, 0xb7, ih, il, 0xb0} // new; dup; invokespecial; areturn
	b, m := a.body("p/C", "f", "()Ljava/lang/Object;", classfile.AccStatic, 0, bc)
	b.InsertAfter(nil, b.Seq().Op(code.NOP).Op(code.NOP)) // the new moves to offset 2
	after := b.NewLabel()
	b.InsertAfter(b.InsnAt(0), b.Seq().Op(code.ICONST_1).Jump(code.IFNE, after).Mark(after))
	nc, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	smt := classfile.FindAttribute(nc.Attributes, "StackMapTable", a.pool)
	if smt == nil {
		t.Fatal("no StackMapTable written")
	}
	es, err := Decode(smt.Data, a.pool, m.Initial(), Limits{CodeLength: len(nc.Bytecode), MaxLocals: 10, MaxStack: 10})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{9, Frame{Stack: []Type{{Kind: Uninitialized, New: 2}}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}
}

// Before replays the state at any instruction from the nearest join.
func TestBefore(t *testing.T) {
	a := newAsm(t)
	sh, sl := a.class("java/lang/String")
	bc := []byte{
		0x1a, 0x99, 0, 10, // 0 iload_0; 1 ifeq 11
		0x01, 0xc0, sh, sl, // 4 aconst_null; 5 checkcast String
		0xa7, 0, 7, // 8 goto 15
		0x01, 0, 0, 0, // 11 aconst_null; nops
		0xb0, // 15 areturn
	}
	b, m := a.body("p/C", "pick", "(Z)Ljava/lang/Object;", classfile.AccStatic, 1, bc)
	an, err := m.Analyze()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[int]string{
		0:  "locals=[int] stack=[]",
		5:  "locals=[int] stack=[null]",
		8:  "locals=[int] stack=[java/lang/String]",
		13: "locals=[int] stack=[null]",
		15: "locals=[int] stack=[java/lang/String]",
	}
	for off, want := range cases {
		f, ok := an.Before(b.InsnAt(off))
		if !ok || f.String() != want {
			t.Errorf("before offset %d: %v %v, want %s", off, f, ok, want)
		}
	}
	n := 0
	if err := an.Walk(func(in *code.Insn, before *Frame) error { n++; return nil }); err != nil || n != 10 {
		t.Errorf("walk visited %d instructions (%v), want 10", n, err)
	}
}

// Code of class files before version 50 has no frames, may use jsr and ret, and is analysed
// without frames.
func TestOldCodeWithSubroutine(t *testing.T) {
	a := newAsm(t)
	bc := []byte{
		0x03, 0x3c, // 0 iconst_0; 1 istore_1
		0xa8, 0, 4, // 2 jsr 6
		0xb1,       // 5 return
		0x4d,       // 6 astore_2
		0x84, 1, 1, // 7 iinc 1 1
		0xa9, 2, // 10 ret 2
	}
	c := &classfile.Code{MaxStack: 2, MaxLocals: 3, Bytecode: bc}
	b, err := code.Decode(c, a.pool, code.Method{Class: "p/C", Name: "f", Desc: "()V", Access: classfile.AccStatic, Major: 49})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Attach(b)
	if err != nil {
		t.Fatal(err)
	}
	if data, err := m.EncodeFrames(b); data != nil || err != nil {
		t.Errorf("version 49 got frames %v, %v", data, err)
	}
	an, err := m.Analyze()
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := an.Before(b.InsnAt(10)); !ok || f.String() != "locals=[top, int, returnAddress] stack=[]" {
		t.Errorf("before ret: %v %v", f, ok)
	}
	if f, ok := an.Before(b.InsnAt(5)); !ok || f.Local(1).Kind != Integer {
		t.Errorf("after the subroutine returns: %v %v", f, ok)
	}

	// The same code in a class that needs frames is refused: jsr cannot be given frames.
	b, _ = code.Decode(c, a.pool, code.Method{Class: "p/C", Name: "f", Desc: "()V", Access: classfile.AccStatic, Major: 50})
	m, err = Attach(b)
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.EncodeFrames(b)
	wantError(t, err, "offset 2 (jsr", "jsr in a class file that needs stack map frames")
}

// A handler's frame holds a local's type only where every covered state agrees: a store, and a
// constructor call that initializes a copy held in a local, change it midway through the
// covered code (the handler merges skip only states whose locals nothing changed).
func TestHandlerSeesLocalsChangeMidway(t *testing.T) {
	a := newAsm(t)
	oh, ol := a.class("java/lang/Object")
	ih, il := a.method("java/lang/Object", "<init>", "()V")
	bc := []byte{
		0x01, 0x4b, // 0 aconst_null; 1 astore_0: the int parameter becomes null
		0xbb, oh, ol, 0x59, 0x4c, // 2 new Object; 5 dup; 6 astore_1: uninitialized(2) in local 1
		0xb7, ih, il, // 7 invokespecial <init>: local 1 becomes Object
		0xb1, // 10 return
		0xbf, // 11 athrow
	}
	// Over the store alone, local 0 is int before it and null after.
	b, m := a.body("p/C", "f", "(I)V", classfile.AccStatic, 2, bc, classfile.ExceptionEntry{StartPC: 0, EndPC: 2, HandlerPC: 11})
	es, err := a.frames(b, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{11, Frame{Stack: []Type{obj("java/lang/Throwable")}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}

	// Over the constructor call alone, local 1 is uninitialized(2) before it and Object after.
	b, m = a.body("p/C", "f", "(I)V", classfile.AccStatic, 2, bc, classfile.ExceptionEntry{StartPC: 7, EndPC: 10, HandlerPC: 11})
	if es, err = a.frames(b, m); err != nil {
		t.Fatal(err)
	}
	want = []Entry{{11, Frame{Locals: []Type{NullType}, Stack: []Type{obj("java/lang/Throwable")}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}
}

// A handler that only a pass's code reaches (no compiler frame) is first given the state as it
// comes, then joined: the frame written is the join, with no trailing Top, however many covered
// instructions share the first state's locals. Here a long parameter's first half becomes an
// int, and the second half's Top must not stay at the end of the frame.
func TestDerivedHandlerFrameTrimmed(t *testing.T) {
	a := newAsm(t)
	bc := []byte{
		0x03, 0x3b, // 0 iconst_0; 1 istore_0: local 0 int, local 1 Top
		0x00, 0x00, // 2 nop; 3 nop: covered, the same locals before and after each
		0xb1, // 4 return
		0xbf, // 5 athrow
	}
	b, m := a.body("p/C", "f", "(J)V", classfile.AccStatic, 2, bc, classfile.ExceptionEntry{StartPC: 2, EndPC: 4, HandlerPC: 5})
	es, err := a.frames(b, m)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{5, Frame{Locals: []Type{IntType}, Stack: []Type{obj("java/lang/Throwable")}}}}
	if err := sameEntries(es, want); err != nil {
		t.Error(err)
	}
}
