package corpus

import (
	"archive/zip"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/transform"
)

var (
	passesFlag = flag.String("corpus.passes", "", "comma-separated passes to prove (default: $HEAPLEDGER_CORPUS_PASSES, else identity,probe,count)")
	jarsFlag   = flag.String("corpus.jars", "", "comma-separated jar names of scripts/corpus-jars.txt to restrict the run to")
)

// wantedPasses are the passes the corpus proves. Each must be registered in the binary: in CI a
// missing one fails the test, since issue 2 is not done until both are proven.
func wantedPasses() []string {
	s := *passesFlag
	if s == "" {
		s = os.Getenv("HEAPLEDGER_CORPUS_PASSES")
	}
	if s == "" {
		s = "identity,probe,count,count*"
	}
	return strings.Split(s, ",")
}

// passArgs are the options each pass is proven with. "count" is the count pass with package
// accounts that take in nearly every class of the corpus, so that nearly every method switches
// accounts (saves, sets and restores the thread's account, under a catch-all handler) as well
// as counting, as it does for users; "count*" is the count pass with every class accounted
// ('*'), where methods count with the account fixed and never switch.
var passArgs = map[string][]string{
	"count":  {"--pass", "count", "--accounts", "org.*,com.*,net.*,javax.*,clojure.*,groovy.*,kotlin.*,scala.*,jdk.*,sun.*,edu.*"},
	"count*": {"--pass", "count", "--accounts", "*"},
}

// passOf is the heapledger pass a label of wantedPasses runs.
func passOf(label string) string { return strings.TrimSuffix(label, "*") }

// buildBinary builds the heapledger command from this checkout, so the test proves the CLI path
// of exactly the code under test rather than whatever bin/ holds.
func buildBinary(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "heapledger")
	cmd := exec.Command("go", "build", "-o", bin, "./cli")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cli: %v\n%s", err, out)
	}
	return bin
}

// registeredPasses reads the pass list from `heapledger rewrite --help`.
func registeredPasses(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, err := exec.Command(bin, "rewrite", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("%s rewrite --help: %v\n%s", bin, err, out)
	}
	_, list, ok := strings.Cut(string(out), "Passes:\n")
	if !ok {
		t.Fatalf("rewrite --help lists no passes:\n%s", out)
	}
	passes := map[string]bool{}
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasSuffix(line, ":") {
			break
		}
		if !strings.HasPrefix(f[0], "(") {
			passes[f[0]] = true
		}
	}
	return passes
}

var summaryRE = regexp.MustCompile(`(\d+) classes: (\d+) rewritten, (\d+) unchanged, (\d+) failed; (\d+) methods skipped`)

type row struct {
	jar, pass, jdk                 string
	classes, before, after, broken int
	rewritten, failed, skipped     string
}

// TestCorpus rewrites every jar of scripts/corpus-jars.txt with every pass and checks, on JDK 17
// and JDK 25, that each class that links before the rewrite links after it. With -short it
// samples every fourth jar.
func TestCorpus(t *testing.T) {
	root, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	jars, err := LoadList(filepath.Join(root, "scripts/corpus-jars.txt"))
	if err != nil {
		testenv.Unavailable(t, "corpus: %v", err)
	}
	jars = selectJars(t, jars)
	jdks := []jdk{{"17", testenv.Tool(t, "java")}, {"25", Java25(t)}}
	tool := VerifyTool(t)
	bin := buildBinary(t, root)
	registered := registeredPasses(t, bin)
	var passes []string
	for _, p := range wantedPasses() {
		if registered[passOf(p)] {
			passes = append(passes, p)
		} else if testenv.InCI() {
			t.Errorf("pass %s is not registered in heapledger rewrite (CI=true: required)", p)
		} else {
			t.Logf("pass %s is not registered in heapledger rewrite yet: not proven", p)
		}
	}
	out := t.TempDir()
	var (
		mu   sync.Mutex
		rows []row
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, runtime.NumCPU())
	for _, j := range jars {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := proveJar(t, prover{bin: bin, tool: tool, jdks: jdks, out: out}, j, passes)
			mu.Lock()
			rows = append(rows, r...)
			mu.Unlock()
		}()
	}
	// The byte-identical round trip needs no JVM: it runs while the JVMs work.
	roundTrip(t, jars)
	wg.Wait()
	logTable(t, rows)
}

// forbiddenSkips are reasons no pass may keep a method of the corpus as it was for, with why:
// methods kept for them once were the rewriter's bugs, and the corpus holds the jars that
// showed them.
var forbiddenSkips = map[transform.SkipCode]string{
	// Issue 37 item 2: ASM-compiled code (clojure, groovy-all) ends methods in dead nop...athrow
	// tails whose frames list no locals; the count pass with switching accounts once lost every
	// such method (thousands) to a restore of the account that loaded a local the frame lacks.
	transform.SkipNoFrames: "dead code under frames with no locals is left alone, never a reason to keep a method",
}

// prover is what proving one jar needs: the heapledger binary, the verifier, the JDKs and the
// directory the rewritten jars go to.
type prover struct {
	bin, tool, out string
	jdks           []jdk
}

type jdk struct{ name, java string }

// proveJar links j's classes before, rewrites j with each pass, checks the skips the rewrite
// reports against forbiddenSkips and that every class that linked before still links, and
// returns a table row per pass and JDK.
func proveJar(t *testing.T, p prover, j Jar, passes []string) []row {
	before := map[string]map[string]Outcome{}
	for _, jdk := range p.jdks {
		o, err := Verify(jdk.java, p.tool, j.Path, j.Classpath, 1)
		if err != nil {
			t.Errorf("%s: verify before on JDK %s: %v", j.Name(), jdk.name, err)
			return nil
		}
		before[jdk.name] = o
	}
	var rows []row
	for _, ps := range passes {
		rewritten := filepath.Join(p.out, ps+"-"+j.Name())
		args := []string{"rewrite", "-j", "1", "--verbose", "--pass", ps}
		if a, ok := passArgs[ps]; ok {
			args = append([]string{"rewrite", "-j", "1", "--verbose"}, a...)
		}
		cmd := exec.Command(p.bin, append(args, j.Path, "-o", rewritten)...)
		msg, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: heapledger rewrite --pass %s: %v\n%s", j.Name(), ps, err, msg)
			continue
		}
		sum := summaryRE.FindStringSubmatch(string(msg))
		if sum == nil {
			t.Errorf("%s: pass %s: no summary line in\n%s", j.Name(), ps, msg)
			continue
		}
		checkSkips(t, j.Name(), ps, msg)
		for _, jdk := range p.jdks {
			// With no class rewritten every class entry was copied raw, byte for byte,
			// so linking it again could only repeat the outcome before.
			after := before[jdk.name]
			if sum[2] != "0" {
				after, err = Verify(jdk.java, p.tool, rewritten, j.Classpath, 1)
				if err != nil {
					t.Errorf("%s: pass %s: verify after on JDK %s: %v", j.Name(), ps, jdk.name, err)
					continue
				}
			}
			regs := Compare(before[jdk.name], after)
			reportRegressions(t, fmt.Sprintf("%s, pass %s, JDK %s", j.Name(), ps, jdk.name), regs)
			rows = append(rows, row{jar: j.Name(), pass: ps, jdk: jdk.name, classes: len(before[jdk.name]),
				before: linked(before[jdk.name]), after: linked(after), broken: len(regs),
				rewritten: sum[2], failed: sum[4], skipped: sum[5]})
		}
	}
	return rows
}

// checkSkips fails t when the rewrite of jar with pass, whose --verbose output is msg, kept
// methods as they were for a reason of forbiddenSkips.
func checkSkips(t *testing.T, jar, pass string, msg []byte) {
	skips, err := ParseSkips(msg)
	if err != nil {
		t.Errorf("%s: pass %s: %v", jar, pass, err)
		return
	}
	for code, why := range forbiddenSkips {
		if n := skips[string(code)]; n > 0 {
			var example string
			for _, line := range strings.Split(string(msg), "\n") {
				if strings.HasPrefix(line, "skipped ") && strings.Contains(line, string(code)) {
					example = line
				}
			}
			t.Errorf("%s: pass %s kept %d methods as they were because %s (%s):\n%s", jar, pass, n, code, why, example)
		}
	}
}

func selectJars(t *testing.T, jars []Jar) []Jar {
	if *jarsFlag != "" {
		keep := map[string]bool{}
		for _, n := range strings.Split(*jarsFlag, ",") {
			keep[n] = true
		}
		var sel []Jar
		for _, j := range jars {
			if keep[j.Name()] {
				sel = append(sel, j)
				delete(keep, j.Name())
			}
		}
		for n := range keep {
			t.Fatalf("-corpus.jars: %s is not in scripts/corpus-jars.txt", n)
		}
		return sel
	}
	if testing.Short() {
		var sel []Jar
		for i := 0; i < len(jars); i += 4 {
			sel = append(sel, jars[i])
		}
		t.Logf("-short: sampling %d of %d jars", len(sel), len(jars))
		return sel
	}
	return jars
}

func linked(o map[string]Outcome) int {
	n := 0
	for _, x := range o {
		if x.Linked() {
			n++
		}
	}
	return n
}

// reportRegressions fails the test with the first regressions of one run, and counts the rest.
func reportRegressions(t *testing.T, what string, regs []Regression) {
	const show = 10
	for i, r := range regs {
		if i == show {
			t.Errorf("%s: and %d more classes that no longer link", what, len(regs)-show)
			break
		}
		t.Errorf("%s: %s", what, r)
	}
}

// roundTrip checks that every class of the corpus is written back byte for byte by the classfile
// package when nothing is changed.
func roundTrip(t *testing.T, jars []Jar) {
	total, bad := 0, 0
	for _, j := range jars {
		zr, err := zip.OpenReader(j.Path)
		if err != nil {
			t.Errorf("%s: %v", j.Path, err)
			continue
		}
		for _, f := range zr.File {
			if !strings.HasSuffix(f.Name, ".class") {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Errorf("%s!%s: %v", j.Path, f.Name, err)
				continue
			}
			data, err := io.ReadAll(rc)
			rc.Close()
			if err != nil {
				t.Errorf("%s!%s: %v", j.Path, f.Name, err)
				continue
			}
			total++
			c, err := classfile.Parse(data)
			var again []byte
			if err == nil {
				again, err = c.Bytes()
			}
			if err == nil && !bytes.Equal(again, data) {
				err = fmt.Errorf("written back differently (%d bytes, was %d)", len(again), len(data))
			}
			if err != nil {
				bad++
				if bad <= 10 {
					t.Errorf("round trip %s!%s: %v", j.Path, f.Name, err)
				}
			}
		}
		zr.Close()
	}
	if bad > 10 {
		t.Errorf("round trip: %d more classes not byte-identical", bad-10)
	}
	t.Logf("round trip: %d of %d classes byte-identical", total-bad, total)
}

func logTable(t *testing.T, rows []row) {
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.jar != b.jar {
			return a.jar < b.jar
		}
		if a.pass != b.pass {
			return a.pass < b.pass
		}
		return a.jdk < b.jdk
	})
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "jar\tpass\tJDK\tclasses\trewritten\tfailed\tmethods skipped\tlinked before\tlinked after\tnewly failing\t")
	var sum row
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%d\t%d\t%d\t\n", r.jar, r.pass, r.jdk, r.classes, r.rewritten, r.failed, r.skipped, r.before, r.after, r.broken)
		sum.classes += r.classes
		sum.before += r.before
		sum.after += r.after
		sum.broken += r.broken
	}
	fmt.Fprintf(tw, "total\t\t\t%d\t\t\t\t%d\t%d\t%d\t\n", sum.classes, sum.before, sum.after, sum.broken)
	tw.Flush()
	t.Logf("corpus results:\n%s", buf.String())
}
