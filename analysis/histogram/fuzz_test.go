package histogram

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
)

// FuzzSegmentsMatchSequential reads every input twice: from a file, which an intact dump lets
// fromSegments index and count on every core (batches of headers, class names read back from
// the file), and from a plain reader, which counts in order. Whenever both succeed they must
// agree.
func FuzzSegmentsMatchSequential(f *testing.F) {
	for _, idSize := range []int{4, 8} {
		b := hproftest.New(idSize)
		b.LoadClass(0x10, "java/lang/Object")
		b.LoadClass(0x20, "app/Node")
		b.LoadClass(0x30, "[Ljava/lang/Object;")
		b.StartSegment(false)
		b.Class(0x10, 0, "", nil, nil)
		b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "v", Type: hprof.TypeInt}}, map[string]uint64{"s": 0x100})
		b.Class(0x30, 0x10, "", nil, nil)
		for i := uint64(0); i < 40; i++ {
			b.Instance(0x100+16*i, 0x20, 0x100+16*(i+1))
			b.PrimArray(0x1000+32*i, hprof.Type(4+i%8), int(i%5))
		}
		b.EndSegment()
		b.StartSegment(false)
		b.ObjArray(0x3000, 0x30, 0x100, 0, 0x110)
		b.Instance(0x3100, 0x20, 0)
		b.EndSegment()
		b.EndDump()
		f.Add(b.Bytes())
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "f.hprof")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		fromFile, err1 := FromDump(p, file, Options{})
		inOrder, err2 := FromDump(p, bytes.NewReader(data), Options{})
		if err1 != nil || err2 != nil {
			if (err1 == nil) != (err2 == nil) {
				t.Fatalf("from the file: %v; in order: %v", err1, err2)
			}
			return
		}
		if !reflect.DeepEqual(fromFile, inOrder) {
			t.Fatalf("from the file:\n%+v\nin order:\n%+v", fromFile, inOrder)
		}
	})
}
