package classfile

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseMethodDescriptor(t *testing.T) {
	cases := []struct {
		desc  string
		args  []string
		ret   string
		slots int
		rets  int
	}{
		{"()V", nil, "V", 0, 0},
		{"(IJ)D", []string{"I", "J"}, "D", 3, 2},
		{"([Ljava/lang/String;)V", []string{"[Ljava/lang/String;"}, "V", 1, 0},
		{"(Ljava/lang/Object;[[DZBCSF)Ljava/util/List;", []string{"Ljava/lang/Object;", "[[D", "Z", "B", "C", "S", "F"}, "Ljava/util/List;", 7, 1},
		{"(DD)[J", []string{"D", "D"}, "[J", 4, 1},
	}
	for _, c := range cases {
		md, err := ParseMethodDescriptor(c.desc)
		if err != nil {
			t.Fatalf("%s: %v", c.desc, err)
		}
		if !reflect.DeepEqual(md.Args, c.args) || md.Return != c.ret {
			t.Errorf("%s: got %q %q", c.desc, md.Args, md.Return)
		}
		if md.ArgSlots() != c.slots || md.ReturnSlots() != c.rets {
			t.Errorf("%s: slots %d/%d, want %d/%d", c.desc, md.ArgSlots(), md.ReturnSlots(), c.slots, c.rets)
		}
		if md.String() != c.desc {
			t.Errorf("%s: String() = %s", c.desc, md.String())
		}
		if n, _ := MethodArgSlots(c.desc); n != c.slots {
			t.Errorf("%s: MethodArgSlots = %d", c.desc, n)
		}
	}
}

func TestBadMethodDescriptors(t *testing.T) {
	for _, d := range []string{"", "V", "(", "(I", "()", "()VV", "(V)V", "(L;)V", "(Ljava/lang/String)V",
		"()Ljava/lang/String", "(Q)V", "([)V", "()II", "(Ljava.lang.String;)V", "(" + strings.Repeat("[", 256) + "I)V"} {
		_, err := ParseMethodDescriptor(d)
		var de *DescriptorError
		if !errors.As(err, &de) {
			t.Errorf("%q: want DescriptorError, got %v", d, err)
		}
	}
	if _, err := ParseMethodDescriptor("(" + strings.Repeat("[", 255) + "I)V"); err != nil {
		t.Errorf("255 dimensions must be allowed: %v", err)
	}
}

func TestFieldDescriptors(t *testing.T) {
	for _, d := range []string{"I", "[I", "Ljava/lang/String;", "[[Ljava/lang/Object;"} {
		if err := ValidateFieldDescriptor(d); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
	for _, d := range []string{"", "V", "II", "[", "L", "Lx", "()V"} {
		if ValidateFieldDescriptor(d) == nil {
			t.Errorf("%q accepted", d)
		}
	}
	if n, ok := ClassOfDescriptor("Ljava/lang/String;"); !ok || n != "java/lang/String" {
		t.Errorf("ClassOfDescriptor: %q %v", n, ok)
	}
	if n, ok := ClassOfDescriptor("[I"); !ok || n != "[I" {
		t.Errorf("ClassOfDescriptor array: %q %v", n, ok)
	}
	if _, ok := ClassOfDescriptor("I"); ok {
		t.Error("ClassOfDescriptor(I) ok")
	}
	if DescriptorOfClass("a/B") != "La/B;" || DescriptorOfClass("[La/B;") != "[La/B;" {
		t.Error("DescriptorOfClass")
	}
	if d, e := ArrayDims("[[J"); d != 2 || e != "J" {
		t.Errorf("ArrayDims: %d %s", d, e)
	}
	if !IsReference("[I") || IsReference("I") {
		t.Error("IsReference")
	}
}

func TestJavaNames(t *testing.T) {
	for in, want := range map[string]string{
		"[[I": "int[][]", "Ljava/lang/String;": "java.lang.String", "[Ljava/util/Map$Entry;": "java.util.Map$Entry[]",
		"java/lang/Object": "java.lang.Object", "Z": "boolean", "[J": "long[]",
	} {
		if got := JavaTypeName(in); got != want {
			t.Errorf("JavaTypeName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := InternalName(JavaName("a/b/C$D")); got != "a/b/C$D" {
		t.Errorf("round trip gave %q", got)
	}
	if c, ok := NewArrayClass(10); !ok || c != "[I" {
		t.Errorf("NewArrayClass(10) = %q, %v", c, ok)
	}
	for _, bad := range []int32{-1, 0, 3, 12, 1000} {
		if _, ok := NewArrayClass(bad); ok {
			t.Errorf("NewArrayClass(%d) accepted", bad)
		}
	}
}

func TestMethodSlots(t *testing.T) {
	for _, tc := range []struct {
		desc      string
		args, ret int
		ok        bool
	}{
		{"()V", 0, 0, true}, {"(IJ[J)D", 4, 2, true}, {"(Ljava/lang/String;)[J", 1, 1, true},
		{"(I", 0, 0, false}, {"(L;)V", 0, 0, false}, {"(I)VV", 0, 0, false}, {"I", 0, 0, false},
	} {
		args, ret, ok := MethodSlots([]byte(tc.desc))
		if args != tc.args || ret != tc.ret || ok != tc.ok {
			t.Errorf("MethodSlots(%q) = %d, %d, %v; want %d, %d, %v", tc.desc, args, ret, ok, tc.args, tc.ret, tc.ok)
		}
		if _, err := MethodArgSlots(tc.desc); (err == nil) != tc.ok {
			t.Errorf("MethodArgSlots(%q) error %v", tc.desc, err)
		}
	}
}
