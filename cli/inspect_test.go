package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/javap"
)

// needTool skips a test whose external tool or file is missing, except in CI, where that would
// silently drop a real check.
func needTool(t *testing.T, what string, ok bool) {
	t.Helper()
	testenv.Check(t, ok, what)
}

const asmJar = "/usr/share/java/asm.jar"

// methodFacts are what javap -v and inspect must agree on for each method, in class file order.
type methodFacts struct {
	desc          string
	stack, locals string
	lastInsn      string
	exceptions    []string
}

var (
	javapDesc   = regexp.MustCompile(`^    descriptor: (\S+)$`)
	javapStack  = regexp.MustCompile(`^      stack=(\d+), locals=(\d+),`)
	javapInsn   = regexp.MustCompile(`^ +(\d+): [a-z]`)
	javapExc    = regexp.MustCompile(`^ +(\d+) +(\d+) +(\d+) +(any|Class \S+)$`)
	ourMethod   = regexp.MustCompile(`^  (\S+\(\S*\)\S+)$`)
	ourCode     = regexp.MustCompile(`^    Code: max_stack=(\d+) max_locals=(\d+) code_length=(\d+)`)
	ourInsn     = regexp.MustCompile(`^ {6}[ \d]{4}(\d): `)
	ourExc      = regexp.MustCompile(`^ +(\d+) +(\d+) +(\d+)  (any|Class \S+)$`)
	ourMethods  = regexp.MustCompile(`^Methods \(`)
	ourAttrsEnd = regexp.MustCompile(`^Class attributes`)
)

func javapFacts(t *testing.T, out string) []methodFacts {
	var ms []methodFacts
	inMethods := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "{") {
			inMethods = true
		}
		if !inMethods {
			continue
		}
		switch {
		case javapDesc.MatchString(l):
			d := javapDesc.FindStringSubmatch(l)[1]
			if strings.HasPrefix(d, "(") {
				ms = append(ms, methodFacts{desc: d})
			} else {
				ms = append(ms, methodFacts{desc: "field"})
			}
		case len(ms) == 0:
		case javapStack.MatchString(l):
			m := javapStack.FindStringSubmatch(l)
			ms[len(ms)-1].stack, ms[len(ms)-1].locals = m[1], m[2]
		case javapExc.MatchString(l):
			m := javapExc.FindStringSubmatch(l)
			ms[len(ms)-1].exceptions = append(ms[len(ms)-1].exceptions, strings.Join(m[1:], " "))
		case javapInsn.MatchString(l):
			ms[len(ms)-1].lastInsn = javapInsn.FindStringSubmatch(l)[1]
		}
	}
	var methods []methodFacts
	for _, m := range ms {
		if m.desc != "field" {
			methods = append(methods, m)
		}
	}
	return methods
}

func inspectFacts(t *testing.T, out string) (ms []methodFacts, codeLens []string) {
	inMethods := false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case ourMethods.MatchString(l):
			inMethods = true
		case ourAttrsEnd.MatchString(l):
			inMethods = false
		case !inMethods:
		case ourMethod.MatchString(l):
			name := ourMethod.FindStringSubmatch(l)[1]
			ms = append(ms, methodFacts{desc: name[strings.IndexByte(name, '('):]})
			codeLens = append(codeLens, "")
		case len(ms) == 0:
		case ourCode.MatchString(l):
			m := ourCode.FindStringSubmatch(l)
			ms[len(ms)-1].stack, ms[len(ms)-1].locals = m[1], m[2]
			codeLens[len(codeLens)-1] = m[3]
		case ourExc.MatchString(l):
			m := ourExc.FindStringSubmatch(l)
			ms[len(ms)-1].exceptions = append(ms[len(ms)-1].exceptions, strings.Join(m[1:], " "))
		case ourInsn.MatchString(l):
			ms[len(ms)-1].lastInsn = strings.TrimSpace(l[:strings.IndexByte(l, ':')])
		}
	}
	return ms, codeLens
}

// TestInspectAgreesWithJavap compares inspect --code with javap -v -p on a real class: method
// order and descriptors, max_stack, max_locals, the offset of the last instruction and every
// exception table row.
func TestInspectAgreesWithJavap(t *testing.T) {
	_, err := os.Stat(asmJar)
	needTool(t, asmJar, err == nil)
	javap, err := exec.LookPath("javap")
	needTool(t, "javap", err == nil)

	for _, class := range []string{"org.objectweb.asm.ClassReader", "org.objectweb.asm.Frame"} {
		jv, err := exec.Command(javap, "-v", "-p", "-cp", asmJar, class).Output()
		if err != nil {
			t.Fatalf("javap %s: %v", class, err)
		}
		want := javapFacts(t, string(jv))
		out, _, err := runCLI(t, "inspect", "--code", "--no-pool", asmJar+"!"+class)
		if err != nil {
			t.Fatalf("inspect %s: %v", class, err)
		}
		got, codeLens := inspectFacts(t, out)
		if len(want) < 10 || len(got) != len(want) {
			t.Fatalf("%s: inspect lists %d methods, javap %d", class, len(got), len(want))
		}
		rows := 0
		for i := range want {
			w, g := want[i], got[i]
			if g.desc != w.desc || g.stack != w.stack || g.locals != w.locals || g.lastInsn != w.lastInsn ||
				strings.Join(g.exceptions, "|") != strings.Join(w.exceptions, "|") {
				t.Errorf("%s method %d:\n inspect %+v\n javap   %+v", class, i, g, w)
			}
			last, _ := strconv.Atoi(w.lastInsn)
			if n, err := strconv.Atoi(codeLens[i]); w.lastInsn != "" && (err != nil || n <= last) {
				t.Errorf("%s method %s: code_length %s not beyond last instruction %s", class, g.desc, codeLens[i], w.lastInsn)
			}
			rows += len(w.exceptions)
		}
		t.Logf("%s: %d methods and %d exception table rows agree with javap", class, len(want), rows)
		if class == "org.objectweb.asm.ClassReader" && rows == 0 {
			t.Errorf("%s: no exception table rows compared", class)
		}
	}
}

func TestInspectPoolFlagsAndListing(t *testing.T) {
	_, err := os.Stat(asmJar)
	needTool(t, asmJar, err == nil)

	out, _, err := runCLI(t, "inspect", asmJar)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "org/objectweb/asm/ClassReader.class  (version ") || !regexp.MustCompile(`\n\d+ classes, \d+ other entries in `).MatchString(out) {
		t.Errorf("jar listing:\n%s", out)
	}

	out, _, err = runCLI(t, "inspect", "--method", "readByte", asmJar+"!org/objectweb/asm/ClassReader.class")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"class org/objectweb/asm/ClassReader\n", "Constant pool (", "= Utf8               \"readByte\"", "Methods (1 of ", "  readByte(I)I\n", "    Code: max_stack="} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%.2000s", want, out)
		}
	}
	out, _, err = runCLI(t, "inspect", asmJar+"!org.objectweb.asm.ClassReader", "--no-pool")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "Constant pool") || !strings.Contains(out, "super_class: #") {
		t.Errorf("--no-pool output:\n%.1000s", out)
	}
}

func TestInspectErrorsNameTheirSubject(t *testing.T) {
	dir := t.TempDir()
	notClass := filepath.Join(dir, "x.class")
	if err := os.WriteFile(notClass, []byte("hello, world"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "inspect", "a.class", "b.class"); err == nil || !strings.Contains(err.Error(), "got 2 arguments") {
		t.Errorf("two arguments: %v", err)
	}
	cases := [][]string{
		{filepath.Join(dir, "missing.class"), "missing.class: no such file or directory"},
		{filepath.Join(dir, "missing.jar") + "!a/B.class", "missing.jar: no such file or directory"},
		{notClass, "x.class: classfile: offset 0: magic: bad magic"},
	}
	if _, err := os.Stat(asmJar); err == nil {
		cases = append(cases,
			[]string{asmJar + "!org/objectweb/asm/NoSuch.class", "asm.jar!org/objectweb/asm/NoSuch.class: no such entry"},
			[]string{asmJar + "!org/objectweb/ClassReader", "(did you mean org/objectweb/asm/ClassReader.class?)"})
	}
	for _, c := range cases {
		_, _, err := runCLI(t, "inspect", c[0])
		if err == nil || !strings.Contains(err.Error(), c[1]) {
			t.Errorf("inspect %s: got %v, want an error containing %q", c[0], err, c[1])
		}
	}
	if _, err := os.Stat(asmJar); err == nil {
		_, _, err := runCLI(t, "inspect", "--method", "nope", asmJar+"!org/objectweb/asm/ClassReader.class")
		if err == nil || !strings.Contains(err.Error(), `class org/objectweb/asm/ClassReader has no method named "nope"`) {
			t.Errorf("--method nope: %v", err)
		}
	}
}

// openAsmJar opens Debian's asm.jar, skipping outside CI when it is not installed.
func openAsmJar(t *testing.T) *jar.Input {
	t.Helper()
	_, err := os.Stat(asmJar)
	needTool(t, asmJar, err == nil)
	in, err := jar.OpenInput(asmJar)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func TestInspectDirectory(t *testing.T) {
	in := openAsmJar(t)
	defer in.Close()
	e, err := findEntry(in, "org/objectweb/asm/Label.class")
	if err != nil {
		t.Fatal(err)
	}
	data, err := e.ReadAll(jar.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "org", "objectweb", "asm", "Label.class")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "inspect", dir)
	if err != nil || !strings.Contains(out, "org/objectweb/asm/Label.class  (version ") || !strings.Contains(out, "1 classes, 0 other entries") {
		t.Fatalf("directory listing: %v\n%s", err, out)
	}
	for _, arg := range []string{dir + "!org.objectweb.asm.Label", filepath.Join(dir, "org/objectweb/asm/Label.class")} {
		out, _, err = runCLI(t, "inspect", "--code", arg)
		if err != nil || !strings.Contains(out, "class org/objectweb/asm/Label\n") || !strings.Contains(out, "StackMapTable: ") {
			t.Errorf("inspect %s: %v\n%.1500s", arg, err, out)
		}
	}
}

// TestInspectEveryClassOfAJar prints every class of a real jar with code and frames: no method
// may fail to decode, and every frame table must be shown.
func TestInspectEveryClassOfAJar(t *testing.T) {
	in := openAsmJar(t)
	defer in.Close()
	classes := 0
	for _, e := range in.Entries {
		if !strings.HasSuffix(e.Name, ".class") {
			continue
		}
		data, err := e.ReadAll(jar.DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		if err := printClass(&sb, e.String(), data, javap.Options{Pool: true, Code: true}); err != nil {
			t.Errorf("%s: %v", e, err)
			continue
		}
		if i := inspectErrorAt(sb.String()); i >= 0 {
			t.Errorf("%s: %s", e, sb.String()[i:min(len(sb.String()), i+300)])
		}
		classes++
	}
	if classes < 30 {
		t.Errorf("only %d classes in %s", classes, asmJar)
	}
}

// inspectErrorAt finds the first problem printClass reported inside its output (a method whose
// code or frames could not be decoded), or -1.
func inspectErrorAt(out string) int {
	for _, marker := range []string{"\n    error: ", "StackMapTable: error: "} {
		if i := strings.Index(out, marker); i >= 0 {
			return i
		}
	}
	return -1
}
