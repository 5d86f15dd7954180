// Package verify holds the Go test of the Java verification harness in src/ (Verify.java), which
// scripts/build-java.sh builds into build/verify.jar.
package verify

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/corpus"
)

// TestVerifyReportsEachOutcome builds a jar with one class of each outcome and checks that the
// harness tells them apart on JDK 17 and JDK 25 without initializing any class.
func TestVerifyReportsEachOutcome(t *testing.T) {
	tool := corpus.VerifyTool(t)
	javac := testenv.Tool(t, "javac")
	dir := t.TempDir()
	sources := map[string]string{
		"Good.java":   "public class Good { static int f() { return 12345; } }",
		"Bad.java":    "public class Bad { static int f() { return 23456; } }",
		"Init.java":   "public class Init { static { System.exit(42); } static void g() {} }",
		"Parent.java": "public class Parent {}",
		"Child.java":  "public class Child extends Parent {}",
		"MR.java":     "public class MR { static int h() { return 1; } }",
	}
	var files []string
	for name, src := range sources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, name)
	}
	cmd := exec.Command(javac, append([]string{"--release", "8", "-d", "classes"}, files...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	class := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, "classes", name+".class"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	// sipush 23456; ireturn → sipush 23456; areturn: an int returned as a reference.
	bad := class("Bad")
	if bytes.Count(bad, []byte{0x11, 0x5b, 0xa0, 0xac}) != 1 {
		t.Fatal("Bad.class: the code to patch is not where expected")
	}
	bad = bytes.Replace(bad, []byte{0x11, 0x5b, 0xa0, 0xac}, []byte{0x11, 0x5b, 0xa0, 0xb0}, 1)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	add("META-INF/MANIFEST.MF", []byte("Manifest-Version: 1.0\r\nMulti-Release: true\r\n\r\n"))
	add("Good.class", class("Good"))
	add("Bad.class", bad)
	add("Init.class", class("Init"))
	add("Child.class", class("Child")) // Parent left out: a missing dependency
	add("Broken.class", []byte("\xca\xfe\xba\xbe\x00\x00"))
	// The base MR is broken, the one for Java 9+ is fine: the JVM running the check sees the latter.
	add("MR.class", []byte("\xca\xfe\xba\xbe\x00\x00"))
	add("META-INF/versions/9/MR.class", class("MR"))
	add("META-INF/versions/99/Good.class", []byte("not for this Java"))
	add("module-info.class", []byte("not checked"))
	zw.Close()
	jar := filepath.Join(dir, "t.jar")
	if err := os.WriteFile(jar, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{"Good": "OK", "Bad": "VerifyError", "Init": "OK", "Child": "NoClassDefFoundError",
		"Broken": "ClassFormatError", "MR": "OK"}
	for _, java := range []string{testenv.Tool(t, "java"), corpus.Java25(t)} {
		got, err := corpus.Verify(java, tool, jar, nil, 2)
		if err != nil {
			t.Fatalf("%v (exit status 42 means a static initializer ran)", err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d classes reported, want %d: %v", java, len(got), len(want), got)
		}
		for name, status := range want {
			if got[name].Status != status {
				t.Errorf("%s: %s: %s (%s), want %s", java, name, got[name].Status, got[name].Message, status)
			}
		}
	}
}
