package jar

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/rewrite/transform"
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

// FuzzRewrite runs the whole pipeline (merge, pass, writer) on arbitrary bytes: whatever the
// reader accepts must be written out or refused with an error, never panic, and leave no
// temporary file behind.
func FuzzRewrite(f *testing.F) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range sampleEntries {
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: e.name, Method: e.method})
		w.Write(e.data)
	}
	zw.Close()
	f.Add(buf.Bytes(), false)
	f.Add(buf.Bytes(), true)
	pass := transform.Func(func(name string, data []byte) (transform.Result, error) {
		if len(data)%2 == 0 {
			return transform.Result{Data: append(data[:len(data):len(data)], 1)}, nil
		}
		return transform.Result{}, nil
	})
	f.Fuzz(func(t *testing.T, data []byte, dirOut bool) {
		dir := t.TempDir()
		in := filepath.Join(dir, "in.jar")
		if err := os.WriteFile(in, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(dir, "out.jar")
		if dirOut {
			out = filepath.Join(dir, "out")
		}
		_, err := Rewrite([]string{in}, out, pass, Options{Workers: 2, Limits: Limits{MaxEntrySize: 1 << 20, MaxRatio: 200}})
		if err == nil && !dirOut {
			if _, rerr := zip.OpenReader(out); rerr != nil {
				t.Fatalf("output is not a zip: %v", rerr)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) > 0 {
			t.Fatalf("temporary output left: %v", left)
		}
	})
}
