package hprof

import "testing"

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

func TestDeferredStringsKeepClassNames(t *testing.T) {
	s := NewSchema(8)
	s.DeferStrings()
	for id, str := range map[uint64]string{1: "java/util/Foo", 2: "next", 3: "[Ljava/lang/Object;"} {
		if err := s.Add(&Record{Tag: TagUTF8, ID: id, Data: []byte(str)}); err != nil {
			t.Fatal(err)
		}
	}
	for class, name := range map[uint64]uint64{100: 1, 101: 3} {
		if err := s.Add(&Record{Tag: TagLoadClass, ID: class, NameID: name}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Strings) != 0 {
		t.Fatalf("deferred strings went into the table early: %v", s.Strings)
	}
	s.TakeClassNames()
	if s.Name(100) != "java.util.Foo" || s.Name(101) != "java.lang.Object[]" {
		t.Errorf("class names %q, %q", s.Name(100), s.Name(101))
	}
	if _, ok := s.Strings[2]; ok {
		t.Error("a string that names no class was kept")
	}
	if err := s.Add(&Record{Tag: TagUTF8, ID: 7, Data: []byte("x")}); err != nil || s.Strings[7] != "x" {
		t.Error("after TakeClassNames, strings go straight into the table again")
	}
}
