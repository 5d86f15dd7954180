package classfile

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
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
	if seeds == 0 && testenv.InCI() {
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

// TestAllocationProportionalToInput parses inputs built to make a careless reader allocate for
// counts it cannot back with bytes: what Parse allocates must stay within a small multiple of
// the input size.
func TestAllocationProportionalToInput(t *testing.T) {
	header := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61}
	var inputs [][]byte
	// A pool count of 65535 over 30 bytes.
	inputs = append(inputs, append(append([]byte(nil), header...), append([]byte{0xFF, 0xFF}, make([]byte, 30)...)...))
	// A valid class with 2000 methods, each claiming 65535 attributes that are not there.
	b := minimalClass()
	b = b[:len(b)-6]
	b = append(b, 0x07, 0xD0)
	for i := 0; i < 2000; i++ {
		b = append(b, 0, 1, 0, 1, 0, 1, 0xFF, 0xFF)
	}
	inputs = append(inputs, b)
	// A pool of 20000 empty Utf8 constants: valid, the largest pool per input byte.
	p := append([]byte(nil), header...)
	p = append(p, byte(20001>>8), byte(20001&0xFF))
	for i := 0; i < 20000; i++ {
		p = append(p, TagUtf8, 0, 0)
	}
	inputs = append(inputs, p)
	for i, in := range inputs {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Parse(in)
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(in)+64<<10); got > limit {
			t.Errorf("input %d of %d bytes: Parse allocated %d bytes (limit %d)", i, len(in), got, limit)
		}
	}
}
