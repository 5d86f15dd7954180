package passes

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// objectClass reads java/lang/Object.class from JDK 17's java.base.jmod (a 4-byte "JM" header,
// then a zip); without the JDK's jmods the test skips, or fails under CI.
func objectClass(t *testing.T) []byte {
	t.Helper()
	path := "/usr/lib/jvm/java-17-openjdk-amd64/jmods/java.base.jmod"
	b, err := os.ReadFile(path)
	if err != nil {
		testenv.Unavailable(t, "%s (openjdk-17-jdk): %v", path, err)
	}
	if len(b) < 4 || string(b[:2]) != "JM" {
		t.Fatalf("%s: not a jmod file", path)
	}
	z, err := zip.NewReader(bytes.NewReader(b[4:]), int64(len(b)-4))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, f := range z.File {
		if f.Name == "classes/java/lang/Object.class" {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			data, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			return data
		}
	}
	t.Fatalf("%s has no classes/java/lang/Object.class", path)
	return nil
}

// The hook changes Object's constructor only, by a call at its start: retransformation accepts
// only body changes, so the members, flags and every other method must stay as they were.
func TestObjectInitHookBodyOnly(t *testing.T) {
	orig := objectClass(t)
	res, err := ObjectInitHook().TransformClass(ObjectClass, orig)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) > 0 || res.Data == nil {
		t.Fatalf("Object not hooked: skipped %v", res.Skipped)
	}
	before, err := classfile.Parse(orig)
	if err != nil {
		t.Fatal(err)
	}
	after, err := classfile.Parse(res.Data)
	if err != nil {
		t.Fatal(err)
	}
	if before.AccessFlags != after.AccessFlags || len(before.Methods) != len(after.Methods) || len(before.Fields) != len(after.Fields) {
		t.Fatalf("class shape changed: flags %x/%x, methods %d/%d, fields %d/%d", before.AccessFlags, after.AccessFlags,
			len(before.Methods), len(after.Methods), len(before.Fields), len(after.Fields))
	}
	for i, m := range before.Methods {
		am := after.Methods[i]
		name, desc := m.Name(before.Pool), m.Descriptor(before.Pool)
		if !am.Is(after.Pool, name, desc) || am.AccessFlags != m.AccessFlags {
			t.Errorf("method %d: %s%s became %s%s", i, name, desc, am.Name(after.Pool), am.Descriptor(after.Pool))
			continue
		}
		bc, _, err := before.MethodCode(m)
		if err != nil {
			t.Fatal(err)
		}
		ac, _, err := after.MethodCode(am)
		if err != nil {
			t.Fatal(err)
		}
		if bc == nil {
			continue
		}
		if name != "<init>" {
			if !bytes.Equal(bc.Bytecode, ac.Bytecode) {
				t.Errorf("%s%s: code changed", name, desc)
			}
			continue
		}
		// aload_0, invokestatic #i, then the original code.
		got := ac.Bytecode
		if len(got) != len(bc.Bytecode)+4 || got[0] != 0x2a || got[1] != 0xb8 || !bytes.Equal(got[4:], bc.Bytecode) {
			t.Fatalf("<init> code % x, want aload_0, invokestatic, then % x", got, bc.Bytecode)
		}
		if _, err := after.Pool.Entry(uint16(got[2])<<8 | uint16(got[3])); err != nil {
			t.Fatalf("<init> calls constant %d: %v", uint16(got[2])<<8|uint16(got[3]), err)
		}
		if ac.MaxStack < 1 {
			t.Errorf("<init> max_stack %d, want at least 1", ac.MaxStack)
		}
	}
	if !bytes.Contains(res.Data, []byte(ObjectHookOwner)) || !bytes.Contains(res.Data, []byte(ObjectHookMethod)) {
		t.Errorf("hooked Object does not name %s.%s", ObjectHookOwner, ObjectHookMethod)
	}
}

// Routing any other class to the hook is a caller's bug: refused, never hooked.
func TestObjectInitHookOnlyObject(t *testing.T) {
	orig := objectClass(t)
	other := bytes.Replace(orig, []byte("java/lang/Object"), []byte("java/lang/Objecx"), -1)
	res, err := ObjectInitHook().TransformClass("java/lang/Objecx", other)
	if err != nil {
		t.Fatal(err)
	}
	if res.Data != nil {
		t.Fatal("a class other than java.lang.Object was hooked")
	}
	if len(res.Skipped) == 0 || !strings.Contains(res.Skipped[0].Reason(), "rewrites only java/lang/Object") {
		t.Errorf("skips %v do not say why", res.Skipped)
	}
	// The router sends everything else to the wrapped pass.
	called := ""
	p := WithObjectInitHook(transform.Func(func(name string, _ []byte) (transform.Result, error) {
		called = name
		return transform.Result{}, nil
	}))
	if _, err := p.TransformClass("com/acme/A", nil); err != nil || called != "com/acme/A" {
		t.Errorf("router: called %q, err %v", called, err)
	}
}
