package classfile

import (
	"bytes"
	"errors"
	"os"
	"testing"
)

// FuzzParse checks that any input either fails with a typed error or parses into a class that
// re-encodes to the same bytes, and that parsing the code and attributes of a parsed class never
// panics.
func FuzzParse(f *testing.F) {
	f.Add(minimalClass())
	seeds := 0
	if _, err := os.Stat("/usr/share/java/asm.jar"); err == nil {
		for i, e := range jarClasses(f, "asm.jar") {
			if i%4 != 0 {
				continue
			}
			f.Add(e.data)
			f.Add(e.data[:len(e.data)/2])
			mut := append([]byte(nil), e.data...)
			mut[len(mut)/3] ^= 0xFF
			f.Add(mut)
			seeds++
		}
	}
	if seeds == 0 && os.Getenv("CI") == "true" {
		f.Fatal("no real class files to seed the fuzzer with: /usr/share/java/asm.jar missing")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			var fe *FormatError
			var ue *UnsupportedVersionError
			if !errors.As(err, &fe) && !errors.As(err, &ue) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		out, err := c.Bytes()
		if err != nil {
			t.Fatalf("parsed class does not encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			t.Fatalf("re-encoded class differs: %d bytes in, %d out", len(data), len(out))
		}
		_ = c.Name() + c.SuperName() + c.SourceFile() + c.Signature()
		for _, m := range append(append([]*Member(nil), c.Fields...), c.Methods...) {
			_ = m.String(c.Pool)
			code, a, err := c.MethodCode(m)
			if err != nil || code == nil {
				continue
			}
			back, err := code.Encode(a.NameIndex)
			if err != nil || !bytes.Equal(back.Data, a.Data) {
				t.Fatalf("method %s: Code does not re-encode: %v", m.String(c.Pool), err)
			}
		}
		for _, a := range c.Attributes {
			ParseInnerClasses(a)
			ParseRecord(a)
			ParseBootstrapMethods(a)
			ParseIndexList(a)
			ParseIndex(a)
			ParseEnclosingMethod(a)
		}
	})
}

// FuzzMethodDescriptor checks that descriptor parsing never panics and that whatever it accepts
// re-assembles to the same text with consistent slot counts.
func FuzzMethodDescriptor(f *testing.F) {
	for _, s := range []string{"()V", "(IJ[Ljava/lang/String;)D", "([[D)Ljava/lang/Object;", "(L;)V", "(", "([)V"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, desc string) {
		md, err := ParseMethodDescriptor(desc)
		if err != nil {
			var de *DescriptorError
			if !errors.As(err, &de) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		if md.String() != desc {
			t.Fatalf("%q re-assembles as %q", desc, md.String())
		}
		slots := 0
		for _, a := range md.Args {
			if ValidateFieldDescriptor(a) != nil {
				t.Fatalf("%q: argument %q is not a field descriptor", desc, a)
			}
			slots += TypeSlots(a)
		}
		if slots != md.ArgSlots() || slots < len(md.Args) || slots > 2*len(md.Args) {
			t.Fatalf("%q: %d slots for %d arguments", desc, md.ArgSlots(), len(md.Args))
		}
	})
}
