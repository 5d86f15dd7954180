package classfile

import (
	"reflect"
	"sort"
	"testing"
)

// parseKnown parses every attribute of c that has a parsed form, returning the first error.
func parseKnown(t *testing.T, name string, c *Class) {
	t.Helper()
	check := func(where string, attrs []*Attribute) {
		for _, a := range attrs {
			var err error
			switch AttributeName(c.Pool, a) {
			case "Signature", "SourceFile", "NestHost", "ConstantValue":
				_, err = ParseIndex(a)
			case "Exceptions", "NestMembers", "PermittedSubclasses":
				_, err = ParseIndexList(a)
			case "InnerClasses":
				_, err = ParseInnerClasses(a)
			case "EnclosingMethod":
				_, err = ParseEnclosingMethod(a)
			case "Record":
				_, err = ParseRecord(a)
			case "BootstrapMethods":
				var bms []BootstrapMethod
				if bms, err = ParseBootstrapMethods(a); err == nil {
					back, _ := EncodeBootstrapMethods(a.NameIndex, bms)
					if string(back.Data) != string(a.Data) {
						t.Errorf("%s: BootstrapMethods re-encodes differently", name)
					}
				}
			}
			if err != nil {
				t.Errorf("%s: %s attribute %s: %v", name, where, AttributeName(c.Pool, a), err)
			}
		}
	}
	check("class", c.Attributes)
	for _, m := range c.Fields {
		check("field "+m.String(c.Pool), m.Attributes)
	}
	for _, m := range c.Methods {
		check("method "+m.String(c.Pool), m.Attributes)
		if _, _, err := c.MethodCode(m); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestParsedAttributesRealJars(t *testing.T) {
	for _, jar := range []string{"guava.jar", "byte-buddy.jar"} {
		for _, e := range jarClasses(t, jar) {
			c, err := Parse(e.data)
			if err != nil {
				t.Fatalf("%s!%s: %v", jar, e.name, err)
			}
			parseKnown(t, jar+"!"+e.name, c)
		}
	}
}

func TestParsedAttributesJavac(t *testing.T) {
	classes := compileJava(t, javacPath(t, ""), []string{"--release", "17"}, readSources(t, "Features.java"))
	byName := map[string]*Class{}
	for _, e := range classes {
		c, err := Parse(e.data)
		if err != nil {
			t.Fatal(err)
		}
		parseKnown(t, e.name, c)
		byName[c.Name()] = c
	}
	names := func(c *Class, attr string) []string {
		a := FindAttribute(c.Attributes, attr, c.Pool)
		if a == nil {
			t.Fatalf("%s has no %s", c.Name(), attr)
		}
		idx, err := ParseIndexList(a)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, i := range idx {
			n, err := c.Pool.ClassName(i)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	f := byName["feat/Features"]
	if f == nil {
		t.Fatal("feat/Features not compiled")
	}
	if got := names(f, "PermittedSubclasses"); !reflect.DeepEqual(got, []string{"feat/Features$Circle", "feat/Features$Poly", "feat/Features$Square"}) {
		t.Errorf("PermittedSubclasses %v", got)
	}
	if got := names(f, "NestMembers"); len(got) < 5 {
		t.Errorf("NestMembers %v", got)
	}
	if f.SourceFile() != "Features.java" {
		t.Errorf("SourceFile %q", f.SourceFile())
	}
	m := f.Method("describe", "(Ljava/lang/Object;Lfeat/Features$Color;)Ljava/lang/String;")
	if m == nil {
		t.Fatal("describe not found")
	}
	ex, err := ParseIndexList(FindAttribute(m.Attributes, "Exceptions", f.Pool))
	if err != nil || len(ex) != 1 {
		t.Fatalf("Exceptions %v %v", ex, err)
	}
	if n, _ := f.Pool.ClassName(ex[0]); n != "java/io/IOException" {
		t.Errorf("Exceptions names %s", n)
	}
	bms, err := ParseBootstrapMethods(FindAttribute(f.Attributes, "BootstrapMethods", f.Pool))
	if err != nil || len(bms) == 0 {
		t.Fatalf("BootstrapMethods %v %v", bms, err)
	}

	circle := byName["feat/Features$Circle"]
	rec, err := ParseRecord(FindAttribute(circle.Attributes, "Record", circle.Pool))
	if err != nil || len(rec) != 1 {
		t.Fatalf("Record %v %v", rec, err)
	}
	if n, _ := circle.Pool.Utf8(rec[0].NameIndex); n != "r" {
		t.Errorf("record component %q", n)
	}
	if d, _ := circle.Pool.Utf8(rec[0].DescriptorIndex); d != "D" {
		t.Errorf("record component descriptor %q", d)
	}
	host, err := ParseIndex(FindAttribute(circle.Attributes, "NestHost", circle.Pool))
	if n, _ := circle.Pool.ClassName(host); err != nil || n != "feat/Features" {
		t.Errorf("NestHost %q %v", n, err)
	}
	inner, err := ParseInnerClasses(FindAttribute(circle.Attributes, "InnerClasses", circle.Pool))
	if err != nil || len(inner) == 0 {
		t.Errorf("InnerClasses %v %v", inner, err)
	}
	if circle.SuperName() != "java/lang/Record" {
		t.Errorf("record super %q", circle.SuperName())
	}
}

func TestAddBootstrapMethod(t *testing.T) {
	c, err := Parse(minimalClass())
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := c.Pool.AddMethodref("java/lang/invoke/LambdaMetafactory", "metafactory",
		"(Ljava/lang/invoke/MethodHandles$Lookup;Ljava/lang/String;Ljava/lang/invoke/MethodType;Ljava/lang/invoke/MethodType;Ljava/lang/invoke/MethodHandle;Ljava/lang/invoke/MethodType;)Ljava/lang/invoke/CallSite;", false)
	mh, err := c.Pool.AddMethodHandle(6, ref)
	if err != nil {
		t.Fatal(err)
	}
	mt, _ := c.Pool.AddMethodType("()V")
	i0, err := c.AddBootstrapMethod(BootstrapMethod{MethodRef: mh, Args: []uint16{mt}})
	if err != nil || i0 != 0 {
		t.Fatalf("first: %d %v", i0, err)
	}
	i1, _ := c.AddBootstrapMethod(BootstrapMethod{MethodRef: mh})
	again, _ := c.AddBootstrapMethod(BootstrapMethod{MethodRef: mh, Args: []uint16{mt}})
	if i1 != 1 || again != 0 {
		t.Errorf("indices %d %d", i1, again)
	}
	indy, err := c.Pool.AddInvokeDynamic(i1, "run", "()Ljava/lang/Runnable;")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := c.Pool.AddLong(-5)
	d, _ := c.Pool.AddDouble(2.5)
	f, _ := c.Pool.AddFloat(1.25)
	b, err := c.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	c2, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	bms, err := ParseBootstrapMethods(FindAttribute(c2.Attributes, "BootstrapMethods", c2.Pool))
	if err != nil || len(bms) != 2 || !reflect.DeepEqual(bms[0].Args, []uint16{mt}) {
		t.Fatalf("after write: %v %v", bms, err)
	}
	if n, desc, err := c2.Pool.DynamicNameAndType(indy); err != nil || n != "run" || desc != "()Ljava/lang/Runnable;" {
		t.Errorf("indy %s %s %v", n, desc, err)
	}
	for _, x := range []struct {
		i   uint16
		tag uint8
	}{{l, TagLong}, {d, TagDouble}, {f, TagFloat}} {
		if e, err := c2.Pool.Entry(x.i); err != nil || e.Tag != x.tag {
			t.Errorf("constant %d: %v %v", x.i, e, err)
		}
	}
	if _, err := c.Pool.AddMethodHandle(10, ref); err == nil {
		t.Error("reference kind 10 accepted")
	}
}
