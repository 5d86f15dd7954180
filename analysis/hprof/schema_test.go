package hprof

import (
	"bytes"
	"encoding/binary"
	"strings"
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

func TestDeferredStringsKeepClassNames(t *testing.T) {
	s := NewSchema(8)
	s.DeferStrings()
	// The strings as UTF8 records in a file: tag, time, length, id, text. The reads that take
	// them back again reach at most classNameRead, so some records lie beyond it.
	var file []byte
	strs := map[uint64]string{1: "java/util/Foo", 2: "next", 3: "[Ljava/lang/Object;", 4: strings.Repeat("x", classNameRead), 5: "Bar"}
	for id := uint64(1); id <= 5; id++ {
		rec := &Record{Tag: TagUTF8, ID: id, Offset: int64(len(file)), Data: []byte(strs[id])}
		file = append(file, byte(TagUTF8), 0, 0, 0, 0)
		file = binary.BigEndian.AppendUint32(file, uint32(8+len(strs[id])))
		file = binary.BigEndian.AppendUint64(file, id)
		file = append(file, strs[id]...)
		if err := s.Add(rec); err != nil {
			t.Fatal(err)
		}
	}
	for class, name := range map[uint64]uint64{100: 1, 101: 3, 102: 5} {
		if err := s.Add(&Record{Tag: TagLoadClass, ID: class, NameID: name}); err != nil {
			t.Fatal(err)
		}
	}
	if len(s.Strings) != 0 {
		t.Fatalf("deferred strings went into the table early: %v", s.Strings)
	}
	if err := s.TakeClassNames(bytes.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if s.Name(100) != "java.util.Foo" || s.Name(101) != "java.lang.Object[]" || s.Name(102) != "Bar" {
		t.Errorf("class names %q, %q, %q", s.Name(100), s.Name(101), s.Name(102))
	}
	if _, ok := s.Strings[2]; ok {
		t.Error("a string that names no class was kept")
	}
	if err := s.Add(&Record{Tag: TagUTF8, ID: 7, Data: []byte("x")}); err != nil || s.Strings[7] != "x" {
		t.Error("after TakeClassNames, strings go straight into the table again")
	}

	// A file that no longer holds them is an error that says where.
	s = NewSchema(8)
	s.DeferStrings()
	s.Add(&Record{Tag: TagUTF8, ID: 1, Offset: 100, Data: []byte("Foo")})
	s.Add(&Record{Tag: TagLoadClass, ID: 100, NameID: 1})
	if err := s.TakeClassNames(bytes.NewReader(file[:50])); err == nil || !strings.Contains(err.Error(), "offset 117") {
		t.Errorf("class names from a shorter file: %v", err)
	}
}
