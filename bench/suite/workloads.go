package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Workload is one real program run on generated input. Prepare generates the input (once per
// size; later calls reuse it) and says how to run the program and how to check what it wrote.
type Workload struct {
	Name    string
	Program string // what runs, for the doc
	InQuick bool   // part of --quick, the test-suite subset
	// Accounts is what a user of the program would account: its main packages, 6 to 15 of
	// them (the heapledger-accounts mode), as `rewrite --accounts` patterns. The count of
	// accounts and where their boundaries fall is what switching costs (issue 35), which '*'
	// never shows: there, no method switches.
	Accounts []string
	// Repeatable are JVM options that make a run count the same allocations every time, for
	// -compare: ecj compiles on worker threads unless told not to.
	Repeatable []string
	Prepare    func(env *Env) (*Prepared, error)
}

// Prepared is a workload ready to run: its code jars (what a rewriting mode rewrites), other
// classpath entries that hold no code to instrument, the JVM invocations, and the output check.
type Prepared struct {
	Jars    []string
	ExtraCP []string
	Steps   []Step
	Input   string // a one-line description of the generated input, for the doc
	// Check reads what the steps wrote (files in runDir, captured output) and returns the
	// canonical output that must be identical in every mode, or an error when the program's own
	// success criteria failed (self-check, missing files, wrong counts).
	Check func(runDir string, outs []StepOutput) (Output, error)
}

// Step is one JVM invocation; a workload with two steps (index, then search) is timed as a whole.
type Step struct {
	Main string
	Args []string
	JVM  []string // workload-specific JVM options that every mode shares
}

// StepOutput is what one step printed.
type StepOutput struct {
	Stdout, Stderr []byte
}

// Output is the canonical form of a run's result: lines that are compared between modes. Files
// are represented by "name sha256" lines so a difference names the file.
type Output struct {
	Lines []string
}

func (o Output) Digest() string { return sha256Hex([]byte(strings.Join(o.Lines, "\n"))) }

// jars resolves Debian jar names and fails with the package to install when one is missing.
func jars(pkg string, names ...string) ([]string, error) {
	var out []string
	for _, n := range names {
		p := filepath.Join("/usr/share/java", n)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%s not found: install Debian package %s (scripts/install-deps.sh)", p, pkg)
		}
		out = append(out, p)
	}
	return out, nil
}

// workloads is the suite, in report order. Sizes are chosen for 2–10 s plain runs on a 2-core
// machine; quick sizes keep the test-suite subset to a few seconds per run.
var workloads = []*Workload{
	{Name: "sunflow", Program: "org.sunflow.Benchmark -bench 2 256 (Debian sunflow)", Prepare: prepareSunflow,
		Accounts: []string{"org.sunflow", "org.sunflow.core", "org.sunflow.core.accel", "org.sunflow.core.primitive", "org.sunflow.core.shader", "org.sunflow.core.renderer", "org.sunflow.core.gi", "org.sunflow.core.parser", "org.sunflow.image.*", "org.sunflow.math", "org.sunflow.system.*"}},
	{Name: "xalan", Program: "org.apache.xalan.xslt.Process (Debian libxalan2-java)", InQuick: true, Prepare: prepareXalan,
		Accounts: []string{"org.apache.xalan.processor", "org.apache.xalan.templates", "org.apache.xalan.transformer", "org.apache.xalan.xsltc.*", "org.apache.xml.dtm.*", "org.apache.xml.serializer.*", "org.apache.xml.utils.*", "org.apache.xpath.*", "org.apache.xerces.*", "org.apache.bcel.*"}},
	{Name: "h2", Program: "org.h2.tools.RunScript on jdbc:h2:mem (Debian libh2-java)", InQuick: true, Prepare: prepareH2,
		Accounts: []string{"org.h2.command.*", "org.h2.engine", "org.h2.expression.*", "org.h2.index", "org.h2.mvstore.*", "org.h2.result", "org.h2.store.*", "org.h2.table", "org.h2.tools", "org.h2.util.*", "org.h2.value"}},
	{Name: "ecj", Program: "org.eclipse.jdt.internal.compiler.batch.Main (Debian libecj-java)", Prepare: prepareEcj,
		Repeatable: []string{"-Djdt.compiler.useSingleThread=true"},
		Accounts:   []string{"org.eclipse.jdt.internal.compiler", "org.eclipse.jdt.internal.compiler.ast", "org.eclipse.jdt.internal.compiler.batch", "org.eclipse.jdt.internal.compiler.classfmt", "org.eclipse.jdt.internal.compiler.codegen", "org.eclipse.jdt.internal.compiler.flow", "org.eclipse.jdt.internal.compiler.lookup", "org.eclipse.jdt.internal.compiler.parser", "org.eclipse.jdt.internal.compiler.problem", "org.eclipse.jdt.internal.compiler.util"}},
	{Name: "lucene", Program: "lucene-demo 4.10 IndexFiles, then SearchFiles (Debian liblucene4.10-java)", Prepare: prepareLucene,
		Accounts: []string{"org.apache.lucene.demo", "org.apache.lucene.analysis.*", "org.apache.lucene.codecs.*", "org.apache.lucene.document", "org.apache.lucene.index", "org.apache.lucene.queryparser.*", "org.apache.lucene.search.*", "org.apache.lucene.store", "org.apache.lucene.util", "org.apache.lucene.util.packed", "org.apache.lucene.util.fst"}},
	{Name: "fop", Program: "org.apache.fop.cli.Main, FO → PDF (Debian fop)", Prepare: prepareFop,
		Accounts: []string{"org.apache.fop.apps", "org.apache.fop.area.*", "org.apache.fop.fo.*", "org.apache.fop.fonts.*", "org.apache.fop.layoutmgr.*", "org.apache.fop.pdf", "org.apache.fop.render.*", "org.apache.xmlgraphics.*", "org.apache.batik.*", "org.apache.xerces.*", "org.apache.xalan.*"}},
	{Name: "batik", Program: "org.apache.batik.apps.rasterizer.Main, SVG → PNG (Debian libbatik-java)", Prepare: prepareBatik,
		Accounts: []string{"org.apache.batik.anim.*", "org.apache.batik.bridge.*", "org.apache.batik.css.*", "org.apache.batik.dom.*", "org.apache.batik.ext.awt.*", "org.apache.batik.gvt.*", "org.apache.batik.parser", "org.apache.batik.transcoder.*", "org.apache.batik.util", "org.apache.xmlgraphics.*", "org.apache.xerces.*"}},
	{Name: "parallel", Program: "bench.parallel.ParallelAlloc, 64 threads, 8 MB arrays (bench/suite/java)", Prepare: prepareParallel,
		Accounts: []string{"bench.parallel"}},
}

// inputDir returns the directory for a workload's generated input, and whether it is already
// complete. The stamp names the generator version and size, so a changed generator regenerates.
func (env *Env) inputDir(name, stamp string) (string, bool) {
	dir := filepath.Join(env.Out, "inputs", name)
	b, err := os.ReadFile(filepath.Join(dir, ".stamp"))
	return dir, err == nil && string(b) == stamp
}

// generate runs gen into a clean input directory unless the stamp shows it was done already.
// The generators' source is part of the stamp, so editing gen.go regenerates every input it
// produces.
func (env *Env) generate(name, stamp string, gen func(dir string) error) (string, error) {
	if src, err := os.ReadFile(filepath.Join(env.Root, "bench", "suite", "gen.go")); err == nil {
		stamp += " gen.go " + sha256Hex(src)
	}
	return env.generateOnce(name, stamp, gen)
}

// generateOnce is generate for inputs that do not come from gen.go (sunflow's reference images).
func (env *Env) generateOnce(name, stamp string, gen func(dir string) error) (string, error) {
	dir, done := env.inputDir(name, stamp)
	if done {
		return dir, nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	env.logf("generating input for %s in %s", name, dir)
	if err := gen(dir); err != nil {
		return "", fmt.Errorf("generating input for %s: %w", name, err)
	}
	return dir, os.WriteFile(filepath.Join(dir, ".stamp"), []byte(stamp), 0o644)
}

func prepareSunflow(env *Env) (*Prepared, error) {
	cp, err := jars("sunflow", "sunflow.jar")
	if err != nil {
		return nil, err
	}
	// Benchmark looks its reference image up as /resources/golden_%04X.png on the classpath;
	// -regen writes all sizes into ./resources, which must exist beforehand.
	res := 256
	if env.Quick {
		res = 64
	}
	st, err := os.Stat(cp[0])
	if err != nil {
		return nil, err
	}
	stamp := fmt.Sprintf("sunflow-regen v1 %d %d", st.Size(), st.ModTime().Unix())
	dir, err := env.generateOnce("sunflow", stamp, func(dir string) error {
		if err := os.MkdirAll(filepath.Join(dir, "resources"), 0o755); err != nil {
			return err
		}
		out, err := env.runJava(dir, cp, "org.sunflow.Benchmark", "-regen")
		if err != nil {
			return fmt.Errorf("sunflow -regen: %v\n%s", err, tail(out, 20))
		}
		_, err = os.Stat(filepath.Join(dir, "resources", fmt.Sprintf("golden_%04X.png", res)))
		return err
	})
	if err != nil {
		return nil, err
	}
	return &Prepared{
		Jars:    cp,
		ExtraCP: []string{dir},
		Input:   fmt.Sprintf("built-in scene at %d×%d, 2 threads; reference images from -regen", res, res),
		Steps:   []Step{{Main: "org.sunflow.Benchmark", Args: []string{"-bench", "2", strconv.Itoa(res)}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			all := string(outs[0].Stdout) + string(outs[0].Stderr)
			if !strings.Contains(all, "Image check passed!") {
				return Output{}, fmt.Errorf("sunflow's image check did not pass:\n%s", grepLines(all, "BENCH"))
			}
			return Output{Lines: []string{fmt.Sprintf("sunflow image check passed at %d", res)}}, nil
		},
	}, nil
}

func prepareXalan(env *Env) (*Prepared, error) {
	cp, err := jars("libxalan2-java", "xalan2.jar", "serializer.jar", "xercesImpl.jar")
	if err != nil {
		return nil, err
	}
	items := 60000
	if env.Quick {
		items = 4000
	}
	dir, err := env.generate("xalan", fmt.Sprintf("xalan v1 %d", items), func(dir string) error { return genCatalogue(dir, items) })
	if err != nil {
		return nil, err
	}
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("catalogue of %d items; stylesheet with xsl:key, Muenchian grouping, multi-key sorts", items),
		Steps: []Step{{Main: "org.apache.xalan.xslt.Process", Args: []string{
			"-IN", filepath.Join(dir, "catalogue.xml"), "-XSL", filepath.Join(dir, "report.xsl"), "-OUT", "report.xml"}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			b, err := os.ReadFile(filepath.Join(runDir, "report.xml"))
			if err != nil {
				return Output{}, err
			}
			want := fmt.Sprintf(`<report items="%d">`, items)
			if !bytes.Contains(b, []byte(want)) {
				return Output{}, fmt.Errorf("report.xml lacks %s", want)
			}
			if n := bytes.Count(b, []byte("<category ")); n != 16 {
				return Output{}, fmt.Errorf("report.xml has %d category groups, the input has 16", n)
			}
			return Output{Lines: []string{"report.xml " + sha256Hex(b)}}, nil
		},
	}, nil
}

func prepareH2(env *Env) (*Prepared, error) {
	cp, err := jars("libh2-java", "h2.jar")
	if err != nil {
		return nil, err
	}
	customers, orders := 5000, 60000
	if env.Quick {
		customers, orders = 1000, 8000
	}
	dir, err := env.generate("h2", fmt.Sprintf("h2 v1 %d %d", customers, orders), func(dir string) error { return genSQL(dir, customers, orders) })
	if err != nil {
		return nil, err
	}
	files := []string{"revenue.csv", "top-customers.csv", "monthly.csv", "products.csv", "counts.csv"}
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("%d customers, %d orders as INSERTs; joins, group-by, updates, deletes; results via CSVWRITE", customers, orders),
		Steps: []Step{{Main: "org.h2.tools.RunScript", Args: []string{
			"-url", "jdbc:h2:mem:bench", "-user", "sa", "-script", filepath.Join(dir, "workload.sql")}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			var lines []string
			for _, f := range files {
				b, err := os.ReadFile(filepath.Join(runDir, f))
				if err != nil {
					return Output{}, fmt.Errorf("the script did not write %s: %v", f, err)
				}
				if bytes.Count(b, []byte("\n")) < 2 {
					return Output{}, fmt.Errorf("%s has no result rows", f)
				}
				lines = append(lines, f+" "+sha256Hex(b))
			}
			// The totals are short and make a difference readable at a glance.
			b, _ := os.ReadFile(filepath.Join(runDir, "counts.csv"))
			lines = append(lines, "counts: "+strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " | "))
			return Output{Lines: lines}, nil
		},
	}, nil
}

func prepareEcj(env *Env) (*Prepared, error) {
	cp, err := jars("libecj-java", "ecj.jar")
	if err != nil {
		return nil, err
	}
	pkgs, per := 7, 30
	if env.Quick {
		pkgs, per = 3, 10
	}
	dir, err := env.generate("ecj", fmt.Sprintf("ecj v1 %d %d", pkgs, per), func(dir string) error {
		_, err := genJavaTree(dir, pkgs, per)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The input may come from an earlier run, so the expected count is computed, not returned.
	classFiles := javaTreeClassFiles(pkgs, per)
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("%d generated classes in %d packages (generics, lambdas, inner classes), -1.8", pkgs*per, pkgs),
		Steps: []Step{{Main: "org.eclipse.jdt.internal.compiler.batch.Main", Args: []string{
			"-1.8", "-nowarn", "-encoding", "UTF-8", "-d", "classes", filepath.Join(dir, "src")}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			if bytes.Contains(outs[0].Stdout, []byte("ERROR")) || bytes.Contains(outs[0].Stderr, []byte("ERROR")) {
				return Output{}, fmt.Errorf("ecj reported errors:\n%s", tail(append(outs[0].Stdout, outs[0].Stderr...), 20))
			}
			lines, err := treeDigests(filepath.Join(runDir, "classes"), ".class")
			if err != nil {
				return Output{}, err
			}
			if len(lines) != classFiles {
				return Output{}, fmt.Errorf("ecj wrote %d class files, a correct compilation writes %d", len(lines), classFiles)
			}
			return Output{Lines: lines}, nil
		},
	}, nil
}

func prepareLucene(env *Env) (*Prepared, error) {
	cp, err := jars("liblucene4.10-java", "lucene-demo-4.10.4.jar", "lucene-core-4.10.4.jar",
		"lucene-analyzers-common-4.10.4.jar", "lucene-queryparser-4.10.4.jar", "lucene-queries-4.10.4.jar")
	if err != nil {
		return nil, err
	}
	docs, perDoc := 12000, 900
	if env.Quick {
		docs, perDoc = 300, 200
	}
	dir, err := env.generate("lucene", fmt.Sprintf("lucene v1 %d %d", docs, perDoc), func(dir string) error { return genLuceneDocs(dir, docs, perDoc) })
	if err != nil {
		return nil, err
	}
	// SearchFiles prints the hits' stored paths; the documents are read through one absolute
	// path, so the output is the same in every run directory.
	searchLine := regexp.MustCompile(`^(Searching for: |\d+ total matching documents|\d+\. |doc=\d+ score=)`)
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("%d documents of %d words (Zipf-like), 400 term/boolean/phrase/prefix queries", docs, perDoc),
		Steps: []Step{
			{Main: "org.apache.lucene.demo.IndexFiles", Args: []string{"-index", "index", "-docs", filepath.Join(dir, "docs")}},
			{Main: "org.apache.lucene.demo.SearchFiles", Args: []string{"-index", "index", "-queries", filepath.Join(dir, "queries.txt"), "-paging", "20"}},
		},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			added := bytes.Count(outs[0].Stdout, []byte("\nadding "))
			if bytes.HasPrefix(outs[0].Stdout, []byte("adding ")) {
				added++
			}
			if added != docs {
				return Output{}, fmt.Errorf("IndexFiles added %d documents, the input has %d", added, docs)
			}
			lines := []string{fmt.Sprintf("indexed %d documents", added)}
			searches := 0
			sc := bufio.NewScanner(bytes.NewReader(outs[1].Stdout))
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				l := sc.Text()
				if searchLine.MatchString(l) {
					lines = append(lines, l)
					if strings.HasPrefix(l, "Searching for: ") {
						searches++
					}
				}
			}
			if searches != 400 {
				return Output{}, fmt.Errorf("SearchFiles ran %d queries, the query file has 400", searches)
			}
			return Output{Lines: lines}, nil
		},
	}, nil
}

func prepareFop(env *Env) (*Prepared, error) {
	// The jar list of Debian's /usr/bin/fop wrapper, minus hyphenation patterns.
	cp, err := jars("fop", "fop.jar", "batik-all.jar", "xmlgraphics-commons.jar", "commons-io.jar",
		"commons-logging.jar", "xml-apis-ext.jar", "fontbox2.jar", "xercesImpl.jar", "serializer.jar", "xalan2.jar")
	if err != nil {
		return nil, err
	}
	sections := 150
	if env.Quick {
		sections = 10
	}
	dir, err := env.generate("fop", fmt.Sprintf("fop v1 %d", sections), func(dir string) error { return genFO(dir, sections) })
	if err != nil {
		return nil, err
	}
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("XSL-FO with %d sections (justified text, footnotes, tables, lists)", sections),
		Steps: []Step{{Main: "org.apache.fop.cli.Main",
			JVM:  []string{"-Djava.awt.headless=true", "-Dorg.apache.commons.logging.Log=org.apache.commons.logging.impl.NoOpLog"},
			Args: []string{"-fo", filepath.Join(dir, "document.fo"), "-pdf", "document.pdf"}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			b, err := os.ReadFile(filepath.Join(runDir, "document.pdf"))
			if err != nil {
				return Output{}, err
			}
			pages := countPDFPages(b)
			if pages < 2 {
				return Output{}, fmt.Errorf("document.pdf has %d pages", pages)
			}
			return Output{Lines: []string{fmt.Sprintf("document.pdf pages=%d stable-content=%s", pages, sha256Hex(stripPDFVolatile(b)))}}, nil
		},
	}, nil
}

func prepareBatik(env *Env) (*Prepared, error) {
	// The jar list of Debian's /usr/bin/rasterizer wrapper.
	cp, err := jars("libbatik-java", "batik-all.jar", "xercesImpl.jar", "xml-apis-ext.jar", "batik-transcoder.jar",
		"fop.jar", "xmlgraphics-commons.jar", "commons-logging.jar", "commons-io.jar")
	if err != nil {
		return nil, err
	}
	files, shapes := 5, 400
	if env.Quick {
		files, shapes = 4, 100
	}
	dir, err := env.generate("batik", fmt.Sprintf("batik v1 %d %d", files, shapes), func(dir string) error { return genSVG(dir, files, shapes) })
	if err != nil {
		return nil, err
	}
	return &Prepared{
		Jars:  cp,
		Input: fmt.Sprintf("%d SVG drawings of %d shapes (gradients, Béziers, transforms, text)", files, shapes),
		Steps: []Step{{Main: "org.apache.batik.apps.rasterizer.Main", JVM: []string{"-Djava.awt.headless=true"},
			Args: []string{"-scriptSecurityOff", "-m", "image/png", "-d", "png", filepath.Join(dir, "svg")}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			lines, err := pngPixelDigests(filepath.Join(runDir, "png"))
			if err != nil {
				return Output{}, err
			}
			if len(lines) != files {
				return Output{}, fmt.Errorf("rasterizer wrote %d PNG files, the input has %d SVG files", len(lines), files)
			}
			return Output{Lines: lines}, nil
		},
	}, nil
}

func prepareParallel(env *Env) (*Prepared, error) {
	jar, err := env.buildParallelJar()
	if err != nil {
		return nil, err
	}
	threads, tasks, longs := "64", "64", "1000000"
	if env.Quick {
		tasks, longs = "16", "200000"
	}
	return &Prepared{
		Jars:  []string{jar},
		Input: fmt.Sprintf("%s threads, %s tasks sorting %s-long arrays, plus a parallel stream", threads, tasks, longs),
		Steps: []Step{{Main: "bench.parallel.ParallelAlloc", Args: []string{threads, tasks, longs}}},
		Check: func(runDir string, outs []StepOutput) (Output, error) {
			for _, l := range strings.Split(string(outs[0].Stdout), "\n") {
				if strings.HasPrefix(l, "RESULT ") {
					return Output{Lines: []string{l}}, nil
				}
			}
			return Output{}, fmt.Errorf("ParallelAlloc printed no RESULT line")
		},
	}, nil
}

// buildParallelJar compiles the suite's own Java workload to Java 8 bytecode, like every other
// jar the rewriter sees, and packs it as a jar so rewriting modes treat it like the Debian jars.
func (env *Env) buildParallelJar() (string, error) {
	// Not in a heapledger.* package: the rewriter never instruments those (its own runtime).
	src := filepath.Join(env.Root, "bench", "suite", "java", "bench", "parallel", "ParallelAlloc.java")
	b, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(env.Out, "build", "parallel-"+sha256Hex(b)[:12])
	jar := filepath.Join(dir, "parallel-alloc.jar")
	if _, err := os.Stat(jar); err == nil {
		return jar, nil
	}
	classes := filepath.Join(dir, "classes")
	if err := os.MkdirAll(classes, 0o755); err != nil {
		return "", err
	}
	if out, err := env.command(dir, env.Javac, "--release", "8", "-d", classes, src); err != nil {
		return "", fmt.Errorf("javac ParallelAlloc: %v\n%s", err, out)
	}
	if out, err := env.command(dir, env.JarTool, "cf", jar+".tmp", "-C", classes, "."); err != nil {
		return "", fmt.Errorf("jar ParallelAlloc: %v\n%s", err, out)
	}
	return jar, os.Rename(jar+".tmp", jar)
}

func grepLines(s, substr string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// headTail keeps the start of a failure (the exception and its message) and its end (what the
// program was doing when it died), which is what a reader needs from a long stack trace.
func headTail(b []byte, head, tailN int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) <= head+tailN {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:head], "\n") + fmt.Sprintf("\n\t… %d lines …\n", len(lines)-head-tailN) + strings.Join(lines[len(lines)-tailN:], "\n")
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// treeDigests returns "relative-path sha256" for every file under root with the suffix, sorted.
func treeDigests(root, suffix string) ([]string, error) {
	var lines []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, suffix) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		lines = append(lines, rel+" "+sha256Hex(b))
		return nil
	})
	sort.Strings(lines)
	return lines, err
}
