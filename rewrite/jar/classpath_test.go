package jar

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// writeZip writes a zip of name → content, in the order given (pairs), with method for every
// entry, after prefix (bytes before the archive, as a self-extracting jar has).
func writeZip(t *testing.T, path string, prefix []byte, method uint16, comment string, pairs ...string) {
	t.Helper()
	var b bytes.Buffer
	b.Write(prefix)
	w := zip.NewWriter(&b)
	w.SetOffset(int64(len(prefix)))
	for i := 0; i+1 < len(pairs); i += 2 {
		f, err := w.CreateHeader(&zip.FileHeader{Name: pairs[i], Method: method})
		if err != nil {
			t.Fatal(err)
		}
		f.Write([]byte(pairs[i+1]))
	}
	if comment != "" {
		w.SetComment(comment)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestReadManifestEveryLayout(t *testing.T) {
	dir := t.TempDir()
	mf := "Manifest-Version: 1.0\r\nClass-Path: a.jar \r\n b.jar\r\n\r\nName: x\r\nClass-Path: ignored.jar\r\n"
	for _, c := range []struct {
		name    string
		prefix  []byte
		method  uint16
		comment string
	}{
		{"deflated", nil, zip.Deflate, ""},
		{"stored", nil, zip.Store, ""},
		{"comment", nil, zip.Deflate, "a comment with PK\x05\x06 inside"},
		{"prefixed", []byte("#!/bin/sh\nexec java -jar \"$0\"\n"), zip.Deflate, ""}, // read by archive/zip
	} {
		p := filepath.Join(dir, c.name+".jar")
		writeZip(t, p, c.prefix, c.method, c.comment, "META-INF/", "", "a/A.class", "\xca\xfe", manifestName, mf)
		got, err := readManifest(p)
		if err != nil || string(got) != mf {
			t.Errorf("%s: %q, %v", c.name, got, err)
		}
		if refs, _ := manifestClassPath(p, got); len(refs) != 2 || refs[0] != filepath.Join(dir, "a.jar") || refs[1] != filepath.Join(dir, "b.jar") {
			t.Errorf("%s: Class-Path %q", c.name, refs)
		}
	}
	p := filepath.Join(dir, "none.jar")
	writeZip(t, p, nil, zip.Deflate, "", "a/A.class", "\xca\xfe")
	if got, err := readManifest(p); got != nil || err != nil {
		t.Errorf("no manifest: %q, %v", got, err)
	}
	os.WriteFile(filepath.Join(dir, "bad.jar"), []byte("not a zip"), 0o644)
	if _, err := readManifest(filepath.Join(dir, "bad.jar")); err == nil {
		t.Error("not a zip: no error")
	}
}

// TestManifestClassPathAsTheJDK: the main section ends at the first empty line, whatever ends
// its lines; a Class-Path given twice counts once, the last; a line the JDK's reader refuses
// leaves the jar's class path unknown.
func TestManifestClassPathAsTheJDK(t *testing.T) {
	for _, c := range []struct {
		mf   string
		want string
		ok   bool
	}{
		{"Manifest-Version: 1.0\n\r\nClass-Path: per-entry.jar\n", "", true},
		{"Manifest-Version: 1.0\r\n\r\nName: x\r\nClass-Path: per-entry.jar\r\n", "", true},
		{"Class-Path: first.jar\nClass-Path: last.jar\n", "/j/last.jar", true},
		{"Class-Path: a.jar\n b.jar\n", "/j/a.jarb.jar", true},
		{"Class-Path:x.jar\n", "", false},
		{"Manifest-Version: 1.0\nClass-Path: " + strings.Repeat("y", 600) + ".jar\n", "", false},
	} {
		got, ok := manifestClassPath("/j/m.jar", []byte(c.mf))
		if strings.Join(got, " ") != c.want || ok != c.ok {
			t.Errorf("%q: %q, %v; want %q, %v", c.mf, got, ok, c.want, c.ok)
		}
	}
}

func TestManifestClassPathURLs(t *testing.T) {
	got, _ := manifestClassPath("/opt/app/lib/main.jar", []byte("Class-Path: dep.jar ../other/o.jar /abs/x.jar file:/f/y.jar http://h/z.jar my%20lib.jar classes/\n"))
	want := []string{"/opt/app/lib/dep.jar", "/opt/app/other/o.jar", "/abs/x.jar", "/f/y.jar", "/opt/app/lib/my lib.jar", "/opt/app/lib/classes/"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// TestClassPathSearchOrder: the jars come in the loader's order, each one's Class-Path right
// after it and each jar once; a directory ends the search; a class with a versioned copy and a
// class only in a jar after the directory are not found.
func TestClassPathSearchOrder(t *testing.T) {
	dir := t.TempDir()
	j := func(n string) string { return filepath.Join(dir, n) }
	writeZip(t, j("a.jar"), nil, zip.Deflate, "", manifestName, "Manifest-Version: 1.0\nClass-Path: lib/b.jar missing.jar c.jar\n", "p/A.class", "a")
	writeZip(t, j("lib/b.jar"), nil, zip.Deflate, "", "p/X.class", "x from b", "p/M.class", "m", "META-INF/versions/11/p/M.class", "m11")
	writeZip(t, j("c.jar"), nil, zip.Deflate, "", "p/C.class", "c", "p/X.class", "x from c")
	writeZip(t, j("d.jar"), nil, zip.Deflate, "", "p/D.class", "d", "p/X.class", "x from d")
	writeZip(t, j("e.jar"), nil, zip.Deflate, "", "p/E.class", "e")
	os.Mkdir(j("classes"), 0o755)

	cp := NewClassPath(strings.Join([]string{j("a.jar"), j("d.jar"), j("c.jar"), j("classes"), j("e.jar")}, ":"), ":")
	defer cp.Close()
	jars, err := cp.Jars()
	if err != nil || strings.Join(jars, " ") != strings.Join([]string{j("a.jar"), j("lib/b.jar"), j("c.jar"), j("d.jar")}, " ") {
		t.Fatalf("jars %q, %v", jars, err)
	}
	for class, want := range map[string]string{"p/A": "a", "p/X": "x from b", "p/C": "c", "p/D": "d", "p/M": "", "p/E": "", "p/None": ""} {
		data, ok := cp.Lookup(class)
		if string(data) != want || ok != (want != "") {
			t.Errorf("%s: %q, %v; want %q", class, data, ok, want)
		}
	}
	for _, want := range []string{j("a.jar"), j("lib/b.jar"), j("c.jar"), j("d.jar")} {
		if !strings.Contains(cp.Identity(), want+" ") {
			t.Errorf("identity lacks %s:\n%s", want, cp.Identity())
		}
	}
	if strings.Contains(cp.Identity(), "e.jar") {
		t.Errorf("identity names a jar after the directory:\n%s", cp.Identity())
	}

	// A jar named by a Class-Path is part of the identity, by its contents: touching it leaves
	// the identity as it was, another class of the same size changes it.
	before := NewClassPath(strings.Join([]string{j("a.jar"), j("d.jar")}, ":"), ":")
	defer before.Close()
	later := time.Now().Add(time.Hour)
	os.Chtimes(j("lib/b.jar"), later, later)
	touched := NewClassPath(strings.Join([]string{j("a.jar"), j("d.jar")}, ":"), ":")
	defer touched.Close()
	if touched.Identity() != before.Identity() {
		t.Errorf("identity changed by touching a jar:\n%s\n%s", before.Identity(), touched.Identity())
	}
	writeZip(t, j("lib/b.jar"), nil, zip.Deflate, "", "p/X.class", "y from b", "p/M.class", "m", "META-INF/versions/11/p/M.class", "m11")
	os.Chtimes(j("lib/b.jar"), later, later)
	again := NewClassPath(strings.Join([]string{j("a.jar"), j("d.jar")}, ":"), ":")
	defer again.Close()
	if again.Identity() == before.Identity() {
		t.Error("identity unchanged after a Class-Path jar's class changed")
	}
}

// TestClassPathSymlinks: as the JDK, a class path entry is made canonical before its
// Class-Path is resolved, so a linked jar's relative Class-Path names the jars beside its
// target; a Class-Path entry ending in a slash is a directory to the loader and ends the
// search; file://localhost/ is a local file.
func TestClassPathSymlinks(t *testing.T) {
	dir := t.TempDir()
	j := func(n string) string { return filepath.Join(dir, n) }
	writeZip(t, j("build/app.jar"), nil, zip.Deflate, "", manifestName, "Manifest-Version: 1.0\nClass-Path: lib/dep.jar\n", "p/A.class", "a")
	writeZip(t, j("build/lib/dep.jar"), nil, zip.Deflate, "", "p/D.class", "from build")
	writeZip(t, j("run/lib/dep.jar"), nil, zip.Deflate, "", "p/D.class", "beside the link")
	if err := os.Symlink(j("build/app.jar"), j("run/app.jar")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	cp := NewClassPath(j("run/app.jar"), ":")
	defer cp.Close()
	if data, ok := cp.Lookup("p/D"); !ok || string(data) != "from build" {
		t.Errorf("p/D through a linked jar: %q, %v; want the one beside the link's target", data, ok)
	}

	writeZip(t, j("slash.jar"), nil, zip.Deflate, "", manifestName, "Manifest-Version: 1.0\nClass-Path: dir.jar/ file://localhost"+filepath.ToSlash(j("build/lib/dep.jar"))+"\n", "p/S.class", "s")
	writeZip(t, j("dir.jar"), nil, zip.Deflate, "", "p/Q.class", "q")
	cp2 := NewClassPath(j("slash.jar")+":"+j("build/lib/dep.jar"), ":")
	defer cp2.Close()
	if _, ok := cp2.Lookup("p/Q"); ok {
		t.Error("p/Q found in a jar named with a trailing slash, a directory to the loader")
	}
	if _, ok := cp2.Lookup("p/D"); ok {
		t.Error("p/D found after the directory that ends the search")
	}
	if got, _ := manifestClassPath("/x/a.jar", []byte("Class-Path: file://localhost/opt/l.jar file://elsewhere/opt/m.jar\n")); strings.Join(got, " ") != "/opt/l.jar" {
		t.Errorf("file URLs with hosts: %q, want the localhost one only", got)
	}
}

// TestClassPathUnreadableJar: a jar whose entries cannot be read ends what is found; the jars
// before it still count.
func TestClassPathUnreadableJar(t *testing.T) {
	dir := t.TempDir()
	writeZip(t, filepath.Join(dir, "a.jar"), nil, zip.Deflate, "", "p/A.class", "a")
	os.WriteFile(filepath.Join(dir, "bad.jar"), []byte("PK\x03\x04 not really"), 0o644)
	writeZip(t, filepath.Join(dir, "c.jar"), nil, zip.Deflate, "", "p/C.class", "c")
	cp := NewClassPath(filepath.Join(dir, "a.jar")+":"+filepath.Join(dir, "bad.jar")+":"+filepath.Join(dir, "c.jar"), ":")
	defer cp.Close()
	if _, ok := cp.Lookup("p/A"); !ok {
		t.Error("p/A not found")
	}
	if _, ok := cp.Lookup("p/C"); ok {
		t.Error("p/C found after an unreadable jar")
	}
}

// FuzzReadManifest: on any bytes the fast manifest reader never panics, and when it reads a
// manifest where archive/zip reads the archive and its manifest, the two agree.
func FuzzReadManifest(f *testing.F) {
	for i, method := range []uint16{zip.Store, zip.Deflate} {
		var b bytes.Buffer
		w := zip.NewWriter(&b)
		for _, n := range []string{"a/A.class", manifestName} {
			fw, _ := w.CreateHeader(&zip.FileHeader{Name: n, Method: method})
			fw.Write([]byte("Manifest-Version: 1.0\nClass-Path: x.jar\n"))
		}
		w.SetComment(strings.Repeat("c", i*7))
		w.Close()
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, _, err := manifestFast(bytes.NewReader(data), int64(len(data)))
		zr, zerr := zip.NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil || zerr != nil {
			return
		}
		for _, zf := range zr.File {
			if zf.Name != manifestName {
				continue
			}
			rc, oerr := zf.Open()
			if oerr != nil {
				return
			}
			var want bytes.Buffer
			_, rerr := want.ReadFrom(rc)
			rc.Close()
			if rerr == nil && !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("manifestFast %q, archive/zip %q", got, want.Bytes())
			}
			return
		}
	})
}

// TestClassPathSkipsClassFiles: a class file given as an entry is skipped, as the JDK's loader
// skips what it cannot open as a jar; the search goes on.
func TestClassPathSkipsClassFiles(t *testing.T) {
	dir := t.TempDir()
	class := filepath.Join(dir, "A.class")
	if err := os.WriteFile(class, []byte("\xca\xfe\xba\xbe\x00\x00\x00\x34"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeZip(t, filepath.Join(dir, "b.jar"), nil, zip.Deflate, "", "p/B.class", "b")
	cp := NewClassPath(class+":"+filepath.Join(dir, "b.jar"), ":")
	defer cp.Close()
	if jars, err := cp.Jars(); err != nil || len(jars) != 1 || jars[0] != filepath.Join(dir, "b.jar") {
		t.Errorf("jars %q, %v; want b.jar alone", jars, err)
	}
	if data, ok := cp.Lookup("p/B"); !ok || string(data) != "b" {
		t.Errorf("p/B: %q, %v", data, ok)
	}
}

// TestReadManifestOtherCase: as the JDK's JarFile, a manifest named in another case is the
// jar's manifest when none has the exact name, and the exact name wins over it.
func TestReadManifestOtherCase(t *testing.T) {
	dir := t.TempDir()
	lower := filepath.Join(dir, "lower.jar")
	writeZip(t, lower, nil, zip.Deflate, "", "meta-inf/manifest.mf", "Class-Path: x.jar\n", "p/A.class", "a")
	if got, err := readManifest(lower); err != nil || string(got) != "Class-Path: x.jar\n" {
		t.Errorf("lower-case manifest: %q, %v", got, err)
	}
	both := filepath.Join(dir, "both.jar")
	writeZip(t, both, nil, zip.Store, "", "Meta-Inf/Manifest.MF", "Class-Path: other.jar\n", manifestName, "Class-Path: exact.jar\n")
	if got, err := readManifest(both); err != nil || string(got) != "Class-Path: exact.jar\n" {
		t.Errorf("both names: %q, %v; want the exact name's", got, err)
	}
}
