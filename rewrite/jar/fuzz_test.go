package jar

import (
	"archive/zip"
	"bytes"
	"testing"
)

// FuzzReadJar feeds arbitrary bytes to the jar reader: malformed input must give an error, never
// a panic, a hang, or memory out of proportion to the input (the limits below are what the
// pipeline applies to every entry it inflates).
func FuzzReadJar(f *testing.F) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range sampleEntries {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method, Comment: e.comment, Extra: e.extra})
		w.Write(e.data)
	}
	zw.SetComment("c")
	zw.Close()
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Add([]byte("PK\x05\x06\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Add([]byte{})
	lim := Limits{MaxEntrySize: 1 << 20, MaxRatio: 200}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := openZip("fuzz.jar", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		total := 0
		for _, e := range in.Entries {
			unsafePath(e.Name)
			IsClass(e.Name)
			b, err := e.ReadAll(lim)
			if err != nil {
				continue
			}
			total += len(b)
			if e.Name == manifestName {
				stripDigests(b, func(string) bool { return true })
			}
		}
		// Every inflated byte was declared and passed the ratio check, so the total is bounded
		// by the input size (or by the floor under which the ratio is not checked).
		if bound := len(in.Entries)*ratioFloor + len(data)*int(lim.MaxRatio); total > bound {
			t.Fatalf("inflated %d bytes from %d", total, len(data))
		}
	})
}
