// Package corpus proves the rewriter on real jars: it lists the Debian jars of the corpus with
// their dependencies, runs tools/verify (HotSpot's own verifier, class by class) on a jar before
// and after rewriting, and compares the outcomes. Tests of other packages use its verifier and
// JDK 25; what they do when one is missing is internal/testenv's to decide.
package corpus

import (
	"archive/zip"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/heapledger/heapledger/internal/testenv"
)

// DebianJava is where Debian installs jars; relative names in the corpus list are resolved here.
const DebianJava = "/usr/share/java"

// JDK25 is the Temurin JDK 25 of the development and CI machines.
const JDK25 = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java"

// Java25 returns JDK 25's java, or skips/fails t (testenv.Unavailable).
func Java25(t testing.TB) string {
	t.Helper()
	return testenv.File(t, JDK25)
}

// Root returns the repository root: the nearest directory above the working directory that
// holds go.mod.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

var (
	verifyOnce sync.Once
	verifyJar  string
	verifyErr  error
)

// VerifyTool builds tools/verify with scripts/build-java.sh (once per test binary) and returns
// build/verify.jar. Building it here rather than trusting build/ means a test never runs a
// stale verifier.
func VerifyTool(t testing.TB) string {
	t.Helper()
	testenv.Tool(t, "gradle") // scripts/build-java.sh runs the top-level build.gradle
	verifyOnce.Do(func() {
		root, err := Root()
		if err != nil {
			verifyErr = err
			return
		}
		cmd := exec.Command("bash", filepath.Join(root, "scripts/build-java.sh"), "verify")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			verifyErr = fmt.Errorf("scripts/build-java.sh verify: %w\n%s", err, out)
			return
		}
		verifyJar = filepath.Join(root, "build", "verify.jar")
	})
	if verifyErr != nil {
		t.Fatal(verifyErr)
	}
	return verifyJar
}

// Outcome is what linking one class on HotSpot gave.
type Outcome struct {
	Status  string // OK, VerifyError, ClassFormatError, NoClassDefFoundError or Other
	Message string
}

// Linked reports whether the class linked.
func (o Outcome) Linked() bool { return o.Status == "OK" }

// Broken reports whether the class itself is malformed, as opposed to missing a dependency.
func (o Outcome) Broken() bool { return o.Status == "VerifyError" || o.Status == "ClassFormatError" }

// Verify links every class of jar with java (a java executable), the jars of classpath serving as
// its dependencies, and returns the outcome by class name.
func Verify(java, tool, jar string, classpath []string, threads int) (map[string]Outcome, error) {
	cmd := exec.Command(java, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", tool, "heapledger.verify.Verify",
		"--cp", strings.Join(classpath, string(os.PathListSeparator)), "--threads", fmt.Sprint(threads), jar)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w\n%s", java, jar, err, stderr.String())
	}
	return ParseOutcomes(out)
}

// ParseOutcomes reads tools/verify's output: STATUS<TAB>class<TAB>message lines.
func ParseOutcomes(out []byte) (map[string]Outcome, error) {
	res := map[string]Outcome{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for n := 1; sc.Scan(); n++ {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			return nil, fmt.Errorf("verify output line %d: want STATUS<TAB>class<TAB>message, got %q", n, sc.Text())
		}
		res[f[1]] = Outcome{Status: f[0], Message: f[2]}
	}
	return res, sc.Err()
}

// Regression is a class that linked (or at least was well-formed) before and is not after.
type Regression struct {
	Class         string
	Before, After Outcome
}

func (r Regression) String() string {
	return fmt.Sprintf("%s: %s before, %s after: %s", r.Class, r.Before.Status, r.After.Status, r.After.Message)
}

// Compare lists the classes whose outcome got worse: a class that linked before must link after,
// a class without VerifyError/ClassFormatError before must not have one after, and no class may
// disappear. The result is sorted by class name.
func Compare(before, after map[string]Outcome) []Regression {
	var regs []Regression
	for name, b := range before {
		a, ok := after[name]
		if !ok {
			a = Outcome{Status: "missing", Message: "class not in the rewritten jar"}
		}
		if (b.Linked() && !a.Linked()) || (!b.Broken() && a.Broken()) || !ok {
			regs = append(regs, Regression{Class: name, Before: b, After: a})
		}
	}
	sort.Slice(regs, func(i, j int) bool { return regs[i].Class < regs[j].Class })
	return regs
}

// Jar is one jar of the corpus and the jars it needs on the classpath.
type Jar struct {
	Path      string
	Classpath []string
}

// Name is the jar's file name, which identifies it in tables and messages.
func (j Jar) Name() string { return filepath.Base(j.Path) }

// LoadList reads a corpus list: one jar a line, then extra classpath jars, all resolved against
// /usr/share/java unless absolute; '#' starts a comment. The classpath also gets what the jars'
// manifests name in Class-Path, followed transitively, leaving out files that do not exist (a
// class that needs them is NoClassDefFoundError both before and after, which compares equal).
// A listed jar that does not exist is an error: the corpus must not shrink unnoticed.
func LoadList(path string) ([]Jar, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var jars []Jar
	for n, line := range strings.Split(string(data), "\n") {
		line, _, _ = strings.Cut(line, "#")
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for i := range f {
			if !filepath.IsAbs(f[i]) {
				f[i] = filepath.Join(DebianJava, f[i])
			}
		}
		for _, p := range f {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("%s:%d: %w (scripts/install-deps.sh installs the corpus)", path, n+1, err)
			}
		}
		cp, err := Classpath(f[0], f[1:])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n+1, err)
		}
		jars = append(jars, Jar{Path: f[0], Classpath: cp})
	}
	return jars, nil
}

// Classpath returns extra and everything the manifests of jar and extra name in Class-Path,
// transitively, without jar itself and without duplicates or missing files.
func Classpath(jar string, extra []string) ([]string, error) {
	seen := map[string]bool{}
	if real, err := filepath.EvalSymlinks(jar); err == nil {
		seen[real] = true
	}
	var cp []string
	queue := append([]string{jar}, extra...)
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue // named by a manifest but not installed
		}
		if i > 0 {
			if seen[real] {
				continue
			}
			seen[real] = true
			cp = append(cp, p)
		}
		refs, err := manifestClasspath(p)
		if err != nil {
			return nil, err
		}
		queue = append(queue, refs...)
	}
	return cp, nil
}

// manifestClasspath returns the Class-Path of a jar's manifest, resolved against its directory.
func manifestClasspath(jar string) ([]string, error) {
	zr, err := zip.OpenReader(jar)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", jar, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != "META-INF/MANIFEST.MF" {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("%s!%s: %w", jar, f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%s!%s: %w", jar, f.Name, err)
		}
		// Joining continuation lines (a line break followed by one space) gives one line per
		// attribute; the main section ends at the first blank line.
		text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
		text = strings.ReplaceAll(text, "\n ", "")
		main, _, _ := strings.Cut(text, "\n\n")
		for _, line := range strings.Split(main, "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.EqualFold(name, "Class-Path") {
				var refs []string
				for _, r := range strings.Fields(value) {
					if !filepath.IsAbs(r) {
						r = filepath.Join(filepath.Dir(jar), r)
					}
					refs = append(refs, r)
				}
				return refs, nil
			}
		}
	}
	return nil, nil
}

// skipLineRE is a line `heapledger rewrite --verbose` prints for each reason it kept methods as
// they were: "skipped N methods: REASON (for example ENTRY METHOD: DETAIL)".
var skipLineRE = regexp.MustCompile(`^skipped (\d+) methods: (.*?) \(for example .*\)$`)

// ParseSkips reads, from the output of `heapledger rewrite --verbose`, how many methods were
// kept as they were for each reason (a transform.SkipCode). Lines of whole classes skipped and
// methods rewritten with a fallback are not skipped methods and are left out.
func ParseSkips(out []byte) (map[string]int, error) {
	skips := map[string]int{}
	for _, line := range strings.Split(string(out), "\n") {
		m := skipLineRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			return nil, fmt.Errorf("skip line %q: %w", line, err)
		}
		skips[m[2]] += n
	}
	return skips, nil
}
