// Command suite is heapledger's real-workload benchmark: it runs programs from Debian packages on
// generated input in every available mode (plain, Google's allocation instrumenter, JFR allocation
// sampling, heapledger's modes), checks that every run's output equals plain's, and writes the
// overhead table to docs/benchmarks.md. bench/run.sh is the one command that builds what it needs
// and runs it; `go run ./bench/suite --quick` is the correctness-only subset the tests use;
// `-compare A,B` runs each workload once in two modes and compares their snapshots' rows.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/heapledger/heapledger/internal/loadavg"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}
	os.Exit(code)
}

// run is main without the exit, so the test can drive the real command line. It returns 1 when
// any mode crashed or produced a different output, 2 for bad usage or a broken setup.
func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	fs.SetOutput(stderr)
	quick := fs.Bool("quick", false, "correctness only: the small workloads at small sizes, no warm-up, one measured round, no doc unless -doc is given")
	warmup := fs.Int("warmup", 1, "warm-up rounds per workload and mode, discarded")
	runs := fs.Int("runs", 3, "measured rounds per workload and mode")
	only := fs.String("workloads", "", "comma-separated workloads to run (default: all; with -quick: "+strings.Join(quickNames(), ",")+")")
	modeList := fs.String("modes", "", "comma-separated modes to run besides plain (default: every available mode)")
	doc := fs.String("doc", "", "Markdown file to write (default: docs/benchmarks.md, or none with -quick)")
	note := fs.String("note", "", "a remark printed at the top of the doc, e.g. about machine load")
	java := fs.String("java", "", "java launcher (default: $JAVA_HOME/bin/java, else java on PATH)")
	bin := fs.String("bin", "", "heapledger binary (default: bin/heapledger in the checkout)")
	out := fs.String("out", "", "scratch directory for inputs, rewritten jars and runs (default: bench/out)")
	timeout := fs.Duration("timeout", 10*time.Minute, "limit for one JVM run; a run that exceeds it fails its mode")
	maxTime := fs.Duration("max-time", 0, "stop starting new rounds when the next would end after this much time (0: run all rounds); the doc says how many were measured")
	keep := fs.Bool("keep", false, "keep every run directory (failed runs are always kept)")
	list := fs.Bool("list", false, "list workloads and modes, with availability, and exit")
	switches := fs.Bool("switches", false, "instead of timing, run each workload once in "+switchesMode+" (heapledger-accounts counting its account switches) and print the switches that ran and were left out, per workload")
	compare := fs.String("compare", "", "A,B: instead of timing, run each workload once in mode A and once in B, as deterministically as it allows (one processor), and compare their snapshots' rows and counter increments")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./bench/suite [flags]   (bench/run.sh wraps this)\n\nworkloads: %s\nmodes: %s\n\n",
			strings.Join(workloadNames(), ", "), strings.Join(modeNames(), ", "))
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, nil
		}
		return 2, err
	}
	if fs.NArg() > 0 {
		return 2, fmt.Errorf("unexpected arguments %q (workloads are chosen with -workloads)", fs.Args())
	}
	if *quick {
		if !flagSet(fs, "warmup") {
			*warmup = 0
		}
		if !flagSet(fs, "runs") {
			*runs = 1
		}
	} else if *doc == "" {
		*doc = "docs/benchmarks.md"
	}
	if *runs < 1 || *warmup < 0 {
		return 2, fmt.Errorf("-runs must be at least 1 and -warmup at least 0")
	}

	root, err := findRoot()
	if err != nil {
		return 2, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	env := &Env{Ctx: ctx, Root: root, Quick: *quick, Keep: *keep, Log: stderr}
	env.Java, env.Javac, env.JarTool, env.JFRTool, err = findJDK(*java)
	if err != nil {
		return 2, err
	}
	env.Bin = orDefault(*bin, filepath.Join(root, "bin", "heapledger"))
	env.Out = orDefault(*out, filepath.Join(root, "bench", "out"))
	if env.Out, err = filepath.Abs(env.Out); err != nil {
		return 2, err
	}
	if *quick {
		// Quick inputs are smaller; keep them apart so they never replace the full-size ones.
		env.Out = filepath.Join(env.Out, "quick")
	}

	ws, err := selectWorkloads(*only, *quick)
	if err != nil {
		return 2, err
	}
	if *compare != "" {
		return runCompare(env, ws, *compare, stdout)
	}
	if *switches {
		return runSwitches(env, ws, stdout)
	}
	ms, skipped, err := selectModes(env, *modeList)
	if err != nil {
		return 2, err
	}
	if *list {
		for _, w := range workloads {
			fmt.Fprintf(stdout, "workload %-9s %s\n", w.Name, w.Program)
		}
		for _, m := range modes {
			status := "available"
			if why, ok := skipped[m.Name]; ok {
				status = "not available: " + why
			}
			fmt.Fprintf(stdout, "mode %-20s %s\n", m.Name, status)
		}
		return 0, nil
	}
	for _, m := range modes {
		if why, ok := skipped[m.Name]; ok {
			env.logf("mode %s skipped: %s", m.Name, why)
		}
	}

	started := time.Now()
	rep := &Report{Machine: describeMachine(env), Command: commandLine(args), Note: *note,
		Options: Options{Warmup: *warmup, Runs: *runs, Timeout: *timeout}, Modes: ms, Skipped: skipped}
	results, err := prepare(env, ws, ms)
	if err != nil {
		return 2, err
	}
	rep.Results = results
	docPath := *doc
	if docPath != "" && !filepath.IsAbs(docPath) {
		docPath = filepath.Join(root, docPath)
	}
	var docErr error
	writeDoc := func(measured int) {
		rep.Measured = measured
		rep.Machine.LoadEnd = loadavg.Read()
		rep.Duration = time.Since(started).Round(time.Second).String()
		if docPath == "" || (measured == 0 && !rep.anyPairs()) {
			return
		}
		if docErr = writeFile(docPath, rep.Markdown()); docErr == nil {
			env.logf("wrote %s (%d of %d measured rounds)", docPath, measured, *runs)
		}
	}
	rep.Options.MaxTime = *maxTime
	rep.Options.AfterRound = writeDoc
	rep.Options.Unpaired = *quick
	rep.Running = true
	rep.Stop = runSuite(env, results, rep.Options)
	rep.Running = false
	// The doc written after the last round said the run was still going; this one says how
	// it ended. After an interrupt it keeps what the unfinished round measured, marked partial.
	rep.Interrupted = ctx.Err() != nil
	writeDoc(rep.Measured)

	fmt.Fprint(stdout, rep.Tables())
	if docErr != nil {
		return 2, docErr
	}
	if ctx.Err() != nil {
		return 1, fmt.Errorf("interrupted after %d measured round(s)", rep.Measured)
	}
	if f := rep.Failures(); len(f) > 0 {
		for _, x := range f {
			fmt.Fprintln(stderr, "FAILED:", x)
		}
		return 1, fmt.Errorf("%d workload/mode combination(s) failed; a wrong or missing output fails the suite whatever the speed", len(f))
	}
	return 0, nil
}

// runCompare is -compare A,B: each workload once in both modes, rows and increments compared.
func runCompare(env *Env, ws []*Workload, pair string, stdout io.Writer) (int, error) {
	names := strings.Split(pair, ",")
	if len(names) != 2 {
		return 2, fmt.Errorf("-compare %q: want two modes, A,B", pair)
	}
	var ms []*Mode
	for _, n := range names {
		m := findMode(strings.TrimSpace(n))
		if m == nil {
			return 2, fmt.Errorf("unknown mode %q (have %s)", n, strings.Join(modeNames(), ", "))
		}
		if err := m.Available(env); err != nil {
			return 2, fmt.Errorf("mode %s cannot run: %v", m.Name, err)
		}
		ms = append(ms, m)
	}
	results, err := prepare(env, ws, distinct(ms))
	if err != nil {
		return 2, err
	}
	bad := 0
	for _, c := range compareModes(env, results, ms[0].Name, ms[1].Name, stdout) {
		if c.Err != nil || len(c.Differ) > 0 {
			bad++
		}
	}
	if bad > 0 {
		return 1, fmt.Errorf("%d of %d workloads failed or differ", bad, len(results))
	}
	return 0, nil
}

// distinct is ms without repeats. A mode compared with itself (-compare A,A: the workload's
// own run-to-run variation) is prepared once, as two preparations would write its rewritten
// jars to the same place at once.
func distinct(ms []*Mode) []*Mode {
	var out []*Mode
	for _, m := range ms {
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// prepare generates inputs and builds each mode's launch (rewriting jars where a mode needs it).
// Launches are prepared in parallel because rewriting is the slow part and independent per
// workload; a mode that cannot prepare a workload is a failure of that mode, not of the suite.
func prepare(env *Env, ws []*Workload, ms []*Mode) ([]*Result, error) {
	var results []*Result
	for _, w := range ws {
		p, err := w.Prepare(env)
		if err != nil {
			return nil, fmt.Errorf("workload %s: %w", w.Name, err)
		}
		results = append(results, &Result{W: w, P: p, Modes: ms, Launches: map[string]*Launch{},
			Pairs: map[string][]Pair{}, Failed: map[string]string{}})
	}
	type job struct {
		r *Result
		m *Mode
	}
	var jobs []job
	for _, r := range results {
		for _, m := range ms {
			jobs = append(jobs, job{r, m})
		}
	}
	launches := make([]*Launch, len(jobs))
	errs := make([]error, len(jobs))
	// go.mod does not carry golang.org/x/sync yet, so a channel bounds the parallelism.
	var wg sync.WaitGroup
	slots := make(chan struct{}, runtime.NumCPU())
	for i, j := range jobs {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			launches[i], errs[i] = j.m.Launch(env, j.r.W, j.r.P)
		}()
	}
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			j.r.Failed[j.m.Name] = "preparing the mode: " + errs[i].Error()
			env.logf("%s %s: FAILED to prepare: %v", j.r.W.Name, j.m.Name, errs[i])
			continue
		}
		j.r.Launches[j.m.Name] = launches[i]
	}
	return results, nil
}

func selectWorkloads(only string, quick bool) ([]*Workload, error) {
	if only == "" {
		var ws []*Workload
		for _, w := range workloads {
			if !quick || w.InQuick {
				ws = append(ws, w)
			}
		}
		return ws, nil
	}
	var ws []*Workload
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		found := false
		for _, w := range workloads {
			if w.Name == name {
				ws, found = append(ws, w), true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(workloadNames(), ", "))
		}
	}
	return ws, nil
}

// selectModes returns plain first and then the requested or available modes. A mode asked for
// by name that cannot run is an error; a mode left to the default that cannot run is skipped
// and the reason kept for the doc.
func selectModes(env *Env, list string) ([]*Mode, map[string]string, error) {
	skipped := map[string]string{}
	want := map[string]bool{}
	if list != "" {
		for _, n := range strings.Split(list, ",") {
			n = strings.TrimSpace(n)
			if findMode(n) == nil {
				return nil, nil, fmt.Errorf("unknown mode %q (have %s)", n, strings.Join(modeNames(), ", "))
			}
			want[n] = true
		}
	}
	ms := []*Mode{modes[0]}
	for _, m := range modes[1:] {
		if list != "" && !want[m.Name] {
			skipped[m.Name] = "not selected for this run (-modes)"
			continue
		}
		if m.OptIn && !want[m.Name] {
			skipped[m.Name] = "runs only when named in -modes"
			continue
		}
		if err := m.Available(env); err != nil {
			if want[m.Name] {
				return nil, nil, fmt.Errorf("mode %s cannot run: %v", m.Name, err)
			}
			skipped[m.Name] = err.Error()
			continue
		}
		ms = append(ms, m)
	}
	return ms, skipped, nil
}

func findMode(name string) *Mode {
	for _, m := range modes {
		if m.Name == name {
			return m
		}
	}
	return nil
}

func workloadNames() []string { return namesOf(false) }

func quickNames() []string { return namesOf(true) }

func namesOf(quickOnly bool) []string {
	var n []string
	for _, w := range workloads {
		if w.InQuick || !quickOnly {
			n = append(n, w.Name)
		}
	}
	return n
}

func modeNames() []string {
	var n []string
	for _, m := range modes {
		n = append(n, m.Name)
	}
	return n
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// commandLine is the command the doc tells readers to run: bench/run.sh passes its own command
// line in HEAPLEDGER_BENCH_COMMAND, since that is what regenerates the doc.
func commandLine(args []string) string {
	if c := os.Getenv("HEAPLEDGER_BENCH_COMMAND"); c != "" {
		return c
	}
	return strings.TrimSpace("go run ./bench/suite " + shellQuote(args))
}

func shellQuote(args []string) string {
	var q []string
	for _, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q = append(q, a)
	}
	return strings.Join(q, " ")
}

// findRoot walks up from the working directory to the module's go.mod, so the suite works when
// run from the checkout root (bench/run.sh) and from its own directory (go test).
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module github.com/heapledger/heapledger") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the heapledger checkout (no go.mod for github.com/heapledger/heapledger above the working directory)")
		}
		dir = parent
	}
}
