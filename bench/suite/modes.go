package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// Mode is one way of running a workload. The table below is the single place modes are defined;
// later work adds rows (heapledger's agent, further rewrite passes) without touching the runner.
type Mode struct {
	Name string
	What string // one line for the doc: what runs and how
	// Available returns nil when the mode can run on this machine, or why it cannot; modes that
	// cannot run are skipped with that reason printed and written to the doc.
	Available func(env *Env) error
	// Launch turns a prepared workload into this mode's JVM options and classpath. It runs once
	// per workload before any timed run, so one-off costs (rewriting jars) stay out of the timings
	// and are reported separately.
	Launch func(env *Env, w *Workload, p *Prepared) (*Launch, error)
	// Verify, when set, checks after each run that the mode really did its work (a recording
	// was written, a snapshot exists), so a mode that silently does nothing cannot look cheap.
	Verify func(env *Env, runDir string) error
	// OptIn modes run only when named in -modes: variants worth measuring now and then whose
	// cost the default run (and the quick suite in the tests) should not pay every time.
	OptIn bool
}

// Launch is how one mode runs one workload. "{run}" in JVM options stands for the run directory.
type Launch struct {
	JVM       []string
	Classpath []string
	Prep      string // one-off preparation, e.g. "rewrite 12.1 s", for the doc
}

const allocInstrumenterJar = "/usr/share/java/java-allocation-instrumenter.jar"

var modes = []*Mode{
	{
		Name:      "plain",
		What:      "the workload as packaged, no agent",
		Available: func(*Env) error { return nil },
		Launch:    plainLaunch,
	},
	{
		Name: "alloc-instrumenter",
		What: "Google's allocation instrumenter 3.1.0 (Debian libjava-allocation-instrumenter-java) as -javaagent, no sampler registered; " +
			"its bundled ASM cannot read JDK 17 class files, so it instruments the application's classes and logs a warning per JDK class",
		Available: func(*Env) error {
			_, err := os.Stat(allocInstrumenterJar)
			if err != nil {
				return fmt.Errorf("%s missing: install libjava-allocation-instrumenter-java", allocInstrumenterJar)
			}
			return nil
		},
		Launch: func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
			l, _ := plainLaunch(env, w, p)
			// The jar bundles its own ASM and Guava and appends itself to the boot class path
			// from premain, so nothing else has to be on any class path.
			l.JVM = append(l.JVM, "-javaagent:"+allocInstrumenterJar)
			return l, nil
		},
	},
	{
		Name:      "jfr-alloc",
		What:      "JDK Flight Recorder with only jdk.ObjectAllocationSample enabled (throttle 150/s, stack traces), recording to a file in the run directory",
		Available: func(*Env) error { return nil },
		Launch: func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
			jfc, err := env.writeJFRSettings()
			if err != nil {
				return nil, err
			}
			l, _ := plainLaunch(env, w, p)
			l.JVM = append(l.JVM, "-XX:StartFlightRecording=settings="+jfc+",filename={run}/alloc.jfr",
				// JFR announces the recording on stdout; keep stdout the program's own.
				"-Xlog:jfr+startup=warning")
			return l, nil
		},
		Verify: verifyJFR,
	},
	// heapledger's offline modes, one per pass worth measuring. Each is offered only when the
	// binary's rewrite command lists the pass and flags and the jars it needs are built.
	offlineMode("heapledger-identity", "identity", nil, nil,
		"every class decoded and re-encoded by `bin/heapledger rewrite` without edits: the engine's own cost, which should be none"),
	offlineMode("heapledger-probe", "probe", nil, []string{"build/heapledger-probe.jar"},
		"the probe pass: calls into heapledger.probe.Probe at method entry, exits and allocations"),
	withVerify(offlineMode("heapledger-count", "count", []string{"--accounts", "*", "--embed-runtime"}, nil,
		"the product: every package an account, every allocation counted exactly, runtime embedded; each run must write its exit snapshot"),
		verifySnapshot),
	// Path counters (issue 29): the same options, objects counted by DuckTracks path counters.
	// `-compare heapledger-count,heapledger-count-paths` checks that both write the same rows.
	withVerify(offlineMode("heapledger-count-paths", "count", []string{"--accounts", "*", "--counters", "paths", "--embed-runtime"}, nil,
		"heapledger-count with objects counted by path counters (about one increment per method execution, turned back into the same rows at snapshot time); each run must write its exit snapshot"),
		verifySnapshot),
	// Profiles (issue 29, profile.go): a profiling run, and path counters planned from it.
	edgesMode(),
	profileMode(),
	// What users run (issue 35): the program's own main packages as accounts, so methods switch
	// accounts at the boundaries between them; '*' above is the one configuration where none do.
	accountsMode("heapledger-accounts", nil,
		"the count pass with the workload's main packages as 6–15 memory accounts (listed in the workload table), as a user would account them; each run must write its exit snapshot"),
	// Where heapledger-accounts' switching goes (issue 35): the same rewrite counting the
	// account switches that run and the ones left out. Counting costs a call per method entry,
	// so it is never timed: `-switches` runs it once per workload and prints the figures.
	optIn(accountsMode(switchesMode, []string{"--count-increments"},
		"heapledger-accounts counting account switches (--count-increments), for -switches: not a cost to time")),
	// Calling contexts (issue 30): heapledger-count plus a per-thread calling-context tree that
	// every method that allocates or calls enters; JP's own calling-context profiling cost up
	// to 10x on SPEC JVM98. jfr-alloc above is the sampled peer with stacks.
	withVerify(offlineMode("heapledger-cct", "count", []string{"--accounts", "*", "--context", "cct", "--embed-runtime"}, nil,
		"heapledger-count with calling contexts (--context cct): exact counts per calling context; each run must write its exit snapshot with the tree"),
		verifyContexts),
	// Liveness (issue 4): the count pass plus a weak reference per tracked object.
	withVerify(offlineMode("heapledger-live-sample64", "count", []string{"--accounts", "*", "--liveness", "sample:64", "--embed-runtime"}, nil,
		"heapledger-count with liveness sampled: every 64th allocation per thread and site tracked by a weak reference, refunded when reclaimed"),
		verifySnapshot),
	withVerify(offlineMode("heapledger-live-all", "count", []string{"--accounts", "*", "--liveness", "all", "--embed-runtime"}, nil,
		"heapledger-count with exact liveness: every counted object tracked by a weak reference, refunded when reclaimed"),
		verifySnapshot),
	// The agent (issue 7): the same count options, the unmodified jars, classes rewritten as
	// they load by the transform service. Its start-up (first output, per-class transform
	// latency) is in the start-up table beside plain and the offline rows.
	agentMode("heapledger-agent", []string{"--accounts", "*"}, false,
		"heapledger-count's options through the agent: the unmodified jars, every class rewritten as it loads by `heapledger serve`; each run must write its exit snapshot"),
	// What users run under the agent (issue 35): heapledger-accounts' accounts, the classes
	// rewritten as they load; the service reads the class path as offline rewriting reads its
	// jars (docs/agent.md, "The class path as the input").
	agentMode("heapledger-agent-accounts", []string{"--accounts", "LIST"}, true,
		"heapledger-accounts' accounts (the workload table's) through the agent: the unmodified jars, every class rewritten as it loads; each run must write its exit snapshot"),
	agentMode("heapledger-agent-jdk", []string{"--accounts", "*", "--jdk"}, true,
		"heapledger-agent with the JDK's own classes rewritten too (by retransformation)"),
	// Path counters through the agent (issue 29), static and adaptive (--adapt: each class
	// profiled first, then re-instrumented from its own edge counts); for -compare against
	// heapledger-agent, whose rows they must equal.
	agentMode("heapledger-agent-paths", []string{"--accounts", "*", "--counters", "paths"}, true,
		"heapledger-agent with --counters paths, planned from static estimates"),
	agentMode("heapledger-agent-adapt", []string{"--accounts", "*", "--counters", "paths", "--adapt", "1000"}, true,
		"heapledger-agent with adaptive path counters: each class profiled by --counters edges, then re-instrumented from its own edge counts once they reach 1000"),
	withVerify(agentMode("heapledger-agent-objinit", []string{"--accounts", "*", "--object-init"}, true,
		"heapledger-agent with java.lang.Object's constructor hooked: every object constructed is counted again by class; each snapshot must hold the hook's sites"),
		verifyObjectInit),
}

func optIn(m *Mode) *Mode {
	m.OptIn = true
	return m
}

func withVerify(m *Mode, v func(*Env, string) error) *Mode {
	m.Verify = v
	return m
}

// verifySnapshot checks that the counting runtime wrote its exit snapshot (into the working
// directory, which is the run directory) and that the snapshot counted allocation sites, so a
// rewrite that silently instruments nothing cannot pass as cheap.
func verifySnapshot(env *Env, runDir string) error { return checkSnapshots(runDir, "", "") }

// verifyContexts is verifySnapshot for --context cct: each snapshot must hold the tree, and
// the tree's rows must add up to the snapshot's flat rows, per (account, site, part), exactly.
func verifyContexts(env *Env, runDir string) error {
	if err := checkSnapshots(runDir, "\nnode\t", "no calling-context tree (node lines)"); err != nil {
		return err
	}
	snaps, err := filepath.Glob(filepath.Join(runDir, "heapledger-*.snapshot"))
	if err != nil {
		return err
	}
	for _, p := range snaps {
		s, err := snapshot.ReadFile(p)
		if err != nil {
			return err
		}
		type key struct{ account, site, part int }
		diff := map[key]int64{}
		for _, r := range s.Rows {
			diff[key{r.Account, r.Site, r.Part}] += r.Count
		}
		for _, c := range s.Contexts {
			for _, r := range c.Rows {
				diff[key{r.Account, r.Site, r.Part}] -= r.Count
			}
		}
		for k, d := range diff {
			if d != 0 {
				return fmt.Errorf("%s: the calling contexts hold %d fewer allocations than the flat row of account %d, site %d, part %d", p, d, k.account, k.site, k.part)
			}
		}
	}
	return nil
}

// checkSnapshots is verifySnapshot, and when mustHold is set, also that every snapshot holds it
// (missing says what is then missing).
func checkSnapshots(runDir, mustHold, missing string) error {
	snaps, err := filepath.Glob(filepath.Join(runDir, "heapledger-*.snapshot"))
	if err != nil {
		return err
	}
	if len(snaps) == 0 {
		return fmt.Errorf("no heapledger-*.snapshot written in %s", runDir)
	}
	for _, s := range snaps {
		b, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(b, []byte("# heapledger snapshot")) {
			return fmt.Errorf("%s is not a heapledger snapshot", s)
		}
		if !bytes.Contains(b, []byte("\nsite\t")) {
			return fmt.Errorf("%s counts no allocation site", s)
		}
		if mustHold != "" && !bytes.Contains(b, []byte(mustHold)) {
			return fmt.Errorf("%s has %s", s, missing)
		}
	}
	return nil
}

func plainLaunch(env *Env, w *Workload, p *Prepared) (*Launch, error) {
	cp := append(append([]string{}, p.Jars...), p.ExtraCP...)
	return &Launch{Classpath: cp}, nil
}

// offlineMode is a heapledger mode that rewrites the workload's jars once with
//
//	bin/heapledger rewrite --pass PASS FLAGS -o DIR/WORKLOAD.jar JAR...
//
// (cached per workload, pass, flags and binary; rewrite merges its inputs like a class path, the
// first entry of a name winning), then runs the workload with that jar in place of its jars,
// followed by the jars in needs (paths in the checkout) and any other jar the rewrite wrote into
// DIR. The mode is offered only when `rewrite --help` succeeds and lists the pass and every flag,
// and the needed jars exist.
func offlineMode(name, pass string, flags, needs []string, what string) *Mode {
	return offlineModeFor(name, pass, flags, nil, needs, what)
}

// accountsMode is heapledger-count with each workload's own accounts (Workload.Accounts) in
// place of '*'. A pattern that matches no class of the workload fails the mode rather than
// measuring fewer accounts than the doc says.
func accountsMode(name string, extra []string, what string) *Mode {
	m := offlineModeFor(name, "count", append([]string{"--accounts", "LIST", "--embed-runtime"}, extra...), func(w *Workload) []string {
		return []string{"--accounts", strings.Join(w.Accounts, ",")}
	}, nil, what)
	launch := m.Launch
	m.Launch = func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
		if len(w.Accounts) == 0 {
			return nil, fmt.Errorf("workload %s names no accounts", w.Name)
		}
		l, err := launch(env, w, p)
		if err != nil {
			return nil, err
		}
		log, err := os.ReadFile(filepath.Join(filepath.Dir(l.Classpath[0]), "rewrite.log"))
		if err != nil {
			return nil, err
		}
		if i := bytes.Index(log, []byte("matched no class")); i >= 0 {
			start := bytes.LastIndexByte(log[:i], '\n') + 1
			end := i + bytes.IndexByte(log[i:], '\n')
			return nil, fmt.Errorf("%s: the accounts of workload %s do not fit its jars: %s", name, w.Name, log[start:end])
		}
		return l, nil
	}
	return withVerify(m, verifySnapshot)
}

// offlineModeFor is offlineMode where perWorkload, when set, gives flags that depend on the
// workload; they replace the flags of the same names in flags, which stand for them in the
// help check and the doc.
func offlineModeFor(name, pass string, flags []string, perWorkload func(*Workload) []string, needs []string, what string) *Mode {
	all := append([]string{"--pass", pass}, flags...)
	return &Mode{
		Name: name,
		What: what + flagNote(all),
		Available: func(env *Env) error {
			out, err := env.commandHelp("rewrite", all)
			if err != nil {
				return err
			}
			if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(pass) + `\s`).Match(out) {
				return fmt.Errorf("`%s rewrite --help` lists no %s pass yet", env.Bin, pass)
			}
			for _, n := range needs {
				if _, err := os.Stat(filepath.Join(env.Root, n)); err != nil {
					return fmt.Errorf("%s is not built (make build)", n)
				}
			}
			return nil
		},
		Launch: func(env *Env, w *Workload, p *Prepared) (*Launch, error) {
			flags := all
			if perWorkload != nil {
				flags = replaceFlags(all, perWorkload(w))
			}
			l, err := env.rewriteOffline(name, flags, w, p)
			if err != nil {
				return nil, err
			}
			// The needed jars are copied beside the rewritten one, so a rebuild in the checkout
			// during a long suite run cannot change what later runs of this mode load.
			var cp []string
			for _, n := range needs {
				b, err := os.ReadFile(filepath.Join(env.Root, n))
				if err != nil {
					return nil, err
				}
				dst := filepath.Join(filepath.Dir(l.Classpath[0]), "needs", filepath.Base(n))
				if err := writeFile(dst, string(b)); err != nil {
					return nil, err
				}
				cp = append(cp, dst)
			}
			l.Classpath = append(append(l.Classpath[:1:1], cp...), l.Classpath[1:]...)
			return l, nil
		},
	}
}

// replaceFlags returns flags with the value of each flag named in with (pairs of name, value)
// replaced by with's.
func replaceFlags(flags, with []string) []string {
	out := append([]string(nil), flags...)
	for i := 0; i+1 < len(with); i += 2 {
		for j := 0; j+1 < len(out); j++ {
			if out[j] == with[i] {
				out[j+1] = with[i+1]
			}
		}
	}
	return out
}

// commandHelp returns `BIN COMMAND --help`, or why the binary cannot serve a mode: it is not
// built, has no such command, or its help lists not every flag of flags.
func (env *Env) commandHelp(command string, flags []string) ([]byte, error) {
	if _, err := os.Stat(env.Bin); err != nil {
		return nil, fmt.Errorf("%s not built (make build)", env.Bin)
	}
	out, err := exec.Command(env.Bin, command, "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s has no %s command yet (`%s --help`: %v)", env.Bin, command, command, err)
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "--") && !bytes.Contains(out, []byte(f)) {
			return nil, fmt.Errorf("`%s %s` has no %s flag yet", env.Bin, command, f)
		}
	}
	return out, nil
}

func flagNote(flags []string) string {
	return " (`rewrite " + strings.Join(flags, " ") + "`)"
}

// rewriteOffline runs the rewrite into a cache directory keyed by the binary, the flags and the
// input jars, so a rerun of the suite with the same binary does not pay for rewriting again but
// a rebuilt binary always does.
func (env *Env) rewriteOffline(mode string, flags []string, w *Workload, p *Prepared) (*Launch, error) {
	binSum, err := fileDigest(env.Bin)
	if err != nil {
		return nil, err
	}
	key := []string{binSum, strings.Join(flags, "\x00")}
	// The runtime and agent jars the binary embeds sit beside it (make build): a rebuilt runtime
	// with the same binary must not reuse jars that carry the old one.
	for _, name := range []string{"heapledger-runtime.jar", "heapledger-agent.jar"} {
		if sum, err := fileDigest(filepath.Join(filepath.Dir(env.Bin), name)); err == nil {
			key = append(key, name+" "+sum)
		}
	}
	for _, j := range p.Jars {
		st, err := os.Stat(j)
		if err != nil {
			return nil, err
		}
		key = append(key, fmt.Sprintf("%s %d %d", j, st.Size(), st.ModTime().UnixNano()))
	}
	dir := filepath.Join(env.Out, "rewritten", mode, w.Name, sha256Hex([]byte(strings.Join(key, "\n")))[:16])
	stampPath := filepath.Join(dir, ".done")
	prep := ""
	if b, err := os.ReadFile(stampPath); err == nil {
		prep = strings.TrimSpace(string(b)) + " (cached)"
	} else {
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args := append([]string{"rewrite"}, flags...)
		args = append(args, "-o", filepath.Join(dir, w.Name+".jar"))
		args = append(args, p.Jars...)
		env.logf("%s: %s %s", w.Name, env.Bin, strings.Join(args, " "))
		start := time.Now()
		cmd := exec.Command(env.Bin, args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s rewrite of %s failed: %v\n%s", mode, w.Name, err, tail(out.Bytes(), 30))
		}
		prep = fmt.Sprintf("rewrite %.1f s", time.Since(start).Seconds())
		if err := os.WriteFile(filepath.Join(dir, "rewrite.log"), out.Bytes(), 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(stampPath, []byte(prep), 0o644); err != nil {
			return nil, err
		}
	}
	out := filepath.Join(dir, w.Name+".jar")
	if _, err := os.Stat(out); err != nil {
		return nil, fmt.Errorf("%s: the rewrite of %s reported success but wrote no %s", mode, w.Name, out)
	}
	cp := []string{out}
	// Anything else the rewrite put beside its output (a runtime jar) goes on the class path too.
	extra, err := filepath.Glob(filepath.Join(dir, "*.jar"))
	if err != nil {
		return nil, err
	}
	for _, e := range extra {
		if e != out {
			cp = append(cp, e)
		}
	}
	cp = append(cp, p.ExtraCP...)
	return &Launch{Classpath: cp, Prep: prep}, nil
}

// writeJFRSettings writes a recording configuration with nothing but allocation sampling, so
// the JFR row measures the sampler rather than JFR's default event set.
func (env *Env) writeJFRSettings() (string, error) {
	path := filepath.Join(env.Out, "jfr", "alloc-sample.jfc")
	const jfc = `<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="heapledger-bench" description="allocation sampling only" provider="heapledger">
  <event name="jdk.ObjectAllocationSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">150/s</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
`
	return path, writeFile(path, jfc)
}

// verifyJFR checks that the recording exists and holds allocation samples; JFR's own `jfr
// summary` reads it, so a recording that is empty or unreadable fails the mode.
func verifyJFR(env *Env, runDir string) error {
	rec := filepath.Join(runDir, "alloc.jfr")
	st, err := os.Stat(rec)
	if err != nil {
		return fmt.Errorf("no JFR recording written: %v", err)
	}
	if st.Size() == 0 {
		return fmt.Errorf("JFR recording %s is empty", rec)
	}
	if env.JFRTool == "" {
		return nil
	}
	out, err := exec.Command(env.JFRTool, "summary", rec).CombinedOutput()
	if err != nil {
		return fmt.Errorf("jfr summary %s: %v\n%s", rec, err, tail(out, 10))
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "jdk.ObjectAllocationSample" {
			if f[1] == "0" {
				return fmt.Errorf("JFR recording has no jdk.ObjectAllocationSample events")
			}
			return nil
		}
	}
	return fmt.Errorf("JFR recording has no jdk.ObjectAllocationSample events:\n%s", tail(out, 20))
}

func fileDigest(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}
