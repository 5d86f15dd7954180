package jar

import (
	"archive/zip"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/transform"
)

func TestIsSignatureFile(t *testing.T) {
	for name, want := range map[string]bool{
		"META-INF/MYKEY.SF": true, "META-INF/mykey.rsa": true, "META-INF/A.DSA": true, "META-INF/B.EC": true,
		"META-INF/SIG-FOO": true, "META-INF/MANIFEST.MF": false, "META-INF/sub/X.SF": false, "X.SF": false,
		"META-INF/services/a.RSA": false,
	} {
		if got := isSignatureFile(name); got != want {
			t.Errorf("isSignatureFile(%q) = %v", name, got)
		}
	}
}

func TestStripDigests(t *testing.T) {
	mf := "Manifest-Version: 1.0\r\nCreated-By: 17 (Test)\r\n\r\n" +
		"Name: a/A.class\r\nSHA-256-Digest: AAAA\r\n\r\n" +
		"Name: a/B.class\r\nSHA-256-Digest: BBBB\r\n\r\n" +
		"Name: a/very/long/package/name/that/needs/a/continuation/line/Clas\r\n s.class\r\nSHA-256-Digest: CCCC\r\nX-Keep: yes\r\n\r\n"
	changed := map[string]bool{"a/A.class": true, "a/very/long/package/name/that/needs/a/continuation/line/Class.class": true}
	got, n := stripDigests([]byte(mf), func(e string) bool { return changed[e] })
	want := "Manifest-Version: 1.0\r\nCreated-By: 17 (Test)\r\n\r\n" +
		"Name: a/B.class\r\nSHA-256-Digest: BBBB\r\n\r\n" +
		"Name: a/very/long/package/name/that/needs/a/continuation/line/Clas\r\n s.class\r\nX-Keep: yes\r\n\r\n"
	if string(got) != want || n != 2 {
		t.Errorf("edited %d sections, got\n%q\nwant\n%q", n, got, want)
	}
	if got, n := stripDigests([]byte(mf), func(string) bool { return false }); string(got) != mf || n != 0 {
		t.Errorf("manifest changed with nothing to strip: %q", got)
	}
}

func TestSignedJarLosesSignatureAndStaleDigests(t *testing.T) {
	dir := t.TempDir()
	mf := "Manifest-Version: 1.0\r\n\r\nName: A.class\r\nSHA-256-Digest: AAAA\r\n\r\nName: r.txt\r\nSHA-256-Digest: RRRR\r\n\r\n"
	in := makeJar(t, dir, "signed.jar", []testEntry{
		{name: "META-INF/MANIFEST.MF", data: []byte(mf), method: zip.Deflate},
		{name: "META-INF/KEY.SF", data: []byte("Signature-Version: 1.0\r\n\r\n"), method: zip.Deflate},
		{name: "META-INF/KEY.RSA", data: []byte{1, 2, 3}, method: zip.Deflate},
		{name: "A.class", data: fakeClass("A"), method: zip.Deflate},
		{name: "r.txt", data: []byte("r"), method: zip.Deflate},
	}, "")
	out := filepath.Join(dir, "out.jar")
	rep, err := Rewrite([]string{in}, out, transform.Func(func(n string, d []byte) (transform.Result, error) {
		return transform.Result{Data: append(d, '!')}, nil
	}), Options{})
	if err != nil {
		t.Fatal(err)
	}
	zr := readZip(t, out)
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, " "); got != "META-INF/MANIFEST.MF A.class r.txt" {
		t.Errorf("entries %s", got)
	}
	if got := string(contents(t, zr.File[0])); got != "Manifest-Version: 1.0\r\n\r\nName: r.txt\r\nSHA-256-Digest: RRRR\r\n\r\n" {
		t.Errorf("manifest %q", got)
	}
	if len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "META-INF/KEY.SF") || !strings.Contains(rep.Warnings[0], "META-INF/KEY.RSA") {
		t.Errorf("warnings %q", rep.Warnings)
	}
}

func TestSummaryCountsReasonsBeyondTheFirstFew(t *testing.T) {
	rep := &Report{Classes: 1, Unchanged: 1, SkippedMethods: 9, SkipReasons: map[string]int{}}
	for i := 0; i < 7; i++ {
		rep.SkipReasons[fmt.Sprintf("reason %d", i)] = 1
	}
	rep.SkipReasons["reason 0"] = 3
	got := rep.Summary()
	want := "1 classes: 0 rewritten, 1 unchanged, 0 failed; 9 methods skipped (reason 0: 3; reason 1: 1; reason 2: 1; reason 3: 1; reason 4: 1; 2 more methods for 2 other reasons); 0 entries written"
	if got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
	// Whole classes left alone are counted as classes, not as methods.
	rep = &Report{Classes: 3, Unchanged: 3, SkipReasons: map[string]int{}, SkippedClasses: 3, ClassReasons: map[string]int{"module-info is never rewritten": 1, "already rewritten by heapledger": 2}}
	got = rep.Summary()
	want = "3 classes: 0 rewritten, 3 unchanged, 0 failed; 0 methods skipped; 3 classes skipped (already rewritten by heapledger: 2; module-info is never rewritten: 1); 0 entries written"
	if got != want {
		t.Errorf("summary\n%s\nwant\n%s", got, want)
	}
}
