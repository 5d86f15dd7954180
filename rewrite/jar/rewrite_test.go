package jar

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/rewrite/transform"
)

// fakeClass is not a real class file: the pipeline never parses classes, the pass does.
func fakeClass(name string) []byte { return []byte("\xca\xfe\xba\xbe class " + name) }

type testEntry struct {
	name    string
	data    []byte
	method  uint16
	comment string
	extra   []byte
}

// makeJar writes a zip with the given entries, in order, and returns its path.
func makeJar(t testing.TB, dir, name string, entries []testEntry, comment string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	mod := time.Date(2020, 2, 3, 4, 5, 6, 0, time.UTC)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: e.method, Comment: e.comment, Extra: e.extra, Modified: mod}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(e.data)
	}
	if comment != "" {
		zw.SetComment(comment)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var sampleEntries = []testEntry{
	{name: "META-INF/", method: zip.Store},
	{name: "META-INF/MANIFEST.MF", data: []byte("Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n"), method: zip.Deflate},
	{name: "a/", method: zip.Store},
	{name: "a/A.class", data: fakeClass("a/A"), method: zip.Deflate, comment: "entry comment", extra: []byte{0xfe, 0xca, 2, 0, 1, 2}},
	{name: "a/B.class", data: fakeClass("a/B"), method: zip.Store},
	{name: "a/package-info.class", data: fakeClass("a/package-info"), method: zip.Deflate},
	{name: "module-info.class", data: fakeClass("module-info"), method: zip.Deflate},
	{name: "a/res.txt", data: []byte(strings.Repeat("resource ", 100)), method: zip.Deflate},
	{name: "META-INF/versions/11/a/A.class", data: fakeClass("a/A v11"), method: zip.Deflate},
	{name: "META-INF/services/x.class", data: fakeClass("not a class"), method: zip.Deflate},
}

// marker is a pass that changes every class detectably and remembers what it saw.
func marker(seen *[]string, mu chan struct{}) transform.Class {
	return transform.Func(func(name string, data []byte) (transform.Result, error) {
		mu <- struct{}{}
		*seen = append(*seen, name)
		<-mu
		return transform.Result{Data: append([]byte("REWRITTEN "), data...)}, nil
	})
}

func readZip(t testing.TB, p string) *zip.ReadCloser {
	t.Helper()
	zr, err := zip.OpenReader(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { zr.Close() })
	return zr
}

func contents(t testing.TB, f *zip.File) []byte {
	t.Helper()
	rc, err := f.Open()
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("%s: %v", f.Name, err)
	}
	return b
}

func rawBytes(t testing.TB, f *zip.File) []byte {
	t.Helper()
	r, err := f.OpenRaw()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(r)
	return b
}

func TestRewriteKeepsEverythingElse(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "archive comment")
	out := filepath.Join(dir, "out.jar")
	var seen []string
	rep, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{Workers: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantRewritten := map[string]bool{"a/A.class": true, "a/B.class": true, "META-INF/versions/11/a/A.class": true}
	if len(seen) != len(wantRewritten) {
		t.Errorf("pass saw %v, want %v", seen, wantRewritten)
	}
	if rep.Classes != 3 || rep.Rewritten != 3 || rep.Failed != 0 || rep.Entries != len(sampleEntries) {
		t.Errorf("report %+v", rep)
	}
	src, dst := readZip(t, in), readZip(t, out)
	if dst.Comment != "archive comment" {
		t.Errorf("archive comment %q", dst.Comment)
	}
	if len(dst.File) != len(src.File) {
		t.Fatalf("%d entries, want %d", len(dst.File), len(src.File))
	}
	for i, f := range dst.File {
		o := src.File[i]
		if f.Name != o.Name {
			t.Fatalf("entry %d is %s, want %s (order changed)", i, f.Name, o.Name)
		}
		if f.Comment != o.Comment || !bytes.Equal(f.Extra, o.Extra) || !f.Modified.Equal(o.Modified) || f.Method != o.Method {
			t.Errorf("%s: header changed: %+v vs %+v", f.Name, f.FileHeader, o.FileHeader)
		}
		got := contents(t, f)
		if wantRewritten[f.Name] {
			if want := append([]byte("REWRITTEN "), contents(t, o)...); !bytes.Equal(got, want) {
				t.Errorf("%s: got %q, want %q", f.Name, got, want)
			}
		} else if !bytes.Equal(rawBytes(t, f), rawBytes(t, o)) {
			t.Errorf("%s: raw bytes changed", f.Name)
		}
	}
}

func TestUnchangedClassesAreCopiedRaw(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	out := filepath.Join(dir, "out.jar")
	same := transform.Func(func(name string, data []byte) (transform.Result, error) {
		// Identical new bytes count as unchanged: only real changes are "rewritten".
		return transform.Result{Data: append([]byte(nil), data...)}, nil
	})
	rep, err := Rewrite([]string{in}, out, same, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Unchanged != 3 || rep.Rewritten != 0 {
		t.Errorf("report %+v", rep)
	}
	a, b := readZip(t, in), readZip(t, out)
	for i := range a.File {
		if !bytes.Equal(rawBytes(t, a.File[i]), rawBytes(t, b.File[i])) {
			t.Errorf("%s: raw bytes changed", a.File[i].Name)
		}
	}
}

func TestFailuresPanicsAndSkipsAreReported(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	out := filepath.Join(dir, "out.jar")
	pass := transform.Func(func(name string, data []byte) (transform.Result, error) {
		switch name {
		case "a/A.class":
			return transform.Result{}, fmt.Errorf("%s: bad constant pool tag 99 at offset 10", name)
		case "a/B.class":
			var m map[string]int
			m["boom"]++ // a bug in a pass: must cost this class only
		}
		return transform.Result{
			Data: append([]byte("X"), data...),
			Skipped: []transform.Skip{{Method: "big()V", Code: "code would exceed 65535 bytes"}, {Method: "f()V", Code: "jsr"}, {Method: "g()V", Code: "jsr"},
				{Method: "h()V", Code: transform.SkipPathsSubroutine}},
			Warnings: []string{"class file version 70 is newer than known"},
		}, nil
	})
	rep, err := Rewrite([]string{in}, out, pass, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 2 || rep.Rewritten != 1 || len(rep.Failures) != 2 {
		t.Fatalf("report %+v", rep)
	}
	if f := rep.Failures[0]; f.Entry != in+"!a/A.class" || !strings.Contains(f.Err.Error(), "offset 10") {
		t.Errorf("failure %v", f)
	}
	if f := rep.Failures[1]; !strings.Contains(f.Err.Error(), "panicked") || !strings.Contains(f.Err.Error(), "rewrite_test.go") {
		t.Errorf("panic failure does not say where: %v", f)
	}
	sum := rep.Summary()
	for _, want := range []string{"3 classes: 1 rewritten, 0 unchanged, 2 failed", "3 methods skipped", "jsr: 2", "code would exceed 65535 bytes: 1",
		"1 methods rewritten with a fallback (" + string(transform.SkipPathsSubroutine) + ": 1)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "META-INF/versions/11/a/A.class: class file version 70") {
		t.Errorf("warnings %q", rep.Warnings)
	}
	// Failed classes are copied unchanged.
	src, dst := readZip(t, in), readZip(t, out)
	for i := range src.File {
		if n := src.File[i].Name; n == "a/A.class" || n == "a/B.class" {
			if !bytes.Equal(rawBytes(t, src.File[i]), rawBytes(t, dst.File[i])) {
				t.Errorf("%s: failed class not copied unchanged", n)
			}
		}
	}
}

func TestDirectoryInputAndOutput(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	classes := filepath.Join(dir, "classes") // no .jar suffix: a directory
	var seen []string
	if _, err := Rewrite([]string{in}, classes, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(classes, "META-INF/versions/11/a/A.class"))
	if err != nil || string(got) != "REWRITTEN "+string(fakeClass("a/A v11")) {
		t.Fatalf("versioned class: %q %v", got, err)
	}
	st, err := os.Stat(filepath.Join(classes, "a/res.txt"))
	if err != nil || !st.ModTime().Equal(time.Date(2020, 2, 3, 4, 5, 6, 0, time.UTC)) {
		t.Errorf("resource time not kept: %v %v", st, err)
	}
	// Directory back to a jar: the manifest comes first even though WalkDir sorts "META-INF"
	// after upper-case names, and the classes are rewritten once more.
	if err := os.WriteFile(filepath.Join(classes, "A.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "again.jar")
	seen = nil
	rep, err := Rewrite([]string{classes}, out, marker(&seen, make(chan struct{}, 1)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rewritten != 3 {
		t.Errorf("report %+v", rep)
	}
	zr := readZip(t, out)
	if zr.File[0].Name != "META-INF/" || zr.File[1].Name != manifestName {
		t.Errorf("manifest not first: %s, %s", zr.File[0].Name, zr.File[1].Name)
	}
	for _, f := range zr.File {
		if f.Name == "a/A.class" && string(contents(t, f)) != "REWRITTEN REWRITTEN "+string(fakeClass("a/A")) {
			t.Errorf("a/A.class: %q", contents(t, f))
		}
	}
	// An existing, non-empty directory is never written into.
	if _, err := Rewrite([]string{in}, classes, marker(&seen, make(chan struct{}, 1)), Options{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("non-empty output directory: %v", err)
	}
}

func TestMergeFirstWins(t *testing.T) {
	dir := t.TempDir()
	one := makeJar(t, dir, "one.jar", []testEntry{
		{name: "p/", method: zip.Store},
		{name: "p/C.class", data: fakeClass("one"), method: zip.Deflate},
	}, "")
	two := makeJar(t, dir, "two.jar", []testEntry{
		{name: "META-INF/MANIFEST.MF", data: []byte("Manifest-Version: 1.0\n\n"), method: zip.Deflate},
		{name: "p/", method: zip.Store},
		{name: "p/C.class", data: fakeClass("two"), method: zip.Deflate},
		{name: "p/D.class", data: fakeClass("two D"), method: zip.Deflate},
	}, "")
	out := filepath.Join(dir, "out.jar")
	rep, err := Rewrite([]string{one, two}, out, transform.Func(func(string, []byte) (transform.Result, error) {
		return transform.Result{}, nil
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	zr := readZip(t, out)
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Name == "p/C.class" && !bytes.Equal(contents(t, f), fakeClass("one")) {
			t.Errorf("p/C.class came from the second input")
		}
	}
	if got := strings.Join(names, " "); got != "META-INF/MANIFEST.MF p/ p/C.class p/D.class" {
		t.Errorf("entries %s", got)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "two.jar!p/C.class: dropped, "+one+"!p/C.class comes first") {
		t.Errorf("warnings %q", rep.Warnings)
	}
	// The same jar twice (here through a link) is read once, with one warning.
	link := filepath.Join(dir, "link.jar")
	if err := os.Symlink(one, link); err != nil {
		t.Skip(err)
	}
	rep, err = Rewrite([]string{one, link}, out, transform.Func(func(string, []byte) (transform.Result, error) {
		return transform.Result{}, nil
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Warnings) != 1 || rep.Warnings[0] != link+": given again (as "+one+"), read once" || rep.Classes != 1 {
		t.Errorf("same input twice: %+v", rep)
	}
}

func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	good := makeJar(t, dir, "good.jar", sampleEntries, "")
	goodBytes, _ := os.ReadFile(good)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, b, 0o644)
		return p
	}
	zeros := make([]byte, 4<<20)
	cases := []struct {
		name, input, output string
		opt                 Options
		want                string
	}{
		{"not a jar", write("text.jar", []byte("hello, I am not a zip file")), "o1.jar", Options{}, "text.jar: not a jar or zip file"},
		{"truncated", write("trunc.jar", goodBytes[:len(goodBytes)-30]), "o2.jar", Options{}, "trunc.jar: not a jar or zip file, or truncated"},
		{"duplicate", makeJar(t, dir, "dup.jar", []testEntry{{name: "a.txt"}, {name: "a.txt"}}, ""), "o3.jar", Options{}, "dup.jar!a.txt: the entry occurs more than once"},
		{"traversal", makeJar(t, dir, "evil.jar", []testEntry{{name: "../../etc/x.class", data: fakeClass("x")}}, ""), "o4dir", Options{}, "evil.jar!../../etc/x.class: unsafe entry name: path leaves the output directory"},
		{"absolute", makeJar(t, dir, "abs.jar", []testEntry{{name: "/tmp/x.txt"}}, ""), "o5dir", Options{}, "abs.jar!/tmp/x.txt: unsafe entry name: absolute"},
		{"bomb", makeJar(t, dir, "bomb.jar", []testEntry{{name: "Z.class", data: zeros, method: zip.Deflate}}, ""), "o6.jar", Options{}, "bomb.jar!Z.class: declared size 4194304 bytes from"},
		{"too big", makeJar(t, dir, "big.jar", []testEntry{{name: "Z.class", data: zeros[:5000], method: zip.Store}}, ""), "o7.jar", Options{Limits: Limits{MaxEntrySize: 4096}}, "big.jar!Z.class: declared size 5000 bytes exceeds the limit of 4096"},
		{"missing", filepath.Join(dir, "nope.jar"), "o8.jar", Options{}, "nope.jar: no such file"},
	}
	ok := transform.Func(func(string, []byte) (transform.Result, error) { return transform.Result{}, nil })
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.output)
			_, err := Rewrite([]string{c.input}, out, ok, c.opt)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
			if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
				t.Errorf("output %s exists after an error", out)
			}
			leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
			if len(leftovers) > 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
		})
	}
}

func TestErrorKeepsExistingOutput(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.jar")
	os.WriteFile(out, []byte("the good old output"), 0o644)
	// The bad entry comes after good ones, so writing has begun when the error strikes.
	bad := makeJar(t, dir, "bad.jar", append(append([]testEntry(nil), sampleEntries...),
		testEntry{name: "Z.class", data: make([]byte, 8000), method: zip.Store}), "")
	_, err := Rewrite([]string{bad}, out, transform.Func(func(string, []byte) (transform.Result, error) {
		return transform.Result{}, nil
	}), Options{Limits: Limits{MaxEntrySize: 4096}})
	if err == nil {
		t.Fatal("expected an error")
	}
	if b, _ := os.ReadFile(out); string(b) != "the good old output" {
		t.Errorf("existing output replaced by %q", b)
	}
}

func TestIsDirOutput(t *testing.T) {
	dir := t.TempDir()
	for out, want := range map[string]bool{
		"x.jar": false, "x.ZIP": false, "x.war": false, "classes": true, "x.jar/": true, dir: true, "out.d": true, "A.class": false,
	} {
		if got := IsDirOutput(out); got != want {
			t.Errorf("IsDirOutput(%q) = %v", out, got)
		}
	}
}

func TestIsClass(t *testing.T) {
	for name, want := range map[string]bool{
		"A.class": true, "a/b/C$1.class": true, "META-INF/versions/9/a/A.class": true,
		"module-info.class": false, "META-INF/versions/9/module-info.class": false, "a/package-info.class": false,
		"META-INF/x.class": false, "META-INF/versions/x/A.class": false, "a/A.txt": false, "a/": false,
	} {
		if got := IsClass(name); got != want {
			t.Errorf("IsClass(%q) = %v", name, got)
		}
	}
}

func TestDeflateLevelIsChecked(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	var seen []string
	_, err := Rewrite([]string{in}, filepath.Join(dir, "o.jar"), marker(&seen, make(chan struct{}, 1)), Options{DeflateLevel: 12})
	if err == nil || !strings.Contains(err.Error(), "deflate level 12") {
		t.Errorf("level 12: %v", err)
	}
	// Every level produces a jar that reads back the same.
	out := filepath.Join(dir, "nine.jar")
	if _, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{DeflateLevel: 9}); err != nil {
		t.Fatal(err)
	}
	for _, f := range readZip(t, out).File {
		if f.Name == "a/A.class" && string(contents(t, f)) != "REWRITTEN "+string(fakeClass("a/A")) {
			t.Errorf("a/A.class at level 9: %q", contents(t, f))
		}
	}
}

func TestInPlaceNewDirectoryAndProgress(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	var seen []string
	var progress bytes.Buffer
	// Rewriting a jar onto itself works: the input stays open and readable until the rename.
	rep, err := Rewrite([]string{in}, in, marker(&seen, make(chan struct{}, 1)), Options{Progress: &progress})
	if err != nil || rep.Rewritten != 3 {
		t.Fatalf("in place: %+v %v", rep, err)
	}
	if !strings.HasSuffix(progress.String(), "rewriting: 3/3 classes\n") {
		t.Errorf("progress %q", progress.String())
	}
	for _, f := range readZip(t, in).File {
		if f.Name == "a/B.class" && string(contents(t, f)) != "REWRITTEN "+string(fakeClass("a/B")) {
			t.Errorf("a/B.class: %q", contents(t, f))
		}
	}
	// A jar output in a directory that does not exist yet gets the directory.
	out := filepath.Join(dir, "new", "sub", "out.jar")
	if _, err := Rewrite([]string{in}, out, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
}

func TestDirectoryInputFollowsFileLinksOnly(t *testing.T) {
	dir := t.TempDir()
	classes := filepath.Join(dir, "classes")
	os.MkdirAll(filepath.Join(classes, "p"), 0o755)
	os.WriteFile(filepath.Join(dir, "shared.txt"), []byte("shared"), 0o644)
	os.WriteFile(filepath.Join(classes, "p", "A.class"), fakeClass("p/A"), 0o644)
	if err := os.Symlink(filepath.Join(dir, "shared.txt"), filepath.Join(classes, "p", "link.txt")); err != nil {
		t.Skipf("symlinks unsupported here: %v", err)
	}
	out := filepath.Join(dir, "out.jar")
	var seen []string
	if _, err := Rewrite([]string{classes}, out, marker(&seen, make(chan struct{}, 1)), Options{}); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range readZip(t, out).File {
		if f.Name == "p/link.txt" {
			found = string(contents(t, f)) == "shared"
		}
	}
	if !found {
		t.Error("p/link.txt not archived with the linked file's contents")
	}
	// A link to a directory is refused with the path named, never followed.
	os.Symlink(dir, filepath.Join(classes, "loop"))
	_, err := Rewrite([]string{classes}, filepath.Join(dir, "out2.jar"), marker(&seen, make(chan struct{}, 1)), Options{})
	if err == nil || !strings.Contains(err.Error(), "loop: not a regular file") {
		t.Errorf("directory link: %v", err)
	}
}

func TestCancelLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", sampleEntries, "")
	out := filepath.Join(dir, "out.jar")
	ctx, cancel := context.WithCancel(context.Background())
	// The pass cancels the run while it is under way, as Ctrl-C would.
	pass := transform.Func(func(name string, data []byte) (transform.Result, error) {
		cancel()
		return transform.Result{}, nil
	})
	_, err := Rewrite([]string{in}, out, pass, Options{Context: ctx, Workers: 1})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if names, _ := filepath.Glob(filepath.Join(dir, "*out*")); len(names) > 0 {
		t.Errorf("left behind: %v", names)
	}
}

// TestTuneGCOverlapping checks that overlapping runs restore the collector's setting only when
// the last one ends, and that GOGC in the environment is left alone.
func TestTuneGCOverlapping(t *testing.T) {
	t.Setenv("GOGC", "")
	old := debug.SetGCPercent(123)
	defer debug.SetGCPercent(old)
	a := TuneGC()
	b := TuneGC()
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Fatalf("during two runs: GOGC %d, want %d", got, GCPercent)
	}
	a()
	a() // a second call does nothing
	if got := debug.SetGCPercent(GCPercent); got != GCPercent {
		t.Fatalf("after the first of two runs: GOGC %d, want %d", got, GCPercent)
	}
	b()
	if got := debug.SetGCPercent(123); got != 123 {
		t.Fatalf("after both runs: GOGC %d, want 123 restored", got)
	}
	t.Setenv("GOGC", "50")
	TuneGC()()
	if got := debug.SetGCPercent(123); got != 123 {
		t.Fatalf("with GOGC set: GOGC %d, want 123 untouched", got)
	}
}

// tinyClass is a parseable class file header: name extends java/lang/Object, with no members.
func tinyClass(name string) []byte {
	b := []byte{0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 61, 0, 5}
	b = append(b, 1, byte(len(name)>>8), byte(len(name)))
	b = append(b, name...)
	b = append(b, 7, 0, 1, 1, 0, 16)
	b = append(b, "java/lang/Object"...)
	b = append(b, 7, 0, 3, 0, 0x21, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0)
	return b
}

// A class file is an input as a jar or a directory is, filed under its class's name: written
// to a .class output as a class file, to a directory or a jar as p/A.class.
func TestClassFileInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "Whatever.class")
	data := tinyClass("p/A")
	if err := os.WriteFile(in, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []string
	pass := marker(&seen, make(chan struct{}, 1))
	out := filepath.Join(dir, "B.class")
	if _, err := Rewrite([]string{in}, out, pass, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != "REWRITTEN "+string(data) {
		t.Errorf("%s: %q", out, b)
	}
	if len(seen) != 1 || seen[0] != "p/A.class" {
		t.Errorf("the pass saw %v, want p/A.class", seen)
	}
	classes := filepath.Join(dir, "classes")
	if _, err := Rewrite([]string{in}, classes, pass, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(classes, "p", "A.class")); string(b) != "REWRITTEN "+string(data) {
		t.Errorf("directory output: p/A.class is %q", b)
	}
	jar := filepath.Join(dir, "a.jar")
	if _, err := Rewrite([]string{in}, jar, pass, Options{}); err != nil {
		t.Fatal(err)
	}
	if fs := readZip(t, jar).File; len(fs) != 1 || fs[0].Name != "p/A.class" {
		t.Errorf("jar output: %v", fs)
	}
	// Unchanged by the pass, the class is copied byte for byte.
	same := filepath.Join(dir, "same.class")
	unchanged := transform.Func(func(string, []byte) (transform.Result, error) { return transform.Result{}, nil })
	if _, err := Rewrite([]string{in}, same, unchanged, Options{}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(same); !bytes.Equal(b, data) {
		t.Errorf("unchanged class: %q", b)
	}
	// A .class output takes one class, not a jar's worth.
	many := makeJar(t, dir, "many.jar", sampleEntries, "")
	_, err := Rewrite([]string{in, many}, filepath.Join(dir, "C.class"), pass, Options{})
	if err == nil || !strings.Contains(err.Error(), "a .class output holds one class") {
		t.Errorf("jar to .class: %v", err)
	}
	bad := filepath.Join(dir, "Bad.class")
	os.WriteFile(bad, data[:20], 0o644)
	if _, err := Rewrite([]string{bad}, filepath.Join(dir, "D.class"), pass, Options{}); err == nil || !strings.Contains(err.Error(), "Bad.class: not a class file that names its class") {
		t.Errorf("truncated class: %v", err)
	}
}

// TestSkipsGroupByCode: the summary counts skipped methods by their code, whatever their details
// (which name methods and offsets), and keeps one example detail per code for --verbose.
func TestSkipsGroupByCode(t *testing.T) {
	rep := &Report{SkipReasons: map[string]int{}, ClassReasons: map[string]int{}}
	for i := range 40 {
		rep.skipped("x.jar!a/B.class", transform.Skip{Method: fmt.Sprintf("m%d()V", i), Code: transform.SkipNoFrames,
			Detail: fmt.Sprintf("no frame at bytecode offset %d of method a.B.m%d()V", i, i)})
	}
	rep.skipped("x.jar!a/C.class", transform.Skip{Code: transform.SkipRewritten, Detail: "it calls heapledger/rt/Acct"})
	sum := rep.Summary()
	for _, want := range []string{"40 methods skipped (stack map frames cannot be derived: 40)", "1 classes skipped (already rewritten by heapledger: 1)"} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
	if strings.Contains(sum, "other reasons") || strings.Contains(sum, "offset") {
		t.Errorf("summary splits one code by its details: %q", sum)
	}
	rs := rep.Reasons()
	if len(rs) != 1 || rs[0].Example != "x.jar!a/B.class m0()V: no frame at bytecode offset 0 of method a.B.m0()V" {
		t.Errorf("reasons %+v", rs)
	}
}

// TestAddEntries: a run's own entries go into the output it writes, after the inputs' entries,
// replacing an input entry of the same name, with contents Finish computes from the finished
// report; jar and directory outputs alike, and only once everything else is written.
func TestAddEntries(t *testing.T) {
	dir := t.TempDir()
	in := makeJar(t, dir, "in.jar", append(slices.Clone(sampleEntries), testEntry{name: "META-INF/heapledger/table.tsv", data: []byte("old"), method: zip.Deflate}), "")
	for _, out := range []string{filepath.Join(dir, "out.jar"), filepath.Join(dir, "out")} {
		classes := 0
		add := &Addition{
			Names: []string{"META-INF/heapledger/table.tsv", "z/extra.txt"},
			Finish: func(rep *Report) (map[string][]byte, error) {
				classes = rep.Classes
				return map[string][]byte{"META-INF/heapledger/table.tsv": []byte(fmt.Sprintf("classes %d", rep.Classes)), "z/extra.txt": []byte("x")}, nil
			},
		}
		rep, err := Rewrite([]string{in}, out, transform.Func(func(string, []byte) (transform.Result, error) { return transform.Result{}, nil }), Options{Workers: 2, Add: add})
		if err != nil {
			t.Fatal(err)
		}
		if classes == 0 || classes != rep.Classes {
			t.Errorf("%s: Finish saw %d classes, the run %d", out, classes, rep.Classes)
		}
		read := func(name string) string {
			if strings.HasSuffix(out, ".jar") {
				zr := readZip(t, out)
				n := 0
				var got string
				for _, f := range zr.File {
					if f.Name == name {
						n++
						rc, _ := f.Open()
						b, _ := io.ReadAll(rc)
						rc.Close()
						got = string(b)
					}
				}
				if n != 1 {
					t.Errorf("%s: %d entries %s", out, n, name)
				}
				return got
			}
			b, _ := os.ReadFile(filepath.Join(out, filepath.FromSlash(name)))
			return string(b)
		}
		if got := read("META-INF/heapledger/table.tsv"); got != fmt.Sprintf("classes %d", rep.Classes) {
			t.Errorf("%s: table %q", out, got)
		}
		if got := read("z/extra.txt"); got != "x" {
			t.Errorf("%s: extra %q", out, got)
		}
	}
	// A failing Finish leaves no output.
	out := filepath.Join(dir, "fail.jar")
	_, err := Rewrite([]string{in}, out, transform.Func(func(string, []byte) (transform.Result, error) { return transform.Result{}, nil }),
		Options{Add: &Addition{Finish: func(*Report) (map[string][]byte, error) { return nil, errors.New("no table") }}})
	if err == nil {
		t.Error("a failing Finish did not fail the run")
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failing Finish left an output")
	}
}
