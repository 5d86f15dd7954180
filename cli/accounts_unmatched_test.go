package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Account patterns that match no class were accepted silently, and everything landed in
// <unaccounted> (issue 37): each such pattern is warned about, with a hint for a class named as
// a package and for a package holding only subpackages; a list naming no account is refused.
func TestAccountPatternsThatMatchNothing(t *testing.T) {
	needJDK(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "src", "com", "acme", "app")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "Main.java"), []byte("package com.acme.app; public class Main { public static void main(String[] a) { System.out.println(new StringBuilder(\"x\")); } }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	classes := filepath.Join(dir, "classes")
	if b, err := exec.Command("javac", "-d", classes, filepath.Join(src, "Main.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	_, stderr, err := runCLI(t, "rewrite", "--accounts", "com.acmee.*,com.acme.app.Main,com.acme,com.acme.app", classes, "-o", filepath.Join(dir, "out"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{
		"warning: account pattern com.acmee.* matched no class of the input, so its account stays empty\n",
		"warning: account pattern com.acme.app.Main matched no class of the input, so its account stays empty (com.acme.app.Main is a class, and patterns name packages: its package is com.acme.app)\n",
		"warning: account pattern com.acme matched no class of the input, so its account stays empty (com.acme holds no classes of its own, only subpackages: com.acme.* takes them in)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "pattern com.acme.app matched") {
		t.Errorf("a pattern that matched was warned about:\n%s", stderr)
	}
	for _, list := range []string{"", ",", " , "} {
		_, _, err := runCLI(t, "rewrite", "--accounts", list, classes, "-o", filepath.Join(dir, "empty"))
		if err == nil || !strings.Contains(err.Error(), "names no account") {
			t.Errorf("--accounts %q: %v", list, err)
		}
	}
}
