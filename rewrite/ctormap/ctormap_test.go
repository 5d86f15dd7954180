package ctormap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// build compiles testdata with the given tool into a fresh directory and returns it.
func build(t *testing.T, tool string, args ...string) string {
	t.Helper()
	bin := testenv.Tool(t, tool)
	out := t.TempDir()
	cmd := exec.Command(bin, append([]string{"-d", out}, args...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, b)
	}
	return out
}

var jasmin struct {
	once sync.Once
	dir  string
	err  error
}

// jasminClasses assembles every testdata/*.j once for all tests: one JVM start instead of one a
// test.
func jasminClasses(t *testing.T) string {
	t.Helper()
	bin := testenv.Tool(t, "jasmin")
	jasmin.once.Do(func() {
		srcs, _ := filepath.Glob("testdata/*.j")
		jasmin.dir, jasmin.err = os.MkdirTemp("", "ctormap-jasmin")
		if jasmin.err != nil {
			return
		}
		out, err := exec.Command(bin, append([]string{"-d", jasmin.dir}, srcs...)...).CombinedOutput()
		if err != nil {
			jasmin.err = fmt.Errorf("jasmin: %v\n%s", err, out)
		}
	})
	if jasmin.err != nil {
		t.Fatal(jasmin.err)
	}
	return jasmin.dir
}

func TestMain(m *testing.M) {
	rc := m.Run()
	if jasmin.dir != "" {
		os.RemoveAll(jasmin.dir)
	}
	os.Exit(rc)
}

func loadClass(t *testing.T, path string) *classfile.Class {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := classfile.Parse(data)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return c
}

// analyzeAll analyses every method of a class, by name+descriptor.
func analyzeAll(t *testing.T, c *classfile.Class) (map[string]*Analysis, map[string]*code.Body) {
	t.Helper()
	as, bs := map[string]*Analysis{}, map[string]*code.Body{}
	for _, m := range c.Methods {
		b, err := DecodeMethod(c, m)
		if err != nil {
			t.Fatal(err)
		}
		if b == nil {
			continue
		}
		a, err := Analyze(b)
		if err != nil {
			t.Fatal(err)
		}
		key := b.Method.Name + b.Method.Desc
		as[key], bs[key] = a, b
	}
	return as, bs
}

func targets(a *Analysis) string {
	var s []string
	for _, t := range a.Targets {
		s = append(s, t.String())
	}
	return strings.Join(s, "; ")
}

func inits(n NewSite) string {
	var s []string
	for _, c := range n.Inits {
		s = append(s, c.Owner+".<init>"+c.Desc)
	}
	return n.Class + " -> " + strings.Join(s, ",")
}

func nextInsn(n *code.Insn) *code.Insn {
	for n = n.Next(); n != nil && n.IsLabel(); n = n.Next() {
	}
	return n
}

// firstOp returns the first instruction with opcode op.
func firstOp(b *code.Body, op code.Opcode) *code.Insn {
	for n := b.First(); n != nil; n = n.Next() {
		if n.Op == op {
			return n
		}
	}
	return nil
}

func TestFigure1AndAppendixA(t *testing.T) {
	dir := jasminClasses(t)
	as, bs := analyzeAll(t, loadClass(t, filepath.Join(dir, "CtorChain.class")))

	a := as["<init>()V"]
	if got := targets(a); got != "CtorChain.<init>(Ljava/lang/Object;)V (alternate)" || a.Warning != "" {
		t.Errorf("A(): targets %q, warning %q", got, a.Warning)
	}
	if len(a.News) != 1 || inits(a.News[0]) != "java/lang/Object -> java/lang/Object.<init>()V" {
		t.Errorf("A(): news %+v", a.News)
	}
	// Object.<init> on the new object comes first but is not the constructor's own call.
	if len(a.Calls) != 1 || a.Calls[0].Insn.Offset != 8 {
		t.Errorf("A(): calls %+v", a.Calls)
	}
	b := bs["<init>()V"]
	ret := firstOp(b, code.RETURN)
	if !a.ThisInitialized(ret) || a.ThisInitialized(b.First()) || a.ThisInitialized(a.Calls[0].Insn) {
		t.Errorf("A(): this initialized at return %v, at start %v, at the call %v", a.ThisInitialized(ret), a.ThisInitialized(b.First()), a.ThisInitialized(a.Calls[0].Insn))
	}
	if runs := a.Coverable(b); len(runs) != 1 || runs[0][0] != ret || runs[0][1] != ret {
		t.Errorf("A(): coverable %v", runs)
	}

	if got := targets(as["<init>(Ljava/lang/Object;)V"]); got != "java/lang/Object.<init>()V (superclass)" {
		t.Errorf("A(Object): %q", got)
	}
	sub := as["<init>(I)V"]
	if got := targets(sub); got != "java/lang/Object.<init>()V (superclass)" {
		t.Errorf("A(int) with jsr: %q", got)
	}
	for n := bs["<init>(I)V"].First(); n != nil; n = n.Next() {
		if !n.IsLabel() && n.Offset > 3 && !sub.ThisInitialized(n) {
			t.Errorf("A(int): this not initialized at %s (offset %d), inside or after the subroutine", n, n.Offset)
		}
	}

	ab := as["abandon()V"]
	if ab.IsConstructor || len(ab.News) != 1 || len(ab.News[0].Inits) != 0 {
		t.Errorf("abandon(): %+v", ab)
	}
}

func TestAppendixBDifferentConstructors(t *testing.T) {
	dir := jasminClasses(t)
	as, _ := analyzeAll(t, loadClass(t, filepath.Join(dir, "DifferentConstructors.class")))
	a := as["<init>(Z)V"]
	want := "DifferentConstructors.<init>()V (alternate); java/lang/Object.<init>()V (superclass)"
	if got := targets(a); got != want {
		t.Errorf("targets %q, want %q", got, want)
	}
	if !strings.Contains(a.Warning, "different constructors on different paths") || !strings.Contains(a.Warning, "(alternate) at offset 5") || !strings.Contains(a.Warning, "(superclass) at offset 9") {
		t.Errorf("warning %q", a.Warning)
	}
	if w := as["<init>()V"].Warning; w != "" {
		t.Errorf("plain constructor warned: %q", w)
	}
}

func TestJavac17(t *testing.T) {
	dir := build(t, "javac", "--release", "17", "-nowarn", "testdata/java17/Ctors.java")
	as, bs := analyzeAll(t, loadClass(t, filepath.Join(dir, "Ctors.class")))
	cases := map[string]string{
		"<init>(I)V":                "java/util/ArrayList.<init>(I)V (superclass)",
		"<init>()V":                 "Ctors.<init>(I)V (alternate)",
		"<init>(Ljava/util/List;)V": "java/util/ArrayList.<init>(Ljava/util/Collection;)V (superclass)",
	}
	for m, want := range cases {
		if got := targets(as[m]); got != want || as[m].Warning != "" {
			t.Errorf("%s: %q (warning %q), want %q", m, got, as[m].Warning, want)
		}
	}
	// The conditional in super(...) branches and allocates while `this` is uninitialized.
	a, b := as["<init>(I)V"], bs["<init>(I)V"]
	if len(a.News) != 1 || inits(a.News[0]) != "java/lang/Integer -> java/lang/Integer.<init>(I)V" {
		t.Errorf("Ctors(int) news: %+v", a.News)
	}
	if a.ThisInitialized(a.News[0].New) {
		t.Error("Ctors(int): this initialized at the new inside super(...)")
	}
	if runs := a.Coverable(b); len(runs) != 1 || runs[0][0] != nextInsn(a.Calls[0].Insn) {
		t.Errorf("Ctors(int): coverable runs %v should start right after super()", runs)
	}
	// The try block after super() is coverable; its handler allocates.
	l := as["<init>(Ljava/util/List;)V"]
	if len(l.News) != 1 || inits(l.News[0]) != "java/lang/IllegalStateException -> java/lang/IllegalStateException.<init>(Ljava/lang/Throwable;)V" {
		t.Errorf("Ctors(List) news: %+v", l.News)
	}
	mk := as["make(Z)Ljava/lang/Object;"]
	var got []string
	for _, n := range mk.News {
		got = append(got, inits(n))
	}
	want := []string{
		"Ctors -> Ctors.<init>(Ljava/util/List;)V",
		"java/util/ArrayList -> java/util/ArrayList.<init>(Ljava/util/Collection;)V",
		"java/lang/StringBuilder -> java/lang/StringBuilder.<init>(Ljava/lang/String;)V",
		"java/lang/String -> java/lang/String.<init>(Ljava/lang/String;)V",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("make news:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	inner, ib := analyzeAll(t, loadClass(t, filepath.Join(dir, "Ctors$Inner.class")))
	ia := inner["<init>(LCtors;)V"]
	if got := targets(ia); got != "java/lang/Object.<init>()V (superclass)" {
		t.Errorf("Inner: %q", got)
	}
	// javac stores the outer instance before super().
	put := firstOp(ib["<init>(LCtors;)V"], code.PUTFIELD)
	if put == nil || ia.ThisInitialized(put) || put.Offset >= ia.Calls[0].Insn.Offset {
		t.Errorf("Inner: the outer-this store should come before super() with this uninitialized")
	}
}

func TestJava25StatementsBeforeSuper(t *testing.T) {
	javac := filepath.Join(fixtures.JDK25Home(), "bin", "javac")
	dir := build(t, javac, "--release", "25", "testdata/java25/Prologue.java")
	as, bs := analyzeAll(t, loadClass(t, filepath.Join(dir, "Prologue.class")))
	a, b := as["<init>(I)V"], bs["<init>(I)V"]
	if got := targets(a); got != "Base.<init>(I)V (superclass)" || a.Warning != "" {
		t.Errorf("Prologue(int): %q %q", got, a.Warning)
	}
	if len(a.News) != 1 || inits(a.News[0]) != "java/lang/IllegalArgumentException -> java/lang/IllegalArgumentException.<init>()V" {
		t.Errorf("Prologue(int) news: %+v", a.News)
	}
	// The loop, the field store and the throw all run before super(): none may be covered.
	runs := a.Coverable(b)
	if len(runs) != 1 || runs[0][0].Op != code.RETURN || runs[0][1].Op != code.RETURN {
		t.Errorf("Prologue(int): coverable %v, want only the return", runs)
	}
	if got := targets(as["<init>(Ljava/lang/String;)V"]); got != "Prologue.<init>(I)V (alternate)" {
		t.Errorf("Prologue(String): %q", got)
	}
}

func TestKotlinAndScalaPrologues(t *testing.T) {
	dir := jasminClasses(t)
	as, bs := analyzeAll(t, loadClass(t, filepath.Join(dir, "Prologues.class")))

	k, kb := as["<init>(Ljava/lang/String;)V"], bs["<init>(Ljava/lang/String;)V"]
	if got := targets(k); got != "java/lang/Object.<init>()V (superclass)" || k.Warning != "" {
		t.Errorf("Kotlin-style: %q %q", got, k.Warning)
	}
	if put := firstOp(kb, code.PUTFIELD); k.ThisInitialized(put) {
		t.Error("Kotlin-style: this initialized at the field store before super()")
	}

	s, sb := as["<init>(Ljava/lang/String;Z)V"], bs["<init>(Ljava/lang/String;Z)V"]
	if got := targets(s); got != "java/lang/Object.<init>()V (superclass)" || s.Warning != "" {
		t.Errorf("Scala-style: %q %q (one target on two paths is no warning)", got, s.Warning)
	}
	if len(s.Calls) != 2 {
		t.Errorf("Scala-style: %d super() calls found, want one per path", len(s.Calls))
	}
	if len(s.News) != 1 || inits(s.News[0]) != "java/lang/NullPointerException -> java/lang/NullPointerException.<init>()V" {
		t.Errorf("Scala-style news: %+v", s.News)
	}
	// The goto after the first super() and the final return are after super() on every path;
	// the second path's call is not.
	var runs []string
	for _, r := range s.Coverable(sb) {
		runs = append(runs, fmt.Sprintf("%d-%d", r[0].Offset, r[1].Offset))
	}
	if got := strings.Join(runs, " "); got != "25-25 32-32" {
		t.Errorf("Scala-style coverable runs %q, want the goto and the return", got)
	}
}
