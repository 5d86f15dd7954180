package classfile

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

func TestLookupsAndEncoders(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pool
	name, _ := p.AddUtf8("count")
	desc, _ := p.AddUtf8("I")
	cv, _ := p.AddUtf8("ConstantValue")
	seven, _ := p.AddInteger(7)
	c.Fields = append(c.Fields, &Member{AccessFlags: AccStatic | AccFinal, NameIndex: name, DescriptorIndex: desc,
		Attributes: []*Attribute{EncodeIndex(cv, seven)}})
	iface, _ := p.AddClass("java/lang/Runnable")
	c.Interfaces = append(c.Interfaces, iface)
	ex, _ := p.AddUtf8("Exceptions")
	ioe, _ := p.AddClass("java/io/IOException")
	run, _ := p.AddUtf8("run")
	v, _ := p.AddUtf8("()V")
	exAttr, err := EncodeIndexList(ex, []uint16{ioe})
	if err != nil {
		t.Fatal(err)
	}
	c.Methods = append(c.Methods, &Member{AccessFlags: AccPublic | AccAbstract, NameIndex: run, DescriptorIndex: v, Attributes: []*Attribute{exAttr}})
	s, _ := p.AddString("héllo")
	fr, _ := p.AddFieldref("A", "count", "I")

	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if got := c2.InterfaceNames(); !reflect.DeepEqual(got, []string{"java/lang/Runnable"}) {
		t.Errorf("interfaces %v", got)
	}
	f := c2.Field("count", "I")
	if f == nil || c2.Field("count", "J") != nil || !f.Is(c2.Pool, "count", "I") || f.String(c2.Pool) != "count:I" {
		t.Fatalf("field lookup: %v", f)
	}
	i, err := ParseIndex(FindAttribute(f.Attributes, "ConstantValue", c2.Pool))
	if e, _ := c2.Pool.Entry(i); err != nil || e.Tag != TagInteger || !bytes.Equal(e.Bytes, []byte{0, 0, 0, 7}) {
		t.Errorf("ConstantValue %d %v", i, err)
	}
	m := c2.Method("run", "()V")
	if m == nil || !HasAttribute(m.Attributes, "Exceptions", c2.Pool) || HasAttribute(m.Attributes, "Code", c2.Pool) {
		t.Fatal("method lookup")
	}
	if code, a, err := c2.MethodCode(m); code != nil || a != nil || err != nil {
		t.Errorf("abstract method has code: %v %v %v", code, a, err)
	}
	if str, _ := c2.Pool.Entry(s); str.Tag != TagString {
		t.Errorf("string constant tag %d", str.Tag)
	}
	if owner, n, d, err := c2.Pool.MemberRef(fr); err != nil || owner != "A" || n != "count" || d != "I" {
		t.Errorf("fieldref %s %s %s %v", owner, n, d, err)
	}
	if c2.Pool.Len() != c.Pool.Len() {
		t.Errorf("pool length %d, want %d", c2.Pool.Len(), c.Pool.Len())
	}
}

// TestPoolOverflow fills a pool to its limit: the next addition fails with ErrPoolOverflow,
// which passes turn into "method left unmodified", and the full pool still writes and reads.
func TestPoolOverflow(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; c.Pool.Len() < 65535; i++ {
		if _, err := c.Pool.AddInteger(int32(i)); err != nil {
			t.Fatalf("at %d entries: %v", c.Pool.Len(), err)
		}
	}
	if _, err := c.Pool.AddUtf8("one more"); !errors.Is(err, ErrPoolOverflow) {
		t.Fatalf("want ErrPoolOverflow, got %v", err)
	}
	if _, err := c.Pool.AddInteger(0); err != nil {
		t.Errorf("an existing constant must still be found: %v", err)
	}
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(b); err != nil {
		t.Fatal(err)
	}
	// A Long needs two slots, so it must not fit in the last one.
	c.Pool.Entries = c.Pool.Entries[:65534]
	c.Pool.index = nil
	if _, err := c.Pool.AddLong(1 << 40); !errors.Is(err, ErrPoolOverflow) {
		t.Errorf("Long in the last slot: %v", err)
	}
}

// TestJasminOldVersion reads an old class file (jasmin-sable writes 46.0) with jsr/ret.
func TestJasminOldVersion(t *testing.T) {
	jasmin, err := exec.LookPath("jasmin")
	if err != nil {
		testenv.Unavailable(t, "jasmin not found on PATH (Debian package jasmin-sable)")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "Old.j")
	err = os.WriteFile(src, []byte(`.class public Old
.super java/lang/Object

.method public static f(I)I
  .limit stack 2
  .limit locals 3
  jsr Sub
  iload_0
  ireturn
Sub:
  astore_2
  iinc 0 1
  ret 2
.end method
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(jasmin, "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("jasmin: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "Old.class"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if c.Major >= 50 {
		t.Errorf("version %d.%d, want one before StackMapTable (< 50)", c.Major, c.Minor)
	}
	if !roundTrip(t, "Old.class", data) {
		return
	}
	code, _, err := c.MethodCode(c.Method("f", "(I)I"))
	if err != nil || code == nil {
		t.Fatalf("code: %v", err)
	}
	if code.MaxStack != 2 || code.MaxLocals != 3 || code.Bytecode[0] != 0xa8 /* jsr */ {
		t.Errorf("code: stack %d locals %d first opcode %s", code.MaxStack, code.MaxLocals, strconv.Itoa(int(code.Bytecode[0])))
	}
}
