package code

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

func newPool() *classfile.Pool { return &classfile.Pool{Entries: make([]classfile.Constant, 1)} }

var testMethod = Method{Class: "T", Name: "m", Desc: "()V", Access: classfile.AccStatic, Major: 49}

// body decodes hand-written bytecode.
func body(t *testing.T, pool *classfile.Pool, bc []byte, handlers ...classfile.ExceptionEntry) *Body {
	t.Helper()
	b, err := Decode(&classfile.Code{MaxStack: 4, MaxLocals: 4, Bytecode: bc, Exceptions: handlers}, pool, testMethod)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// listing decodes c again and renders it with branch targets as instruction numbers, which is
// what must survive any re-layout. nop instructions are left out so inserted padding can be
// compared away.
func listing(t *testing.T, pool *classfile.Pool, c *classfile.Code, skipNops bool) []string {
	t.Helper()
	b, err := Decode(c, pool, testMethod)
	if err != nil {
		t.Fatalf("re-decode: %v", err)
	}
	num := map[*Label]int{}
	k := 0
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			num[n.Label] = k
		} else if !(skipNops && n.Op == NOP) {
			k++
		}
	}
	var out []string
	for n := b.First(); n != nil; n = n.Next() {
		switch {
		case n.IsLabel(), skipNops && n.Op == NOP:
			continue
		case n.Target != nil:
			out = append(out, fmt.Sprintf("%s ->%d", OpName(n.Op), num[n.Target]))
		case n.Switch != nil:
			s := fmt.Sprintf("%s low=%d keys=%v default->%d", OpName(n.Op), n.Switch.Low, n.Switch.Keys, num[n.Switch.Default])
			for _, l := range n.Switch.Targets {
				s += fmt.Sprintf(" ->%d", num[l])
			}
			out = append(out, s)
		default:
			out = append(out, n.String())
		}
	}
	for i, h := range b.Handlers {
		out = append(out, fmt.Sprintf("handler %d [%d,%d) ->%d type %d", i, num[h.Start], num[h.End], num[h.Handler], h.CatchType))
	}
	return out
}

func nops(b *Body, n int) *Seq {
	s := b.Seq()
	for i := 0; i < n; i++ {
		s.Op(NOP)
	}
	return s
}

func encode(t *testing.T, b *Body) *classfile.Code {
	t.Helper()
	c, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWidenConditional(t *testing.T) {
	pool := newPool()
	// iconst_0; ifeq L; iconst_1; pop; L: return
	b := body(t, pool, []byte{byte(ICONST_0), byte(IFEQ), 0, 5, byte(ICONST_1), byte(POP), byte(RETURN)})
	before := listing(t, pool, encode(t, body(t, pool, []byte{byte(ICONST_0), byte(IFEQ), 0, 5, byte(ICONST_1), byte(POP), byte(RETURN)})), false)
	b.InsertBefore(b.InsnAt(4), nops(b, 40000))
	c := encode(t, b)
	got := listing(t, pool, c, true)
	want := []string{"iconst_0", "ifne ->3", "goto_w ->5", "iconst_1", "pop", "return"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("widened code:\n got %v\nwant %v\n(before %v)", got, want, before)
	}
	if c.Bytecode[1] != byte(IFNE) || c.Bytecode[4] != byte(GOTO_W) {
		t.Fatalf("bytes % x", c.Bytecode[:9])
	}
	if c.MaxStack != 4 {
		t.Errorf("max_stack %d, want the decoded 4 kept as the floor", c.MaxStack)
	}
}

// opposite spells out the JVMS pairs, so that the test does not trust invert.
var opposite = map[Opcode]Opcode{
	IFEQ: IFNE, IFNE: IFEQ, IFLT: IFGE, IFGE: IFLT, IFGT: IFLE, IFLE: IFGT,
	IF_ICMPEQ: IF_ICMPNE, IF_ICMPNE: IF_ICMPEQ, IF_ICMPLT: IF_ICMPGE, IF_ICMPGE: IF_ICMPLT,
	IF_ICMPGT: IF_ICMPLE, IF_ICMPLE: IF_ICMPGT, IF_ACMPEQ: IF_ACMPNE, IF_ACMPNE: IF_ACMPEQ,
	IFNULL: IFNONNULL, IFNONNULL: IFNULL,
}

func TestWidenEveryConditional(t *testing.T) {
	pool := newPool()
	for op := IFEQ; op <= IFNONNULL; op++ {
		if !IsConditional(op) {
			continue
		}
		if invert(op) != opposite[op] {
			t.Errorf("invert(%s) = %s, want %s", OpName(op), OpName(invert(op)), OpName(opposite[op]))
		}
		pops := int(stackPop[op])
		bc := []byte{}
		for i := 0; i < pops; i++ {
			bc = append(bc, byte(ACONST_NULL))
		}
		at := len(bc)
		bc = append(bc, byte(op), 0, 4, byte(NOP), byte(RETURN))
		b := body(t, pool, bc)
		b.InsertBefore(b.InsnAt(at+3), nops(b, 33000))
		c := encode(t, b)
		if Opcode(c.Bytecode[at]) != opposite[op] || Opcode(c.Bytecode[at+3]) != GOTO_W {
			t.Errorf("%s: widened to % x", OpName(op), c.Bytecode[at:at+8])
		}
		got := listing(t, pool, c, true)
		want := fmt.Sprintf("%s ->%d", OpName(opposite[op]), pops+2)
		if got[pops] != want || got[pops+1] != fmt.Sprintf("goto_w ->%d", pops+2) {
			t.Errorf("%s: %v", OpName(op), got)
		}
	}
}

func TestWidenGotoAndJsr(t *testing.T) {
	pool := newPool()
	// 0: jsr 6; 3: goto 9; 6: astore_0; 7: ret 0; 9: return — backwards and forwards, old style.
	bc := []byte{byte(JSR), 0, 6, byte(GOTO), 0, 6, byte(ASTORE_0), byte(RET), 0, byte(RETURN)}
	b := body(t, pool, bc)
	// Before the label, so that the jsr's target moves away.
	b.InsertBefore(b.LabelAt(6).Node(), nops(b, 40000))
	c := encode(t, b)
	got := listing(t, pool, c, true)
	want := []string{"jsr_w ->2", "goto_w ->4", "astore_0", "ret 0", "return"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("got %v, want %v", got, want)
	}
	// jsr pushes the return address that astore_0 takes: depth 1, not 0.
	ms, _, err := b.ComputeMax()
	if err != nil || ms != 1 {
		t.Fatalf("max stack %d, %v; want 1", ms, err)
	}
}

// TestCascadingWidening: widening a conditional grows the code by 5 bytes, which pushes a
// goto that just fit out of range, so it must widen too.
func TestCascadingWidening(t *testing.T) {
	pool := newPool()
	// 0: goto L (to the return at the end); 3: iconst_0; 4: ifeq M; 7: nop ... M: nop; L: return
	bc := []byte{byte(GOTO), 0, 9, byte(ICONST_0), byte(IFEQ), 0, 4, byte(NOP), byte(NOP), byte(RETURN)}
	b := body(t, pool, bc)
	// The goto spans 32767 bytes after this insertion (3+4+... exactly fits), the ifeq's span
	// is over 32767 only if we put the padding inside it as well.
	pad := 32767 - 9
	b.InsertBefore(b.InsnAt(7), nops(b, pad))
	c := encode(t, b)
	if Opcode(c.Bytecode[0]) != GOTO {
		t.Fatalf("goto at exactly 32767 bytes must stay short, got % x", c.Bytecode[:5])
	}
	b = body(t, pool, bc)
	b.InsertBefore(b.InsnAt(7), nops(b, pad+1))
	c = encode(t, b)
	got := listing(t, pool, c, true)
	if !strings.HasPrefix(got[0], "goto_w") {
		t.Fatalf("goto one byte past 32767 must widen: %v", got)
	}
}

// TestCascadeExact: a backward conditional after a forward goto; each one's widening can push
// the other out of range. The expected forms come from iterating the range rules by hand.
func TestCascadeExact(t *testing.T) {
	pool := newPool()
	// 0: A: nop; 1: goto B (+7); 4: iconst_0; 5: ifeq A (-5); 8: B: return
	bc := []byte{byte(NOP), byte(GOTO), 0, 7, byte(ICONST_0), byte(IFEQ), 0xff, 0xfb, byte(RETURN)}
	cascades := 0
	for _, k1 := range []int{0, 3, 10} {
		for k2 := 32750; k2 <= 32766; k2++ {
			gw, iw := false, false
			for {
				ngw := k2+7+5*boolInt(iw) > 32767
				niw := k1+k2+5+2*boolInt(gw) > 32768
				if ngw == gw && niw == iw {
					break
				}
				gw, iw = ngw, niw
			}
			if gw && iw && (k2+7 <= 32767 || k1+k2+5 <= 32768) {
				cascades++
			}
			b := body(t, pool, bc)
			b.InsertBefore(b.InsnAt(1), nops(b, k1))
			b.InsertBefore(b.InsnAt(4), nops(b, k2))
			c := encode(t, b)
			got := listing(t, pool, c, true)
			want := []string{"goto ->3", "iconst_0", "ifeq ->0", "return"}
			if gw {
				want[0] = "goto_w ->3"
			}
			if iw {
				want = []string{want[0], "iconst_0", "ifne ->4", "goto_w ->0", "return"}
				if !gw {
					want[0] = "goto ->4"
				} else {
					want[0] = "goto_w ->4"
				}
			}
			if strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("k1 %d k2 %d: got %v, want %v", k1, k2, got, want)
			}
		}
	}
	if cascades == 0 {
		t.Fatal("no case exercised a cascade")
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkTargets re-decodes the code: every branch must land on an instruction (Decode checks).
func checkTargets(t *testing.T, pool *classfile.Pool, c *classfile.Code) {
	t.Helper()
	if _, err := Decode(c, pool, testMethod); err != nil {
		t.Fatal(err)
	}
}

// TestSwitchPadding moves a tableswitch and a lookupswitch through all four alignments.
func TestSwitchPadding(t *testing.T) {
	pool := newPool()
	// 0: iconst_1; 1: tableswitch pad(2) default=+27 low=0 high=1 [+25, +26]; 24: ...
	ts := []byte{byte(ICONST_1), byte(TABLESWITCH), 0, 0}
	ts = append(ts, be32(27)...)
	ts = append(ts, be32(0)...)
	ts = append(ts, be32(1)...)
	ts = append(ts, be32(23)...)
	ts = append(ts, be32(25)...)
	// 24: iconst_2; 25: iconst_3 ... : offsets relative to 1: 24, 26, 28
	ts = append(ts, byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(RETURN))
	// Targets: default 1+27=28 → RETURN at 28? layout: 24 nop,25 nop,26 nop,27 nop,28 nop,29 return.
	ls := []byte{byte(ICONST_1), byte(LOOKUPSWITCH), 0, 0}
	ls = append(ls, be32(27)...)
	ls = append(ls, be32(1)...)
	ls = append(ls, be32(7)...)
	ls = append(ls, be32(23)...)
	ls = append(ls, byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(NOP), byte(RETURN))
	for name, bc := range map[string][]byte{"tableswitch": ts, "lookupswitch": ls} {
		want := listing(t, pool, &classfile.Code{Bytecode: bc}, true)
		for pad := 0; pad < 4; pad++ {
			b := body(t, pool, bc)
			b.InsertBefore(b.First(), nops(b, pad))
			c := encode(t, b)
			swAt := pad + 1
			wantPad := (4 - (swAt+1)%4) % 4
			for i := 0; i < wantPad; i++ {
				if c.Bytecode[swAt+1+i] != 0 {
					t.Errorf("%s pad %d: padding byte %d is %d", name, pad, i, c.Bytecode[swAt+1+i])
				}
			}
			if (swAt+1+wantPad)%4 != 0 {
				t.Fatalf("bad test arithmetic")
			}
			if len(c.Bytecode) != len(bc)+pad+wantPad-2 {
				t.Errorf("%s pad %d: length %d, want %d", name, pad, len(c.Bytecode), len(bc)+pad+wantPad-2)
			}
			if got := listing(t, pool, c, true); strings.Join(got, "; ") != strings.Join(want, "; ") {
				t.Errorf("%s pad %d:\n got %v\nwant %v", name, pad, got, want)
			}
		}
	}
}

// TestEmptyLookupswitch: javacc emits lookupswitch with no pairs, just a default.
func TestEmptyLookupswitch(t *testing.T) {
	pool := newPool()
	bc := append([]byte{byte(ICONST_0), byte(LOOKUPSWITCH), 0, 0}, append(be32(11), be32(0)...)...)
	bc = append(bc, byte(RETURN))
	b := body(t, pool, bc)
	b.InsertBefore(b.First(), nops(b, 1))
	c := encode(t, b)
	if got := listing(t, pool, c, true); strings.Join(got, "; ") != "iconst_0; lookupswitch low=0 keys=[] default->2; return" {
		t.Fatalf("got %v", got)
	}
}

func be32(v int32) []byte { return []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

func TestTooLarge(t *testing.T) {
	pool := newPool()
	b := body(t, pool, []byte{byte(RETURN)})
	b.InsertBefore(b.First(), nops(b, 65535))
	_, err := b.Encode()
	var tl *TooLargeError
	if !errors.Is(err, ErrCodeTooLarge) || !errors.As(err, &tl) || tl.Size != 65536 {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "T.m()V") {
		t.Errorf("error does not name the method: %v", err)
	}
	b = body(t, pool, []byte{byte(RETURN)})
	b.InsertBefore(b.First(), nops(b, 65534))
	if _, err := b.Encode(); err != nil {
		t.Fatalf("65535 bytes must fit: %v", err)
	}
}

func TestLdcAndWideForms(t *testing.T) {
	pool := newPool()
	for i := 0; i < 300; i++ {
		if _, err := pool.AddInteger(int32(100000 + i)); err != nil {
			t.Fatal(err)
		}
	}
	b := body(t, pool, []byte{byte(RETURN)})
	s := b.Seq().Int(100299).Op(POP).Int(-1).Int(100).Int(1000).Op(POP2).Op(POP).
		Load(ILOAD, 2).Store(ISTORE, 300).Load(LLOAD, 5).Store(LSTORE, 0).Iinc(1, 1000).Iinc(400, 1)
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	b.InsertBefore(b.First(), s)
	c := encode(t, b)
	got := fmt.Sprintf("% x", c.Bytecode)
	idx := 300 // 100299 sits at index 300 (1 + 299)
	want := fmt.Sprintf("% x", []byte{
		byte(LDC_W), byte(idx >> 8), byte(idx), byte(POP), byte(ICONST_M1), byte(BIPUSH), 100, byte(SIPUSH), 0x03, 0xe8,
		byte(POP2), byte(POP), byte(ILOAD_2), byte(WIDE), byte(ISTORE), 0x01, 0x2c, byte(LLOAD), 5, byte(LSTORE_0),
		byte(WIDE), byte(IINC), 0, 1, 0x03, 0xe8, byte(WIDE), byte(IINC), 0x01, 0x90, 0, 1, byte(RETURN)})
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if c.MaxLocals != 401 {
		t.Errorf("max_locals %d, want 401", c.MaxLocals)
	}
	if c.MaxStack != 4 {
		t.Errorf("max_stack %d, want 4 (3 ints pushed, floor 4)", c.MaxStack)
	}
	if ms, _, _ := b.ComputeMax(); ms != 3 {
		t.Errorf("computed max_stack %d, want 3", ms)
	}
}

func TestHandlerAndNewLocal(t *testing.T) {
	pool := newPool()
	// static int m(): iconst_1; ireturn, with handler appended covering it.
	m := Method{Class: "T", Name: "m", Desc: "(JI)I", Access: classfile.AccStatic, Major: 49}
	b, err := Decode(&classfile.Code{MaxStack: 1, MaxLocals: 3, Bytecode: []byte{byte(ICONST_1), byte(IRETURN)}}, pool, m)
	if err != nil {
		t.Fatal(err)
	}
	v := b.NewLocal(2)
	w := b.NewLocal(1)
	if v != 3 || w != 5 {
		t.Fatalf("new locals %d, %d; want 3, 5", v, w)
	}
	start, end, h := b.NewLabel(), b.NewLabel(), b.NewLabel()
	b.InsertBefore(b.First(), b.Seq().Mark(start).Op(LCONST_0).Store(LSTORE, v))
	b.InsertAfter(b.Last(), b.Seq().Mark(end).Mark(h).Store(ASTORE, w).Load(ALOAD, w).Op(ATHROW))
	b.AddHandler(start, end, h, 0)
	c := encode(t, b)
	if c.MaxLocals != 6 || c.MaxStack != 2 {
		t.Errorf("max_stack %d max_locals %d; want 2 and 6", c.MaxStack, c.MaxLocals)
	}
	if len(c.Exceptions) != 1 || c.Exceptions[0] != (classfile.ExceptionEntry{StartPC: 0, EndPC: 4, HandlerPC: 4}) {
		t.Errorf("exceptions %+v", c.Exceptions)
	}
}

func TestRefusals(t *testing.T) {
	pool := newPool()
	unknown, _ := pool.AddUtf8("com.example.Offsets")
	smt, _ := pool.AddUtf8("StackMapTable")
	for _, tc := range []struct {
		name string
		attr classfile.Attribute
	}{
		{"unknown attribute", classfile.Attribute{NameIndex: unknown, Data: []byte{0, 1}}},
		{"stack map without encoder", classfile.Attribute{NameIndex: smt, Data: []byte{0, 0}}},
	} {
		c := &classfile.Code{MaxStack: 1, MaxLocals: 1, Bytecode: []byte{byte(NOP), byte(RETURN)}, Attributes: []*classfile.Attribute{&tc.attr}}
		b, err := Decode(c, pool, testMethod)
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.Encode()
		if err != nil || !bytes.Equal(out.Attributes[0].Data, tc.attr.Data) {
			t.Fatalf("%s: unedited body must copy it: %v", tc.name, err)
		}
		b.InsertBefore(b.First(), nops(b, 1))
		if _, err := b.Encode(); !errors.Is(err, ErrUnmappableAttribute) {
			t.Errorf("%s: got %v, want ErrUnmappableAttribute", tc.name, err)
		}
	}
}

type fixedFrames struct{ seen []int }

func (f *fixedFrames) EncodeFrames(b *Body) ([]byte, error) {
	for n := b.First(); n != nil; n = n.Next() {
		if n.IsLabel() {
			f.seen = append(f.seen, n.Label.Pos())
		}
	}
	return []byte{0, 0}, nil
}

func TestFrameEncoderHook(t *testing.T) {
	pool := newPool()
	smt, _ := pool.AddUtf8("StackMapTable")
	// iconst_0; ifeq 6; nop; nop; 6: return with one frame (same_frame at 6).
	c := &classfile.Code{MaxStack: 1, MaxLocals: 1, Bytecode: []byte{byte(ICONST_0), byte(IFEQ), 0, 4, byte(NOP), byte(RETURN)},
		Attributes: []*classfile.Attribute{{NameIndex: smt, Data: []byte{0, 1, 5}}}}
	b, err := Decode(c, pool, testMethod)
	if err != nil {
		t.Fatal(err)
	}
	if l := b.LabelAt(5); l == nil || l.Node().Next() != b.InsnAt(5) {
		t.Fatalf("no label at the frame offset 5")
	}
	b.InsertBefore(b.InsnAt(4), nops(b, 40000))
	ff := &fixedFrames{}
	b.Frames = ff
	out, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	// The frame label moved to 1 (iconst) + 8 (ifne+goto_w) + 40000 + 1; the widening label
	// sits right after the goto_w.
	if fmt.Sprint(ff.seen) != "[9 40010]" {
		t.Errorf("labels seen by the frame encoder at %v", ff.seen)
	}
	if b.LabelAt(5).Pos() != 40010 || b.InsnAt(5).Pos() != 40010 {
		t.Errorf("label/insn at original 5 now at %d/%d", b.LabelAt(5).Pos(), b.InsnAt(5).Pos())
	}
	if !bytes.Equal(out.Attributes[0].Data, []byte{0, 0}) {
		t.Errorf("frame encoder output not used")
	}
}

func TestTablesRemapped(t *testing.T) {
	pool := newPool()
	lnt, _ := pool.AddUtf8("LineNumberTable")
	lvt, _ := pool.AddUtf8("LocalVariableTable")
	vta, _ := pool.AddUtf8("RuntimeVisibleTypeAnnotations")
	// 0: aconst_null; 1: astore_0; 2: aload_0; 3: instanceof #1... use checkcast-free code:
	// 0 aconst_null 1 astore_0 2 aload_0 3 pop 4 return
	bc := []byte{byte(ACONST_NULL), byte(ASTORE_0), byte(ALOAD_0), byte(POP), byte(RETURN)}
	lines := []byte{0, 2, 0, 0, 0, 10, 0, 2, 0, 11}
	vars := []byte{0, 1, 0, 2, 0, 3, 0, 5, 0, 6, 0, 0}
	// one localvar annotation (0x40) on slot 0 over [2,5), one offset_target (0x43) at 2, with
	// empty type_path, type_index 7, no pairs.
	annos := []byte{0, 2,
		0x40, 0, 1, 0, 2, 0, 3, 0, 0, 0, 0, 7, 0, 0,
		0x43, 0, 2, 0, 0, 7, 0, 0}
	c := &classfile.Code{MaxStack: 1, MaxLocals: 1, Bytecode: bc, Attributes: []*classfile.Attribute{
		{NameIndex: lnt, Data: lines}, {NameIndex: lvt, Data: vars}, {NameIndex: vta, Data: annos}}}
	b, err := Decode(c, pool, testMethod)
	if err != nil {
		t.Fatal(err)
	}
	out := encode(t, b)
	for i, a := range out.Attributes {
		if !bytes.Equal(a.Data, c.Attributes[i].Data) {
			t.Fatalf("unedited attribute %d: % x, want % x", i, a.Data, c.Attributes[i].Data)
		}
	}
	b.InsertBefore(b.InsnAt(2), nops(b, 3)) // after the label at 2: line 11 and the ranges include it
	out = encode(t, b)
	wantLines := []byte{0, 2, 0, 0, 0, 10, 0, 2, 0, 11}
	wantVars := []byte{0, 1, 0, 2, 0, 6, 0, 5, 0, 6, 0, 0}
	wantAnnos := []byte{0, 2,
		0x40, 0, 1, 0, 2, 0, 6, 0, 0, 0, 0, 7, 0, 0,
		0x43, 0, 5, 0, 0, 7, 0, 0}
	// offset_target names the instruction (aload_0, now at 5), not the position before the
	// inserted code.
	for i, want := range [][]byte{wantLines, wantVars, wantAnnos} {
		if !bytes.Equal(out.Attributes[i].Data, want) {
			t.Errorf("attribute %d: % x, want % x", i, out.Attributes[i].Data, want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	pool := newPool()
	for _, tc := range []struct {
		bc   []byte
		want string
	}{
		{[]byte{byte(GOTO), 0, 1}, "inside an instruction"},
		{[]byte{byte(GOTO), 0x80, 0}, "outside the code"},
		{[]byte{0xcb}, "invalid opcode"},
		{[]byte{byte(SIPUSH), 0}, "truncated"},
		{[]byte{byte(WIDE), byte(NOP)}, "wide applied to nop"},
		{[]byte{byte(TABLESWITCH), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1}, "low 2 > high 1"},
	} {
		_, err := Decode(&classfile.Code{Bytecode: tc.bc}, pool, testMethod)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "at bytecode offset 0 of method T.m()V") {
			t.Errorf("% x: got %v, want %q naming method and offset", tc.bc, err, tc.want)
		}
	}
}

func TestRemoveReplace(t *testing.T) {
	pool := newPool()
	// 0: iconst_0; 1: nop; 2: ifeq 6; 5: nop; 6: return
	bc := []byte{byte(ICONST_0), byte(NOP), byte(IFEQ), 0, 4, byte(NOP), byte(RETURN)}
	b := body(t, pool, bc)
	if err := b.Replace(b.InsnAt(0), b.Seq().Int(300)); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(b.InsnAt(1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(b.InsnAt(1)); err == nil {
		t.Error("removing twice must fail")
	}
	if err := b.Remove(b.LabelAt(6).Node()); err == nil {
		t.Error("removing a label node must fail")
	}
	c := encode(t, b)
	want := []byte{byte(SIPUSH), 1, 44, byte(IFEQ), 0, 4, byte(NOP), byte(RETURN)}
	if !bytes.Equal(c.Bytecode, want) {
		t.Fatalf("got % x, want % x", c.Bytecode, want)
	}
	if !b.InsnAt(1).Removed() || b.InsnAt(2).Pos() != 3 || b.LabelAt(6).Pos() != 7 {
		t.Errorf("positions: ifeq at %d, label at %d", b.InsnAt(2).Pos(), b.LabelAt(6).Pos())
	}
	// Everything removed: nothing to encode.
	e := body(t, pool, []byte{byte(RETURN)})
	if err := e.Remove(e.First()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Encode(); err == nil {
		t.Error("empty code must not encode")
	}
}

func TestStackDepthErrors(t *testing.T) {
	pool := newPool()
	b := body(t, pool, []byte{byte(RETURN)})
	b.InsertBefore(b.First(), b.Seq().Op(POP))
	if _, err := b.Encode(); err == nil || !strings.Contains(err.Error(), "pops 1 values from a stack of depth 0") {
		t.Errorf("underflow: %v", err)
	}
	// Two paths reach the return with different depths.
	// 0: iconst_0; 1: ifeq 5; 4: iconst_1; 5: return
	b = body(t, pool, []byte{byte(ICONST_0), byte(IFEQ), 0, 4, byte(ICONST_1), byte(RETURN)})
	b.MarkModified()
	if _, err := b.Encode(); err == nil || !strings.Contains(err.Error(), "depth") {
		t.Errorf("inconsistent depth: %v", err)
	}
}

// TestPoolOverflow: a builder that cannot add its constant reports classfile.ErrPoolOverflow,
// which the pass turns into "keep this method unmodified".
func TestPoolOverflow(t *testing.T) {
	pool := newPool()
	for pool.Len() < 65534 {
		pool.Entries = append(pool.Entries, classfile.Constant{Tag: classfile.TagInteger, Bytes: []byte{0, 0, byte(pool.Len() >> 8), byte(pool.Len())}})
	}
	b := body(t, pool, []byte{byte(RETURN)})
	s := b.Seq().InvokeStatic("heapledger/Probe", "enter", "()I").Op(POP)
	if !errors.Is(s.Err(), classfile.ErrPoolOverflow) {
		t.Fatalf("got %v, want ErrPoolOverflow", s.Err())
	}
	if !strings.Contains(s.Err().Error(), "T.m()V") {
		t.Errorf("error does not name the method: %v", s.Err())
	}
}

func TestLongConst(t *testing.T) {
	pool := newPool()
	b := body(t, pool, []byte{byte(RETURN)})
	b.InsertBefore(b.First(), b.Seq().Long(1).Op(POP2).Long(1<<40).Op(POP2))
	c := encode(t, b)
	idx, _ := pool.AddLong(1 << 40)
	want := []byte{byte(LCONST_1), byte(POP2), byte(LDC2_W), byte(idx >> 8), byte(idx), byte(POP2), byte(RETURN)}
	if !bytes.Equal(c.Bytecode, want) {
		t.Fatalf("got % x, want % x", c.Bytecode, want)
	}
	if ms, _, _ := b.ComputeMax(); ms != 2 {
		t.Errorf("max_stack %d, want 2", ms)
	}
}

func TestNumber(t *testing.T) {
	pool := newPool()
	b := body(t, pool, []byte{byte(ICONST_0), byte(IFEQ), 0, 4, byte(NOP), byte(RETURN)})
	b.InsertBefore(b.InsnAt(4), nops(b, 2))
	n := b.Number()
	k := 0
	for x := b.First(); x != nil; x = x.Next() {
		if x.Num() != k {
			t.Fatalf("node %s numbered %d, want %d", x, x.Num(), k)
		}
		k++
	}
	// iconst_0, ifeq, two inserted nops, the original nop, the label at 5, return
	if n != k || n != 7 {
		t.Fatalf("Number returned %d for %d nodes, want 7", n, k)
	}
}

// TestInsertRefusesFailedSeq: a sequence whose building failed is never spliced in, part of it
// or whole, and Encode fails with its error even when the insert's result was not checked.
func TestInsertRefusesFailedSeq(t *testing.T) {
	for name, insert := range map[string]func(b *Body, s *Seq) error{
		"InsertBefore": func(b *Body, s *Seq) error { return b.InsertBefore(b.First(), s) },
		"InsertAfter":  func(b *Body, s *Seq) error { return b.InsertAfter(nil, s) },
		"Append":       func(b *Body, s *Seq) error { return b.Append(s) },
	} {
		b := body(t, newPool(), []byte{byte(RETURN)})
		s := b.Seq().Op(NOP).Op(ILOAD) // iload needs an operand: the sequence fails
		if s.Err() == nil {
			t.Fatal("iload without operand built")
		}
		if err := insert(b, s); err == nil || !errors.Is(err, s.Err()) && err != s.Err() {
			t.Errorf("%s: returned %v, want the sequence's error", name, err)
		}
		if n := b.First(); n == nil || n.Op != RETURN || n.Next() != nil {
			t.Errorf("%s: the failed sequence was spliced in", name)
		}
		if _, err := b.Encode(); err == nil {
			t.Errorf("%s: Encode succeeded after a refused insert", name)
		}
	}
}
