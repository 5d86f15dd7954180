package hprof

import (
	"testing"
)

func TestPruneKeepsClassAndFieldNames(t *testing.T) {
	s := NewSchema(8)
	for id, str := range map[uint64]string{1: "java/util/Foo", 2: "next", 3: "count", 4: "toString", 5: "(I)V"} {
		if err := s.Add(&Record{Tag: TagUTF8, ID: id, Data: []byte(str)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(&Record{Tag: TagLoadClass, ID: 100, NameID: 1}); err != nil {
		t.Fatal(err)
	}
	s.class(100).Dump = &ClassDump{Fields: []Field{{NameID: 2}}, Statics: []Static{{NameID: 3}}}
	s.Prune()
	if got := s.Name(100); got != "java.util.Foo" {
		t.Errorf("class name %q after Prune", got)
	}
	if s.FieldName(2) != "next" || s.FieldName(3) != "count" {
		t.Errorf("field names %q, %q after Prune", s.FieldName(2), s.FieldName(3))
	}
	if _, ok := s.Strings[4]; ok || len(s.Strings) != 3 {
		t.Errorf("Prune kept %d strings (%v), want the class's and its fields' 3", len(s.Strings), s.Strings)
	}
}

// isJavaName agrees with comparing JavaName's result, for plain and array names.
func TestIsJavaName(t *testing.T) {
	names := []string{"java/lang/Class", "java.lang.Class", "java/lang/Clas", "java/lang/Class2", "java/lang.Class",
		"[Ljava/lang/Class;", "[I", "[[B", "Foo", ""}
	for _, n := range names {
		for _, name := range []string{"java.lang.Class", "java.lang.Class[]", "int[]", "byte[][]", "Foo", "java/lang/Class", ""} {
			if got, want := isJavaName(n, name), JavaName(n) == name; got != want {
				t.Errorf("isJavaName(%q, %q) = %v, want %v", n, name, got, want)
			}
		}
	}
}

// ExpectClasses only sizes an empty table: classes added before stay.
func TestExpectClassesKeepsClasses(t *testing.T) {
	s := NewSchema(8)
	s.ExpectClasses(100)
	s.AddClassDump(&ClassDump{ID: 0x10})
	s.ExpectClasses(100)
	s.AddClassDump(&ClassDump{ID: 0x20})
	if len(s.Classes) != 2 || s.Classes[0x10] == nil || s.Classes[0x20] == nil {
		t.Fatalf("classes after ExpectClasses: %v", s.Classes)
	}
}
