package hprof_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// sample builds a small two-dump file: dump 1 in two segments with the instances before their
// class dump, dump 2 as a single HEAP DUMP record.
func sample(idSize int) []byte {
	b := hproftest.New(idSize)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.LoadClass(0x30, "[Lapp/Node;")
	b.StartSegment(false)
	b.Root(hprof.TagRootJavaFrame, 0x100)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "val", Type: hprof.TypeInt}}, nil)
	b.Instance(0x100, 0x20, 0x108, 7)
	b.EndSegment()
	b.StartSegment(false)
	b.Instance(0x108, 0x20, 0, 8)
	b.Class(0x10, 0, "", nil, nil)
	b.ObjArray(0x200, 0x30, 0x100, 0, 0x108)
	b.PrimArray(0x300, hprof.TypeLong, 3)
	b.Root(hprof.TagRootStickyClass, 0x20)
	b.EndSegment()
	b.EndDump()
	b.StartSegment(true)
	b.Class(0x10, 0, "", nil, nil)
	b.Root(hprof.TagRootUnknown, 0x10)
	b.EndSegment()
	return b.Bytes()
}

func readAll(t *testing.T, data []byte) ([]hprof.Record, *hprof.Reader, error) {
	r, err := hprof.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	var recs []hprof.Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return recs, r, nil
		}
		if err != nil {
			return recs, r, err
		}
		c := *rec
		c.Data = append([]byte(nil), rec.Data...)
		recs = append(recs, c)
	}
}

func TestReaderBothIDSizes(t *testing.T) {
	for _, idSize := range []int{4, 8} {
		recs, r, err := readAll(t, sample(idSize))
		if err != nil {
			t.Fatalf("id size %d: %v", idSize, err)
		}
		if r.IDSize != idSize || r.Dumps() != 2 || r.Format != "JAVA PROFILE 1.0.2" {
			t.Fatalf("id size %d: header %d, %d dumps, %q", idSize, r.IDSize, r.Dumps(), r.Format)
		}
		var tags []string
		for _, rec := range recs {
			if rec.Tag&hprof.SubTag != 0 {
				tags = append(tags, rec.Tag.String())
			}
			switch rec.Tag {
			case hprof.TagInstanceDump:
				if rec.Class != 0x20 || len(rec.Data) != idSize+4 || rec.Dump != 1 {
					t.Errorf("instance %+v", rec)
				}
			case hprof.TagObjArrayDump:
				if rec.Length != 3 || rec.Class != 0x30 || r.ReadID(rec.Data[idSize:]) != 0 || r.ReadID(rec.Data[2*idSize:]) != 0x108 {
					t.Errorf("object array %+v", rec)
				}
			case hprof.TagPrimArrayDump:
				if rec.Length != 3 || rec.Elem != hprof.TypeLong || len(rec.Data) != 24 {
					t.Errorf("primitive array %+v", rec)
				}
			case hprof.TagClassDump:
				cd, err := hprof.DecodeClassDump(rec.ID, rec.Data, idSize, rec.Offset)
				if err != nil {
					t.Fatal(err)
				}
				if rec.ID == 0x20 && (cd.Super != 0x10 || len(cd.Fields) != 2 || cd.Fields[0].Type != hprof.TypeObject) {
					t.Errorf("class dump %+v", cd)
				}
			case hprof.TagRootUnknown:
				if rec.Dump != 2 {
					t.Errorf("root of the second dump reported in dump %d", rec.Dump)
				}
			}
		}
		want := "ROOT JAVA FRAME,CLASS DUMP,INSTANCE DUMP,INSTANCE DUMP,CLASS DUMP,OBJECT ARRAY DUMP,PRIMITIVE ARRAY DUMP,ROOT STICKY CLASS,CLASS DUMP,ROOT UNKNOWN"
		if got := strings.Join(tags, ","); got != want {
			t.Errorf("id size %d: sub-records\n got %s\nwant %s", idSize, got, want)
		}
	}
}

// Every prefix of a valid file either reads cleanly up to a record boundary or fails with a
// truncation error naming an offset — never a panic, never a silent success mid-record.
func TestEveryTruncation(t *testing.T) {
	data := sample(8)
	full, _, _ := readAll(t, data)
	boundaries := map[int]bool{}
	for _, rec := range full {
		if rec.Tag&hprof.SubTag == 0 {
			boundaries[int(rec.Offset)] = true
		}
	}
	for n := 0; n < len(data); n++ {
		_, _, err := readAll(t, data[:n])
		if err == nil {
			if !boundaries[n] {
				t.Fatalf("prefix of %d bytes read without error but ends inside a record", n)
			}
			continue
		}
		if !strings.Contains(err.Error(), "offset") {
			t.Fatalf("prefix %d: error without an offset: %v", n, err)
		}
		if n > 31 && !hprof.Truncated(err) {
			t.Fatalf("prefix %d: error not marked as truncation: %v", n, err)
		}
	}
}

func TestCorruptLengths(t *testing.T) {
	data := sample(8)
	// Make the first segment claim to be longer than the file.
	recs, _, _ := readAll(t, data)
	for _, rec := range recs {
		if rec.Tag == hprof.TagHeapDumpSegment {
			bad := append([]byte(nil), data...)
			bad[rec.Offset+5] = 0x7f
			_, _, err := readAll(t, bad)
			if err == nil || !strings.Contains(err.Error(), "offset") {
				t.Fatalf("corrupt segment length: %v", err)
			}
			break
		}
	}
	if _, err := hprof.NewReader(strings.NewReader("PK\x03\x04 not a dump")); err == nil {
		t.Fatal("a zip file was accepted as HPROF")
	}
}

// A gzip stream whose checksum fails is reported as damaged data, with the warning that the
// records read before it may hold damaged bytes too: one stream is checked only at its end.
func TestDamagedGzipStream(t *testing.T) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(sample(8))
	zw.Close()
	for name, at := range map[string]int{"checksum": z.Len() - 8, "length": z.Len() - 1} {
		bad := bytes.Clone(z.Bytes())
		bad[at] ^= 0x41
		_, _, err := readAll(t, bad)
		if err == nil || !strings.Contains(err.Error(), "the gzip data is damaged, and the records read from it before") {
			t.Errorf("damaged %s: %v", name, err)
		}
	}
}

func FuzzReader(f *testing.F) {
	f.Add(sample(4))
	f.Add(sample(8))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := hprof.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		s := hprof.NewSchema(r.IDSize)
		for i := 0; i < 1<<16; i++ {
			rec, err := r.Next()
			if err != nil {
				return
			}
			if rec.Tag == hprof.TagClassDump || rec.Tag == hprof.TagUTF8 || rec.Tag == hprof.TagLoadClass {
				if s.Add(rec) != nil {
					return
				}
			}
			if rec.Tag == hprof.TagInstanceDump {
				s.InstanceRefs(rec.Class)
				s.Layout(hprof.ModelFor(r.IDSize, true), rec.Class)
			}
			if r.Offset() > int64(len(data))+64 {
				t.Fatalf("offset %d beyond input of %d bytes", r.Offset(), len(data))
			}
		}
	})
}
