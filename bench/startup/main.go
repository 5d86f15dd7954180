//go:build linux

// Command startup measures what heapledger adds to the start-up of short real programs (issue
// 36): each program runs plain, offline-rewritten, under the agent with an empty transform cache
// (first run) and again with the cache that run filled (second run), and under Google's
// allocation instrumenter, in rounds; it prints medians of wall and CPU time as a Markdown table.
//
//	go run ./bench/startup [-rounds 3] [-programs ecj,groovy] [-work DIR]
//
// The benchmark, step by step:
//
//  1. Every program's input is written and its jars are rewritten offline once, untimed
//     (prepare, rewriteOffline); a program whose jars are not installed is left out and named.
//  2. The load average is read (loadavg.Read).
//  3. Per program, per round, the five modes run one after another (runRound), each in a fresh
//     directory: plain, offline, agent-first (a new empty cache directory), agent-second (that
//     directory again), instrumenter, each round starting one mode later (roundOrder). Wall
//     time runs until the command exits; CPU time is the command's and that of every process
//     it left behind, which is also waited for, so the first run's cache writes are finished
//     and counted before the second run starts (runTimed).
//  4. Every run's output (stdout and the files it wrote under out/) must equal plain's in the
//     first round, or the benchmark fails naming the program, mode and first difference; offline
//     and agent runs must have written a snapshot that counted sites, and the second run must
//     have had classes answered from the cache (checkRun).
//  5. Medians over rounds per program and mode, their ratios and the load average again are
//     printed as Markdown (writeTable).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/heapledger/heapledger/internal/loadavg"
)

// Config is one benchmark run.
type Config struct {
	Bin      string // the heapledger binary
	Work     string // inputs, rewritten jars, caches and run directories
	Java     string
	Rounds   int
	Programs []*Program
	Log      io.Writer // progress, one line per run
}

// modeNames are the modes in the order they run within a round.
var modeNames = []string{"plain", "offline", "agent-first", "agent-second", "instrumenter"}

const instrumenterJar = "/usr/share/java/java-allocation-instrumenter.jar"

func main() {
	cfg := Config{Log: os.Stderr}
	var names string
	flag.IntVar(&cfg.Rounds, "rounds", 3, "rounds of the five modes per program; medians are over rounds")
	flag.StringVar(&names, "programs", "", "comma-separated programs to run (default: all installed): ecj, groovy, clojure, scalac, h2")
	flag.StringVar(&cfg.Work, "work", filepath.Join(os.TempDir(), "heapledger-startup"), "work directory (rewritten jars are kept there between runs)")
	flag.StringVar(&cfg.Bin, "bin", "bin/heapledger", "the heapledger binary")
	flag.StringVar(&cfg.Java, "java", "java", "the java command")
	flag.Parse()
	all := programs()
	cfg.Programs = all
	if names != "" {
		cfg.Programs = nil
		for _, n := range strings.Split(names, ",") {
			p := findProgram(all, strings.TrimSpace(n))
			if p == nil {
				fmt.Fprintf(os.Stderr, "startup: no program %q\n", n)
				os.Exit(2)
			}
			cfg.Programs = append(cfg.Programs, p)
		}
	}
	if err := Run(&cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

func findProgram(ps []*Program, name string) *Program {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// prepared is a program ready to run: its arguments and the offline-rewritten class path.
type prepared struct {
	*Program
	Args      []string
	OfflineCP []string
	Samples   map[string][]Sample
	Stats     map[string][]agentStats // per agent mode, one per round
	Reference string                  // plain's output in the first round
}

// Run is the benchmark (steps in the package comment); the table goes to out.
func Run(cfg *Config, out io.Writer) error {
	var err error
	if cfg.Bin, err = filepath.Abs(cfg.Bin); err != nil {
		return err
	}
	if _, err := os.Stat(instrumenterJar); err != nil {
		return fmt.Errorf("%s missing: install libjava-allocation-instrumenter-java (scripts/install-deps.sh)", instrumenterJar)
	}
	if err := becomeSubreaper(); err != nil {
		return err
	}
	var ready []*prepared
	var left []string
	for _, p := range cfg.Programs {
		if j := p.missingJar(); j != "" {
			left = append(left, fmt.Sprintf("%s: %s is not installed (scripts/install-deps.sh)", p.Name, j))
			continue
		}
		pp, err := prepare(cfg, p)
		if err != nil {
			return fmt.Errorf("%s: %w", p.Name, err)
		}
		ready = append(ready, pp)
	}
	if len(ready) == 0 {
		return fmt.Errorf("no program to run: %s", strings.Join(left, "; "))
	}
	before := loadavg.Read()
	for _, p := range ready {
		for r := 1; r <= cfg.Rounds; r++ {
			if err := runRound(cfg, p, r); err != nil {
				return fmt.Errorf("%s, round %d: %w", p.Name, r, err)
			}
		}
	}
	writeTable(out, cfg, ready, left, before, loadavg.Read())
	return nil
}

// prepare writes p's input and rewrites its jars offline (step 1).
func prepare(cfg *Config, p *Program) (*prepared, error) {
	in := filepath.Join(cfg.Work, "inputs", p.Name)
	if err := os.RemoveAll(in); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(in, 0o755); err != nil {
		return nil, err
	}
	args, err := p.Input(in)
	if err != nil {
		return nil, err
	}
	cp, err := rewriteOffline(cfg, p)
	if err != nil {
		return nil, err
	}
	return &prepared{Program: p, Args: args, OfflineCP: cp, Samples: map[string][]Sample{}, Stats: map[string][]agentStats{}}, nil
}

// argv is the command line of one mode; cache is the agent's cache directory.
func (p *prepared) argv(cfg *Config, mode, cache string) []string {
	java := func(cp []string, jvm ...string) []string {
		a := append([]string{cfg.Java}, jvm...)
		a = append(a, "-cp", strings.Join(cp, ":"), p.Main)
		return append(a, p.Args...)
	}
	switch mode {
	case "offline":
		return java(p.OfflineCP)
	case "agent-first", "agent-second":
		a := []string{cfg.Bin, "run", "--accounts", strings.Join(p.Accounts, ","), "--stats", "--cache-dir", cache, "--"}
		return append(a, java(p.Jars)...)
	case "instrumenter":
		return java(p.Jars, "-javaagent:"+instrumenterJar)
	}
	return java(p.Jars)
}

// runRound runs the five modes once (step 3) and checks each run (step 4).
func runRound(cfg *Config, p *prepared, round int) error {
	cache := filepath.Join(cfg.Work, "cache", p.Name)
	if err := os.RemoveAll(cache); err != nil {
		return err
	}
	for _, mode := range roundOrder(round) {
		dir := filepath.Join(cfg.Work, "runs", p.Name, fmt.Sprintf("%s-%d", mode, round))
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, "out"), 0o755); err != nil {
			return err
		}
		res, err := runTimed(dir, p.argv(cfg, mode, cache))
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		if err := checkRun(p, mode, dir, res); err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		p.Samples[mode] = append(p.Samples[mode], res.Sample)
		fmt.Fprintf(cfg.Log, "%s round %d %-12s wall %6d ms  cpu %6d ms\n", p.Name, round, mode, res.Wall.Milliseconds(), res.CPU.Milliseconds())
	}
	return nil
}

// roundOrder is the modes in the order round runs them: each round starts one mode later than
// the one before, so no mode is always the first to read the jars or always runs after the
// heaviest; agent-second always comes right after agent-first, whose cache it reads.
func roundOrder(round int) []string {
	units := [][]string{{"plain"}, {"offline"}, {"agent-first", "agent-second"}, {"instrumenter"}}
	var order []string
	for i := range units {
		order = append(order, units[(i+round-1)%len(units)]...)
	}
	return order
}

// checkRun is step 4 for one run.
func checkRun(p *prepared, mode, dir string, res *Result) error {
	if p.Reference == "" && mode == "plain" {
		p.Reference = res.Output
	}
	if res.Output != p.Reference {
		return fmt.Errorf("the output differs from plain's, so this mode changed what the program does: %s (run directory %s)",
			firstDifference(p.Reference, res.Output), dir)
	}
	if mode == "plain" || mode == "instrumenter" {
		return nil
	}
	if err := checkSnapshot(dir); err != nil {
		return err
	}
	if mode == "offline" {
		return nil
	}
	st := parseAgentStats(res.Stderr)
	if st == nil {
		return fmt.Errorf("the agent printed no --stats line:\n%s", tail(res.Stderr, 20))
	}
	p.Stats[mode] = append(p.Stats[mode], *st)
	if mode == "agent-first" && st.Cached != 0 {
		return fmt.Errorf("a first run had %d classes answered from a cache that should be empty", st.Cached)
	}
	if mode == "agent-second" && st.Cached == 0 {
		return fmt.Errorf("the second run had no class answered from the first run's cache")
	}
	return nil
}

// checkSnapshot requires the exit snapshot with counted sites, so a mode that silently counts
// nothing cannot look cheap.
func checkSnapshot(dir string) error {
	snaps, _ := filepath.Glob(filepath.Join(dir, "heapledger-*.snapshot"))
	for _, s := range snaps {
		b, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		if bytes.HasPrefix(b, []byte("# heapledger snapshot")) && bytes.Contains(b, []byte("\nsite\t")) {
			return nil
		}
	}
	return fmt.Errorf("no heapledger snapshot with counted sites in %s", dir)
}

// agentStats is what the agent's --stats line says at exit (docs/agent.md): classes sent,
// answered from the cache (InJVM of them by the agent itself, without asking the service), and
// how long the JVM's class loading waited for answers in all.
type agentStats struct {
	Sent, Cached, InJVM int
	Waited              time.Duration
}

var statsLine = regexp.MustCompile(`heapledger agent: (\d+) classes sent, .*?(\d+) answered from the transform cache(?: \((\d+) read by the agent itself\))?(?:; .*?total (\d+) ms)?`)

func parseAgentStats(stderr []byte) *agentStats {
	m := statsLine.FindSubmatch(stderr)
	if m == nil {
		return nil
	}
	sent, _ := strconv.Atoi(string(m[1]))
	cached, _ := strconv.Atoi(string(m[2]))
	inJVM, _ := strconv.Atoi(string(m[3]))
	waited, _ := strconv.Atoi(string(m[4]))
	return &agentStats{Sent: sent, Cached: cached, InJVM: inJVM, Waited: time.Duration(waited) * time.Millisecond}
}
