package main

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/internal/testenv"
	"github.com/heapledger/heapledger/rewrite/accounts"
)

// requireJava skips outside CI when the JDK or the Debian jars the quick workloads need are
// missing, and fails in CI, where scripts/install-deps.sh must have provided them.
func requireJava(t *testing.T) {
	t.Helper()
	var missing []string
	if _, err := exec.LookPath("java"); err != nil {
		missing = append(missing, "java")
	}
	for _, j := range []string{"/usr/share/java/xalan2.jar", "/usr/share/java/h2.jar", "/usr/share/java/java-allocation-instrumenter.jar"} {
		if _, err := os.Stat(j); err != nil {
			missing = append(missing, j)
		}
	}
	if len(missing) == 0 {
		return
	}
	testenv.Unavailable(t, "benchmark suite needs %s", strings.Join(missing, ", "))
}

// TestQuickSuite runs `go run ./bench/suite --quick` in-process: every available mode on the
// small workloads must run and produce plain's output.
func TestQuickSuite(t *testing.T) {
	requireJava(t)
	var stdout, stderr bytes.Buffer
	code, err := run([]string{"-quick", "-out", t.TempDir()}, &stdout, &stderr)
	t.Log(stderr.String())
	if code != 0 || err != nil {
		t.Fatalf("quick suite failed (exit %d): %v\n%s", code, err, stdout.String())
	}
	// Every available mode must have produced a row for every quick workload. In CI, where
	// `make test` builds the binary and the Java side first, every mode in the table must be
	// available: a mode that quietly stops being offered would otherwise go unnoticed.
	root, _ := findRoot()
	for _, w := range quickNames() {
		for _, m := range modes {
			if m.OptIn {
				continue // not in a default run
			}
			if err := m.Available(&Env{Root: root, Bin: binForTest()}); err != nil {
				if testenv.InCI() {
					t.Errorf("mode %s not available in CI: %v", m.Name, err)
				}
				continue
			}
			row := fmt.Sprintf("| %s | %s |", w, m.Name)
			if !strings.Contains(stdout.String(), row) {
				t.Errorf("no result row %q in:\n%s", row, stdout.String())
			}
		}
	}
	if strings.Contains(stdout.String(), "FAILED") {
		t.Errorf("a mode failed:\n%s", stdout.String())
	}
}

func binForTest() string {
	root, err := findRoot()
	if err != nil {
		return ""
	}
	return root + "/bin/heapledger"
}

// TestBrokenModesFailTheSuite adds two modes that are wrong on purpose — one whose output
// differs from plain, one that cannot start the program — and checks that the suite exits 1 and
// names the workload, mode and run, while plain itself still passes.
func TestBrokenModesFailTheSuite(t *testing.T) {
	requireJava(t)
	savedModes, savedWorkloads := modes, workloads
	defer func() { modes, workloads = savedModes, savedWorkloads }()

	modes = append(append([]*Mode{}, savedModes...),
		&Mode{Name: "tamper", What: "plain, but the test's check sees a changed output",
			Available: func(*Env) error { return nil }, Launch: plainLaunch},
		&Mode{Name: "no-classpath", What: "the program's jars left off the class path",
			Available: func(*Env) error { return nil },
			Launch: func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
				return &Launch{Classpath: []string{t.TempDir()}}, nil
			}},
	)
	workloads = append(append([]*Workload{}, savedWorkloads...), &Workload{Name: "h2-tamper", Program: "h2 with a tampering check",
		Prepare: func(env *Env) (*Prepared, error) {
			p, err := prepareH2(env)
			if err != nil {
				return nil, err
			}
			check := p.Check
			p.Check = func(runDir string, outs []StepOutput) (Output, error) {
				o, err := check(runDir, outs)
				if strings.Contains(runDir, "/tamper/") {
					o.Lines = append(o.Lines, "one result row more than plain")
				}
				return o, err
			}
			return p, nil
		}})

	var stdout, stderr bytes.Buffer
	code, err := run([]string{"-quick", "-out", t.TempDir(), "-workloads", "h2-tamper", "-modes", "tamper,no-classpath"}, &stdout, &stderr)
	if code != 1 || err == nil {
		t.Fatalf("suite with broken modes exited %d (%v), want 1\n%s\n%s", code, err, stdout.String(), stderr.String())
	}
	log := stderr.String()
	for _, want := range []string{
		"FAILED: h2-tamper / tamper: wrong output in run 1",
		"one result row more than plain",
		"FAILED: h2-tamper / no-classpath: run 1, step 1 (org.h2.tools.RunScript): exit status 1",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("stderr lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, "h2-tamper / plain") {
		t.Errorf("plain failed too:\n%s", log)
	}
}

func TestStripPDFVolatile(t *testing.T) {
	a := []byte("%PDF-1.4\n1 0 obj <</CreationDate (D:20261122043000Z) /Producer (FOP)>>\nstream BT (Hello) Tj ET endstream\n" +
		"<xmp:CreateDate>2026-11-22T04:30:00Z</xmp:CreateDate><dc:date>2026-11-22T04:30:00Z</dc:date>\nxref\n0 3\n0000000000 65535 f\ntrailer\n<</ID [<ab12><cd34>]>>\nstartxref\n1234\n%%EOF")
	b := bytes.NewBuffer(nil)
	b.WriteString(strings.NewReplacer("043000Z", "051500Z", "04:30:00Z", "05:15:00Z", "<ab12><cd34>", "<ffff><eeee>", "1234", "1299").Replace(string(a)))
	if !bytes.Equal(stripPDFVolatile(a), stripPDFVolatile(b.Bytes())) {
		t.Errorf("PDFs differing only in dates, ID and offsets compare different:\n%s\n%s", stripPDFVolatile(a), stripPDFVolatile(b.Bytes()))
	}
	c := bytes.Replace(a, []byte("(Hello)"), []byte("(Hallo)"), 1)
	if bytes.Equal(stripPDFVolatile(a), stripPDFVolatile(c)) {
		t.Error("PDFs with different page content compare equal")
	}
	if n := countPDFPages([]byte("<</Type /Pages /Count 2>> <</Type /Page /Parent 1 0 R>> <</Type/Page/Parent 1 0 R>>")); n != 2 {
		t.Errorf("countPDFPages = %d, want 2", n)
	}
}

func TestPixelDigest(t *testing.T) {
	a := image.NewRGBA(image.Rect(0, 0, 3, 2))
	b := image.NewNRGBA(image.Rect(0, 0, 3, 2))
	for y := 0; y < 2; y++ {
		for x := 0; x < 3; x++ {
			c := color.RGBA{uint8(40 * x), uint8(90 * y), 200, 255}
			a.Set(x, y, c)
			b.Set(x, y, c)
		}
	}
	if pixelDigest(a) != pixelDigest(b) {
		t.Error("the same pixels in two image encodings digest differently")
	}
	b.Set(2, 1, color.RGBA{1, 2, 3, 255})
	if pixelDigest(a) == pixelDigest(b) {
		t.Error("a changed pixel does not change the digest")
	}
}

func TestStats(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median odd = %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median even = %v", m)
	}
	if g := geomean([]float64{2, 0.5}); math.Abs(g-1) > 1e-12 {
		t.Errorf("geomean(2, 0.5) = %v, want 1", g)
	}
	if g := geomean([]float64{1.5, 1.5, 1.5}); math.Abs(g-1.5) > 1e-12 {
		t.Errorf("geomean of equal values = %v", g)
	}
	if s := spread([]float64{1.2, 1.5, 1.1}, "%.2f"); s != "1.20 (1.10–1.50)" {
		t.Errorf("spread = %q", s)
	}
}

func TestFirstDifference(t *testing.T) {
	want := Output{Lines: []string{"a 1", "b 2", "c 3"}}
	got := Output{Lines: []string{"a 1", "b 9", "c 3"}}
	if d := firstDifference(want, got); !strings.Contains(d, "line 2") || !strings.Contains(d, "b 9") {
		t.Errorf("firstDifference = %q", d)
	}
	if d := firstDifference(want, Output{Lines: want.Lines[:2]}); !strings.Contains(d, "c 3") {
		t.Errorf("missing line not named: %q", d)
	}
	if want.Digest() == got.Digest() {
		t.Error("different outputs share a digest")
	}
}

// TestGeneratorsDeterministic guards the premise of the output check: the same size gives the
// same bytes, so a difference between runs can only come from the program.
func TestGeneratorsDeterministic(t *testing.T) {
	gens := map[string]func(string) error{
		"catalogue": func(d string) error { return genCatalogue(d, 50) },
		"sql":       func(d string) error { return genSQL(d, 40, 200) },
		"java":      func(d string) error { _, err := genJavaTree(d, 2, 2); return err },
		"lucene":    func(d string) error { return genLuceneDocs(d, 5, 30) },
		"fo":        func(d string) error { return genFO(d, 2) },
		"svg":       func(d string) error { return genSVG(d, 2, 10) },
	}
	for name, gen := range gens {
		a, b := t.TempDir(), t.TempDir()
		if err := gen(a); err != nil {
			t.Fatal(name, err)
		}
		if err := gen(b); err != nil {
			t.Fatal(name, err)
		}
		da, err := treeDigests(a, "")
		if err != nil {
			t.Fatal(err)
		}
		db, err := treeDigests(b, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(da) == 0 || strings.Join(da, "\n") != strings.Join(db, "\n") {
			t.Errorf("%s generator is not deterministic or wrote nothing:\n%v\n%v", name, da, db)
		}
	}
}

func TestVerifySnapshot(t *testing.T) {
	dir := t.TempDir()
	if err := verifySnapshot(nil, dir); err == nil {
		t.Error("a run without a snapshot passes")
	}
	path := dir + "/heapledger-Main-1-1.snapshot"
	if err := os.WriteFile(path, []byte("# heapledger snapshot 1\nreason\texit\naccount\t1\t*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := verifySnapshot(nil, dir); err == nil || !strings.Contains(err.Error(), "no allocation site") {
		t.Errorf("a snapshot without sites: %v", err)
	}
	if err := os.WriteFile(path, []byte("# heapledger snapshot 1\naccount\t1\t*\nsite\t1\tobject\tA\tA.m()V\t0\t3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := verifySnapshot(nil, dir); err != nil {
		t.Errorf("a valid snapshot fails: %v", err)
	}
}

// TestWorkloadAccountsFitTheirJars: every workload names the accounts a user would (issue 35:
// 6 to 15 main packages; parallel, one package, has one), and every pattern of the quick
// workloads matches a class of their code jars, so heapledger-accounts measures as many
// boundaries as the doc says (the other workloads' patterns were checked once the same way, and
// the mode fails a run whose rewrite warns that a pattern matched nothing).
func TestWorkloadAccountsFitTheirJars(t *testing.T) {
	requireJava(t)
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	env := &Env{Ctx: context.Background(), Root: root, Quick: true, Out: t.TempDir(), Log: io.Discard}
	if env.Java, env.Javac, env.JarTool, env.JFRTool, err = findJDK(""); err != nil {
		t.Fatal(err)
	}
	for _, w := range workloads {
		if n := len(w.Accounts); w.Name != "parallel" && (n < 6 || n > 15) {
			t.Errorf("%s: %d accounts, want 6 to 15", w.Name, n)
		}
		if !w.InQuick {
			continue // preparing them takes minutes; heapledger-accounts refuses a misfit when it runs
		}
		p, err := w.Prepare(env)
		if err != nil {
			if testenv.InCI() {
				t.Errorf("%s: %v", w.Name, err)
			}
			continue
		}
		set, err := accounts.Parse(strings.Join(w.Accounts, ","))
		if err != nil {
			t.Fatalf("%s: %v", w.Name, err)
		}
		var classes []string
		for _, j := range p.Jars {
			zr, err := zip.OpenReader(j)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range zr.File {
				if name, ok := strings.CutSuffix(f.Name, ".class"); ok {
					classes = append(classes, name)
				}
			}
			zr.Close()
		}
		for _, u := range set.Unmatched(classes) {
			t.Errorf("%s: %s matches no class of %v", w.Name, u, p.Jars)
		}
	}
	if got := replaceFlags([]string{"--pass", "count", "--accounts", "LIST", "--embed-runtime"}, []string{"--accounts", "a.b,c"}); strings.Join(got, " ") != "--pass count --accounts a.b,c --embed-runtime" {
		t.Errorf("replaceFlags = %q", got)
	}
}

// TestDocSaysHowTheRunStands: the doc rewritten after every round says the run goes on, and the
// last one why it ended — a -max-time stop, an interrupt, or every round done.
func TestDocSaysHowTheRunStands(t *testing.T) {
	for _, c := range []struct {
		rep  Report
		want string
	}{
		{Report{Measured: 1, Running: true}, "1 of 3 measured round(s) so far (the run is still going"},
		{Report{Measured: 2, Stop: stopMaxTime}, "2 complete measured round(s) (3 were asked for; -max-time 1h0m0s stopped the run"},
		{Report{Measured: 1, Stop: stopInterrupted, Interrupted: true}, "1 complete measured round(s) (3 were asked for; the run was interrupted); the run was interrupted, and the runs of the unfinished round"},
		{Report{Measured: 3}, "then 3 measured round(s). A measured"},
	} {
		c.rep.Options = Options{Warmup: 1, Runs: 3, MaxTime: time.Hour}
		c.rep.Skipped = map[string]string{}
		c.rep.Modes = []*Mode{{Name: "plain"}}
		if doc := c.rep.Markdown(); !strings.Contains(doc, c.want) {
			t.Errorf("%+v: the doc does not say %q:\n%s", c.rep, c.want, doc)
		}
	}
}
