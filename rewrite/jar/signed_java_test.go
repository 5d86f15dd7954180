package jar

import (
	"archive/zip"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/transform"
)

func runTool(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testenv.Tool(t, name), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// shout is a pass that changes a class the JVM will notice: the string constant "hello" (same
// length, so the constant pool stays valid) becomes "HELLO".
var shout = transform.Func(func(name string, data []byte) (transform.Result, error) {
	if !bytes.Contains(data, []byte("hello")) {
		return transform.Result{}, nil
	}
	return transform.Result{Data: bytes.ReplaceAll(data, []byte("hello"), []byte("HELLO"))}, nil
})

// TestSignedJarRunsAfterRewrite signs a jar with jarsigner, rewrites a class of it and runs it:
// the JDK accepts the output only because the signature was removed. The control (the same change
// with the signature kept) must be refused, or this test proves nothing.
func TestSignedJarRunsAfterRewrite(t *testing.T) {
	testenv.Tool(t, "java")
	dir := t.TempDir()
	src := "public class Hello { public static void main(String[] a) { System.out.println(\"hello\"); } }\n"
	if err := os.WriteFile(filepath.Join(dir, "Hello.java"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	runTool(t, dir, "javac", "--release", "8", "-d", "classes", "Hello.java")
	runTool(t, dir, "jar", "--create", "--file", "signed.jar", "-C", "classes", ".")
	runTool(t, dir, "keytool", "-genkeypair", "-keystore", "ks.p12", "-storetype", "PKCS12", "-storepass", "secret1",
		"-keypass", "secret1", "-alias", "me", "-keyalg", "EC", "-dname", "CN=heapledger test", "-validity", "2")
	runTool(t, dir, "jarsigner", "-keystore", "ks.p12", "-storepass", "secret1", "signed.jar", "me")
	if out := runTool(t, dir, "java", "-cp", "signed.jar", "Hello"); strings.TrimSpace(out) != "hello" {
		t.Fatalf("signed original prints %q", out)
	}

	out := filepath.Join(dir, "out.jar")
	rep, err := Rewrite([]string{filepath.Join(dir, "signed.jar")}, out, shout, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rewritten != 1 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "META-INF/ME.SF") {
		t.Fatalf("report %+v", rep)
	}
	if got := runTool(t, dir, "java", "-cp", out, "Hello"); strings.TrimSpace(got) != "HELLO" {
		t.Errorf("rewritten signed jar prints %q, want HELLO", got)
	}

	// Control: the same class change with the signature kept.
	tampered := filepath.Join(dir, "tampered.jar")
	writeTampered(t, filepath.Join(dir, "signed.jar"), tampered)
	cmd := exec.Command("java", "-cp", tampered, "Hello")
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "SecurityException") {
		t.Fatalf("the JDK ran a signed jar with a changed class (err %v):\n%s", err, msg)
	}
}

func writeTampered(t *testing.T, in, out string) {
	zr, err := zip.OpenReader(in)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		if strings.HasSuffix(f.Name, ".class") {
			res, _ := shout(f.Name, data)
			data = res.Data
		}
		w, _ := zw.Create(f.Name)
		w.Write(data)
	}
	zw.Close()
	if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
