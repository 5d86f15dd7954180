package javap

import (
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// class builds a class file T extends java/lang/Object with one static method run()V whose code
// is `newarray int` on a constant and return.
func class(t *testing.T) []byte {
	t.Helper()
	p := &classfile.Pool{Entries: make([]classfile.Constant, 1)}
	must := func(i uint16, err error) uint16 {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	this, super := must(p.AddClass("T")), must(p.AddClass("java/lang/Object"))
	name, desc, codeName := must(p.AddUtf8("run")), must(p.AddUtf8("()V")), must(p.AddUtf8("Code"))
	code := &classfile.Code{MaxStack: 1, MaxLocals: 0, Bytecode: []byte{0x04, 0xbc, 10, 0x57, 0xb1}} // iconst_1; newarray int; pop; return
	attr, err := code.Encode(codeName)
	if err != nil {
		t.Fatal(err)
	}
	c := &classfile.Class{Major: 52, Pool: p, AccessFlags: 0x21, ThisClass: this, SuperClass: super,
		Methods: []*classfile.Member{{AccessFlags: classfile.AccStatic, NameIndex: name, DescriptorIndex: desc, Attributes: []*classfile.Attribute{attr}}}}
	data, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestPrint(t *testing.T) {
	var sb strings.Builder
	if err := Print(&sb, "T.class", class(t), Options{Pool: true, Code: true}); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"class T", "version: 52.0 (Java 8)", "ACC_PUBLIC ACC_SUPER", "// java/lang/Object", "newarray 10  // int", "run()V"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	sb.Reset()
	if err := Print(&sb, "T.class", class(t), Options{Method: "nope"}); err == nil || !strings.Contains(err.Error(), `no method named "nope"`) {
		t.Errorf("a missing method gave %v", err)
	}
	if err := Print(&sb, "bad.class", []byte("not a class"), Options{}); err == nil || !strings.HasPrefix(err.Error(), "bad.class: ") {
		t.Errorf("a bad class gave %v", err)
	}
}

func TestRelease(t *testing.T) {
	for major, want := range map[uint16]string{45: "Java 1.1", 52: "Java 8", 69: "Java 25", 30: "unknown"} {
		if got := Release(major); got != want {
			t.Errorf("Release(%d) = %q, want %q", major, got, want)
		}
	}
}
