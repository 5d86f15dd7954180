package classfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// realJars are the Debian jars of the corpus (issue 2): every class must survive Parse and
// Bytes unchanged, and every Code attribute ParseCode and Encode.
var realJars = []string{"guava.jar", "ecj.jar", "icu4j.jar", "bcprov.jar", "h2.jar", "byte-buddy.jar", "asm.jar",
	"commons-lang3.jar", "jackson-databind.jar", "lucene-core-4.10.4.jar", "xalan2.jar", "batik-all.jar", "fop.jar", "sunflow.jar"}

func TestRoundTripRealJars(t *testing.T) {
	for _, jar := range realJars {
		t.Run(jar, func(t *testing.T) {
			classes := jarClasses(t, jar)
			skipped := 0
			for _, e := range classes {
				if !roundTrip(t, jar+"!"+e.name, e.data) {
					skipped++
				}
			}
			if skipped > 0 {
				t.Errorf("%d of %d classes not parsed", skipped, len(classes))
			}
			t.Logf("%d classes byte-identical", len(classes))
		})
	}
}

// roundTrip parses and re-encodes data, failing the test unless the bytes are identical.
func roundTrip(t *testing.T, name string, data []byte) bool {
	t.Helper()
	c, err := Parse(data)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return false
	}
	out, err := c.Bytes()
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return false
	}
	if !bytes.Equal(out, data) {
		t.Errorf("%s: re-encoded class differs (%d bytes in, %d out)", name, len(data), len(out))
		return false
	}
	for _, m := range c.Methods {
		a := FindAttribute(m.Attributes, "Code", c.Pool)
		if a == nil {
			continue
		}
		code, err := ParseCode(a)
		if err != nil {
			t.Errorf("%s: method %s: %v", name, m.String(c.Pool), err)
			return false
		}
		back := code.Attribute(a.NameIndex)
		if !bytes.Equal(back.Data, a.Data) {
			t.Errorf("%s: method %s: Code attribute re-encodes differently", name, m.String(c.Pool))
			return false
		}
	}
	return true
}

func TestRoundTripJavac(t *testing.T) {
	srcs := readSources(t, "Features.java")
	t.Run("javac17", func(t *testing.T) {
		for _, e := range compileJava(t, javacPath(t, ""), []string{"--release", "17"}, srcs) {
			checkVersion(t, e, 61)
			roundTrip(t, e.name, e.data)
		}
	})
	t.Run("javac25", func(t *testing.T) {
		srcs := readSources(t, "Features.java", "Early.java")
		classes := compileJava(t, javacPath(t, jdk25Bin), nil, srcs)
		if len(classes) < 9 {
			t.Fatalf("only %d classes compiled", len(classes))
		}
		for _, e := range classes {
			checkVersion(t, e, 69)
			roundTrip(t, e.name, e.data)
		}
	})
}

func checkVersion(t *testing.T, e classEntry, major uint16) {
	t.Helper()
	c, err := Parse(e.data)
	if err != nil {
		t.Fatalf("%s: %v", e.name, err)
	}
	if c.Major != major {
		t.Errorf("%s: major version %d, want %d", e.name, c.Major, major)
	}
}

func readSources(t testing.TB, names ...string) map[string]string {
	m := map[string]string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		m[n] = string(b)
	}
	return m
}

func TestUnsupportedVersion(t *testing.T) {
	for _, v := range []uint16{44, 70, 0xFFFF} {
		data := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, byte(v >> 8), byte(v)}
		_, err := Parse(data)
		var ue *UnsupportedVersionError
		if !errors.As(err, &ue) || ue.Major != v || !errors.Is(err, ErrUnsupportedVersion) {
			t.Errorf("major %d: want UnsupportedVersionError, got %v", v, err)
		}
	}
}

// ReadName names a class of any version from its pool alone, and says why it cannot.
func TestReadName(t *testing.T) {
	good := minimalClass()
	if n, err := ReadName(good); err != nil || n != "A" {
		t.Errorf("ReadName = %q, %v; want A", n, err)
	}
	future := append([]byte(nil), good...)
	future[7] = 99 // a major version this engine does not parse
	if n, err := ReadName(future); err != nil || n != "A" {
		t.Errorf("version 99: ReadName = %q, %v; want A", n, err)
	}
	for want, data := range map[string][]byte{
		"bad magic":                         []byte("PK\x03\x04 a zip"),
		"remain":                            good[:20],
		"this_class: constant pool index 1": append(append([]byte(nil), good[:len(good)-14]...), 0, 0x21, 0, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0),
	} {
		if n, err := ReadName(data); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadName = %q, %v; want an error saying %q", n, err, want)
		}
	}
}

// minimalClass builds "class A extends java/lang/Object" with the given extra bytes appended
// after the class attributes count, for tests of malformed input.
func minimalClass() []byte {
	var b []byte
	b = append(b, 0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61)
	b = append(b, 0, 5) // pool count
	b = append(b, TagUtf8, 0, 1, 'A')
	b = append(b, TagClass, 0, 1)
	b = append(b, TagUtf8, 0, 16)
	b = append(b, "java/lang/Object"...)
	b = append(b, TagClass, 0, 3)
	b = append(b, 0, 0x21, 0, 2, 0, 4) // flags, this, super
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0)
	return b
}

func TestMalformed(t *testing.T) {
	good := minimalClass()
	c, err := Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "A" || c.SuperName() != "java/lang/Object" {
		t.Fatalf("names %q %q", c.Name(), c.SuperName())
	}
	mod := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"bad magic", mod(func(b []byte) []byte { b[0] = 0; return b }), "offset 0: magic: bad magic"},
		{"truncated header", good[:6], "header: need 2 bytes"},
		{"pool count zero", mod(func(b []byte) []byte { b[9] = 0; return b }), "constant_pool_count: count 0"},
		{"huge pool count", mod(func(b []byte) []byte { b[8], b[9] = 0xFF, 0xFF; return b }), "count 65535 needs at least"},
		{"unknown tag", mod(func(b []byte) []byte { b[10] = 2; return b }), "constant 1: unknown tag 2"},
		{"utf8 too long", mod(func(b []byte) []byte { b[12] = 200; return b }), "length 200 exceeds remaining"},
		{"class to non-utf8", mod(func(b []byte) []byte { b[16] = 2; return b }), "constant 2 (Class): constant pool index 2 has tag 7"},
		{"this not class", mod(func(b []byte) []byte { b[len(b)-11] = 1; return b }), "this_class: constant pool index 1 has tag 1"},
		{"super out of range", mod(func(b []byte) []byte { b[len(b)-9] = 9; return b }), "super_class: constant pool index 9 is not a valid entry"},
		{"trailing bytes", append(append([]byte(nil), good...), 0), "1 extra bytes"},
		{"truncated", good[:len(good)-1], "class attributes_count: need 2 bytes"},
		{"interfaces count too big", mod(func(b []byte) []byte { b[len(b)-7] = 100; return b }), "interfaces_count: count 100"},
		{"long at end", mod(func(b []byte) []byte {
			b[9] = 6
			return append(b[:len(b)-14], append([]byte{TagLong, 0, 0, 0, 0, 0, 0, 0, 1}, b[len(b)-14:]...)...)
		}), "constant 5: Long takes two slots but is the last entry"},
	}
	for _, c := range cases {
		_, err := Parse(c.data)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: want FormatError, got %v", c.name, err)
			continue
		}
		if !bytes.Contains([]byte(err.Error()), []byte(c.want)) {
			t.Errorf("%s: error %q does not contain %q", c.name, err, c.want)
		}
		// A failed pool lookup is the error's cause, for errors.Is and errors.As (issue 28).
		lookup := c.name == "class to non-utf8" || c.name == "this not class" || c.name == "super out of range"
		if lookup && (fe.Err == nil || errors.Unwrap(err) != fe.Err || !strings.Contains(err.Error(), fe.Err.Error())) {
			t.Errorf("%s: the pool lookup's error is not wrapped: %#v", c.name, fe)
		}
	}
}

func TestMemberAttributeErrorsNameTheMember(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	run, _ := c.Pool.AddUtf8("run")
	desc, _ := c.Pool.AddUtf8("(I)V")
	codeName, _ := c.Pool.AddUtf8("Code")
	c.Methods = append(c.Methods, &Member{NameIndex: run, DescriptorIndex: desc,
		Attributes: []*Attribute{{NameIndex: codeName, Data: make([]byte, 40)}}})
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	// Claim a longer attribute than the file holds.
	i := bytes.Index(b, []byte{0, byte(codeName), 0, 0, 0, 40})
	b[i+5] = 200
	_, err = Parse(b)
	want := "classfile: A: offset " + fmt.Sprint(i+2) + ": method 0 (run(I)V) attribute 0 (Code): length 200 exceeds remaining 42 bytes"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
}

func TestWriteErrors(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	c.Pool.Entries = append(c.Pool.Entries, Constant{})
	if _, err := c.Bytes(); err == nil {
		t.Error("stray empty pool slot accepted")
	}
	c.Pool.Entries = c.Pool.Entries[:len(c.Pool.Entries)-1]
	c.Pool.Entries[1].Bytes = make([]byte, 70000)
	_, err = c.Bytes()
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, ErrTooLarge) {
		t.Errorf("oversized Utf8: got %v", err)
	}
}

// TestWriteErrorsKeepTheirCause: a WriteError wraps its cause, also one met under it (the
// attributes of a member or of the class), so errors.Is reaches ErrTooLarge (issue 28 item 3).
func TestWriteErrorsKeepTheirCause(t *testing.T) {
	tooMany := make([]*Attribute, 1<<16)
	for i := range tooMany {
		tooMany[i] = &Attribute{}
	}
	for _, c := range []struct {
		where string
		set   func(c *Class)
	}{
		{"method 0 (run()V)", func(c *Class) {
			name, _ := c.Pool.AddUtf8("run")
			desc, _ := c.Pool.AddUtf8("()V")
			c.Methods = append(c.Methods, &Member{NameIndex: name, DescriptorIndex: desc, Attributes: tooMany})
		}},
		{"class attributes", func(c *Class) { c.Attributes = tooMany }},
	} {
		cl, err := Parse(minimalClass())
		if err != nil {
			t.Fatal(err)
		}
		c.set(cl)
		_, err = cl.Bytes()
		var we *WriteError
		if !errors.As(err, &we) || !strings.HasPrefix(we.Context, c.where) || !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: %v is not a WriteError there wrapping ErrTooLarge", c.where, err)
		}
	}
}

func TestAddedConstantsWrite(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	m, err := c.Pool.AddMethodref("java/lang/System", "nanoTime", "()J", false)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := c.Pool.AddMethodref("java/lang/System", "nanoTime", "()J", false); again != m {
		t.Errorf("Methodref not de-duplicated: %d then %d", m, again)
	}
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	owner, name, desc, err := c2.Pool.MemberRef(m)
	if err != nil || owner != "java/lang/System" || name != "nanoTime" || desc != "()J" {
		t.Errorf("after write: %s %s %s %v", owner, name, desc, err)
	}
}

// TestFormatErrorOffsets: an error of the class reader has a file offset, one of an attribute
// parsed on its own an offset within the attribute, never both in one field.
func TestFormatErrorOffsets(t *testing.T) {
	_, err := Parse([]byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0})
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset < 0 || fe.AttrOffset != -1 {
		t.Errorf("class file error %#v", err)
	}
	_, err = ParseCode(&Attribute{Data: []byte{0, 1, 0, 1, 0, 0, 0, 0}})
	if !errors.As(err, &fe) || fe.Offset != -1 || fe.AttrOffset != 4 || !strings.Contains(err.Error(), "offset 4 within the attribute") {
		t.Errorf("attribute error %#v: %v", fe, err)
	}
}
