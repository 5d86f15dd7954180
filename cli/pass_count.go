package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/paths"
)

// RuntimeJarName is the runtime that rewritten code calls; `make build` puts it beside the binary.
const RuntimeJarName = "heapledger-runtime.jar"

// countRun is the count pass set up for one run: the pass, its table and accounts.
type countRun struct {
	setup passSetup
	pass  *passlib.CountPass
	table *accounts.Table
	set   *accounts.Set
	// runtime holds the runtime's classes to embed (--embed-runtime), read at setup so that a
	// missing runtime fails the run before any class is rewritten.
	runtime map[string][]byte
	// profile is --profile's edge profile, nil without one.
	profile *paths.Profile
	// opts are the pass's options, from which --adapt's re-instrumenting passes are made.
	opts passlib.CountOptions
}

func init() {
	registerPass("count", "memory accounts and exact allocation counts (the product; --accounts chooses the accounts); writes OUTPUT.table.tsv and needs "+RuntimeJarName+" on the class path unless --embed-runtime",
		countFactory)
}

// includeInputTables continues the tables that inputs carry (accounts.TableResource): an input
// rewritten by the count pass before. Its rewritten classes are left as they are (the passes
// skip rewritten code), and they run with the IDs of that table, which the output's table must
// keep: a fresh table would give the same IDs to other sites, and the output's table replaces
// the input's. Inputs rewritten separately, whose IDs clash, are refused.
func includeInputTables(s passSetup, table *accounts.Table) error {
	for _, in := range s.inputs {
		data, err := inputTable(in, s.limits)
		if err != nil || data == nil {
			return err // a missing or unreadable input is reported by the rewrite itself
		}
		t, err := accounts.ReadTable(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("%s: %s: %w", in, accounts.TableResource, err)
		}
		if err := table.Include(t); err != nil {
			return fmt.Errorf("%s was rewritten by heapledger before, with a table that does not fit the one this rewrite continues (%w): its classes run with those IDs, so they cannot be kept apart; rewrite the original jars together, or one after another with --table", in, err)
		}
		fmt.Fprintf(s.stderr, "%s: rewritten by heapledger before (%d allocation sites): its table is continued, and its rewritten classes are left as they are\n", in, t.Sites())
	}
	return nil
}

// inputTable returns the table an input jar or directory carries, nil when it has none or
// cannot be opened (the rewrite reports that).
func inputTable(path string, lim jar.Limits) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil
	}
	if st.IsDir() {
		data, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(accounts.TableResource)))
		if os.IsNotExist(err) {
			return nil, nil
		}
		return data, err
	}
	in, err := jar.OpenInput(path)
	if err != nil {
		return nil, nil
	}
	defer in.Close()
	for _, e := range in.Entries {
		if e.Name == accounts.TableResource {
			return e.ReadAll(lim)
		}
	}
	return nil, nil
}

// tablePath is where the table is written beside the output (--table, or OUTPUT.table.tsv).
func (s passSetup) tablePath() string {
	if p := s.flags.String("table"); p != "" {
		return p
	}
	return strings.TrimRight(s.output, "/"+string(os.PathSeparator)) + ".table.tsv"
}

// countFactory sets the count pass up for `heapledger rewrite`.
func countFactory(s passSetup) (*passRun, error) {
	r, err := newCountRun(s)
	if err != nil {
		return nil, err
	}
	return &passRun{pass: r.pass, add: tableAddition(r.table, s.tablePath(), r.runtime), done: r.done}, nil
}

// newCountRun builds the count pass from its options (addCountFlags) for the run s describes.
func newCountRun(s passSetup) (*countRun, error) {
	c := s.flags
	set, err := countAccounts(c)
	if err != nil {
		return nil, err
	}
	table, err := countTable(s)
	if err != nil {
		return nil, err
	}
	run := &countRun{setup: s, table: table, set: set}
	if c.Bool("embed-runtime") {
		if jar.IsClassOutput(s.output) {
			return nil, fmt.Errorf("--embed-runtime: a class file output cannot hold the runtime; write a jar or a directory")
		}
		rj, err := runtimeJar()
		if err != nil {
			return nil, err
		}
		run.runtime = map[string][]byte{}
		if err := readJarInto(rj, run.runtime); err != nil {
			return nil, err
		}
	}
	if err := runtimeConfig(c, set, table); err != nil {
		return nil, err
	}
	// serve's --object-init-sites: the agent hooks Object.<init> (0 where the flag is not).
	usePaths, edges, err := pathCounters(c)
	if err != nil {
		return nil, err
	}
	// Before --profile is read: --adapt refuses it, and the edges run it starts has none.
	usesProfile := usePaths && !edges
	if adapt, err := adaptThreshold(s, usePaths && !edges); err != nil {
		return nil, err
	} else if adapt > 0 {
		// The profiling run first; adaptFunc makes the passes that plan from its counts.
		edges = true
		table.Config["adapt.after"] = strconv.Itoa(adapt)
	}
	if run.profile, err = readProfile(c, usesProfile); err != nil {
		return nil, err
	}
	contexts := table.Config["context"] != ""
	if usePaths && contexts {
		return nil, fmt.Errorf("--counters %s cannot go with --context cct: a path counter stands for sites of the whole method, not of one calling context; use --counters sites", c.String("counters"))
	}
	run.opts = passlib.CountOptions{Accounts: set, Table: table, ObjectInit: c.Int("object-init-sites") > 0,
		Paths: usePaths, Edges: edges, Profile: run.profile, Contexts: contexts, CountSwitches: c.Bool("count-increments")}
	run.pass, err = passlib.Count(run.opts)
	if err != nil {
		return nil, err
	}
	return run, nil
}

// countAccounts reads the accounts of --accounts-file and --accounts.
func countAccounts(c *cli.Context) (*accounts.Set, error) {
	var accts []accounts.Account
	if f := c.String("accounts-file"); f != "" {
		a, err := accounts.ReadFile(f)
		if err != nil {
			return nil, err
		}
		accts = append(accts, a...)
	}
	if c.IsSet("accounts") {
		// Repeated flags add up, as the usage says: a second --accounts that silently
		// replaced the first charged everything the first named to <unaccounted>.
		list := strings.Join(c.StringSlice("accounts"), ",")
		s, err := accounts.Parse(list)
		if err != nil {
			return nil, fmt.Errorf("--accounts: %w", err)
		}
		if len(s.Accounts) == 0 {
			// Everything would land in <unaccounted>, which no one asks for by naming accounts.
			return nil, fmt.Errorf("--accounts %q names no account: give package patterns such as 'com.acme.*,org.lib' or '*' for every class", list)
		}
		accts = append(accts, s.Accounts...)
	}
	return accounts.New(accts)
}

// countTable is the run's site table: the one --table names when it exists, else a fresh one,
// continuing the tables the inputs carry.
func countTable(s passSetup) (*accounts.Table, error) {
	table := accounts.NewTable(nil)
	if p := s.tablePath(); s.flags.IsSet("table") {
		if f, err := os.Open(p); err == nil {
			table, err = accounts.ReadTable(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("--table %s: %w", p, err)
			}
		} else if !os.IsNotExist(err) {
			return nil, err
		}
	}
	if err := includeInputTables(s, table); err != nil {
		return nil, err
	}
	// A fresh table's IDs start where the input says, so that jars rewritten apart can run
	// together (docs/formats.md, "Site IDs"). The agent's table, with no input, keeps the IDs
	// from 1, below every placed base.
	if len(s.inputs) > 0 {
		fp, err := jar.Fingerprint(s.inputs)
		if err != nil {
			return nil, err
		}
		table.Place(fp)
	}
	if table.Config == nil {
		table.Config = map[string]string{}
	}
	return table, nil
}

// runtimeConfig writes the runtime's settings the options give into the table's config lines.
func runtimeConfig(c *cli.Context, set *accounts.Set, table *accounts.Table) error {
	if l := c.String("liveness"); l != "" {
		if err := checkLiveness(l); err != nil {
			return err
		}
		table.Config["liveness"] = l
	}
	if c.IsSet("snapshot-interval") {
		if iv := c.Float64("snapshot-interval"); iv < 0 {
			return fmt.Errorf("--snapshot-interval %v: must be 0 or more seconds", iv)
		}
		table.Config["snapshot.interval"] = fmt.Sprint(c.Float64("snapshot-interval"))
	}
	if cx := c.String("context"); cx != "" && cx != "none" {
		if err := checkContext(cx); err != nil {
			return err
		}
		table.Config["context"] = cx
	}
	if c.Bool("snapshot-gc") {
		table.Config["snapshot.gc"] = "true"
	}
	if c.IsSet("jmx") {
		// Checked here: the runtime would only warn and fall back to auto, at every launch.
		switch m := c.String("jmx"); m {
		case "auto", "on", "off":
			table.Config["jmx"] = m
		default:
			return fmt.Errorf("--jmx %q: must be auto, on or off", m)
		}
	}
	if c.Bool("count-increments") {
		table.Config["increments"] = "true"
	}
	return budgetConfig(c, set, table.Config)
}

// pathCounters reads --counters: whether objects are counted by path counters, which see no
// object at its allocation, so nothing that needs one (liveness, budgets, the Object.<init>
// hook's charges) goes with them, and whether the run profiles their edges (edges: path
// counters with every chord counted, docs/instrumentation.md "Profiles").
func pathCounters(c *cli.Context) (paths, edges bool, err error) {
	switch m := c.String("counters"); m {
	case "", "sites":
		return false, false, nil
	case "paths", "edges":
		if l := c.String("liveness"); l != "" && l != "off" {
			return false, false, fmt.Errorf("--counters %s: path counters see no object, so they cannot go with --liveness %s; use --counters sites", m, l)
		}
		if len(c.StringSlice("budget")) > 0 {
			return false, false, fmt.Errorf("--counters %s cannot go with --budget (budgets need --liveness); use --counters sites", m)
		}
		if c.Bool("object-init") {
			return false, false, fmt.Errorf("--counters %s cannot go with --object-init; use --counters sites", m)
		}
		return true, m == "edges", nil
	default:
		return false, false, fmt.Errorf("--counters %q: must be sites, paths or edges", m)
	}
}

// tableAddition is the jar pipeline's finish hook of a count run: once every class is
// rewritten the table is complete; it goes beside the output (at path) and into it (where the
// runtime finds it on the class path), with the runtime's classes when they are embedded.
func tableAddition(table *accounts.Table, path string, runtime map[string][]byte) *jar.Addition {
	names := []string{accounts.TableResource}
	for n := range runtime {
		names = append(names, n)
	}
	return &jar.Addition{Names: names, Finish: func(*jar.Report) (map[string][]byte, error) {
		var buf bytes.Buffer
		if err := table.Write(&buf); err != nil {
			return nil, err
		}
		if err := outfile.WriteFile(path, buf.Bytes(), outfile.Data); err != nil {
			return nil, err
		}
		entries := map[string][]byte{accounts.TableResource: buf.Bytes()}
		for n, data := range runtime {
			entries[n] = data
		}
		return entries, nil
	}}
}

// done says, once the output is in place, what the table holds, how to run the output, and
// which account patterns matched no class.
func (r *countRun) done(*jar.Report) error {
	output, tp, stderr := r.setup.output, r.setup.tablePath(), r.setup.stderr
	if jar.IsClassOutput(output) {
		// A class file has no room for the table: the runtime must be told where it is.
		fmt.Fprintf(stderr, "%s: %d allocation sites; table written to %s (a class file cannot carry it: run with -Dheapledger.table=%s)\n", output, r.table.Sites(), tp, tp)
	} else {
		fmt.Fprintf(stderr, "%s: %d allocation sites; table written to %s and %s inside the output\n", output, r.table.Sites(), tp, accounts.TableResource)
	}
	if r.runtime == nil {
		if rj, err := runtimeJar(); err == nil {
			fmt.Fprintf(stderr, "run with %s on the class path\n", rj)
		}
	}
	warnUnmatched(stderr, r.set, r.pass.Classes(), "of the input", true)
	reportProfile(stderr, r.profile, "of the input")
	return nil
}

// warnUnmatched tells of the patterns of set that none of classes (internal names) matched:
// their accounts stay empty, and a typo would otherwise go unnoticed. A pattern with a hint
// (accounts.Set.Unmatched: a class named as a package, a package with only subpackages, a near
// miss) is most likely a slip, and so is every pattern when none matched at all: each gets a
// warning of its own. With shared (a rewrite: docs/formats.md has every jar of a program
// rewritten apart with one --accounts list) the other unmatched patterns are most likely the
// other jars', so they are named together in one note: a warning on every rewrite of the
// documented workflow would teach users to skip the line that catches their typos.
func warnUnmatched(w io.Writer, set *accounts.Set, classes []string, which string, shared bool) {
	unmatched := set.Unmatched(classes)
	patterns := 0
	for _, a := range set.Accounts {
		patterns += len(a.Patterns)
	}
	matchedSome := len(unmatched) < patterns
	var others []string
	for _, u := range unmatched {
		if shared && matchedSome && u.Hint == "" {
			others = append(others, u.Pattern)
			continue
		}
		hint := ""
		if u.Hint != "" {
			hint = " (" + u.Hint + ")"
		}
		fmt.Fprintf(w, "warning: %s matched no class %s, so its account stays empty%s\n", u, which, hint)
	}
	if len(others) > 0 {
		what, their := "account patterns", "their accounts stay"
		if len(others) == 1 {
			what, their = "account pattern", "its account stays"
		}
		fmt.Fprintf(w, "note: %s %s matched no class %s (as expected when one --accounts list serves several jars rewritten apart; %s empty here)\n",
			what, strings.Join(others, ", "), which, their)
	}
}

// runtimeJar finds the runtime jar: $HEAPLEDGER_RUNTIME, beside the binary, or in the build/
// directory of a source checkout the binary was built in.
func runtimeJar() (string, error) { return findJar(RuntimeJarName, "HEAPLEDGER_RUNTIME") }

// findJar finds one of heapledger's Java-side jars: the file named by the environment variable,
// beside the binary (a `make build` distribution), or in build/ of the checkout it was built in.
func findJar(name, env string) (string, error) {
	if p := os.Getenv(env); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s: %w", env, err)
		}
		return p, nil
	}
	var tried []string
	if exe, err := os.Executable(); err == nil {
		dir := filepath.Dir(exe)
		for _, p := range []string{filepath.Join(dir, name), filepath.Join(dir, "..", "build", name)} {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
			tried = append(tried, p)
		}
	}
	return "", fmt.Errorf("cannot find %s (looked in %s); run `make build`, or set %s", name, strings.Join(tried, ", "), env)
}

func readJarInto(path string, into map[string][]byte) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.FileInfo().IsDir() || strings.HasPrefix(f.Name, "META-INF/") {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("%s!%s: %w", path, f.Name, err)
		}
		data, err := io.ReadAll(io.LimitReader(rc, 64<<20))
		rc.Close()
		if err != nil {
			return fmt.Errorf("%s!%s: %w", path, f.Name, err)
		}
		into[f.Name] = data
	}
	return nil
}

// checkLiveness validates a liveness mode the way the runtime reads it.
func checkLiveness(l string) error {
	if l == "off" || l == "all" {
		return nil
	}
	if n, ok := strings.CutPrefix(l, "sample:"); ok {
		var v int
		if _, err := fmt.Sscanf(n, "%d", &v); err == nil && v >= 1 && fmt.Sprint(v) == n {
			return nil
		}
	}
	return fmt.Errorf("--liveness %q: want off, all or sample:N with N a whole number ≥ 1", l)
}

// checkContext validates a calling-context mode the way the runtime reads it (Context.java):
// cct, or cct: followed by depth=N, nodes=N and fold, comma-separated.
func checkContext(cx string) error {
	bad := func(why string) error {
		return fmt.Errorf("--context %q: %s; want none, cct, or cct:depth=N,nodes=N,fold", cx, why)
	}
	opts, ok := strings.CutPrefix(cx, "cct")
	if !ok {
		return bad("unknown mode")
	}
	if opts == "" {
		return nil
	}
	opts, ok = strings.CutPrefix(opts, ":")
	if !ok {
		return bad("unknown mode")
	}
	for _, o := range strings.Split(opts, ",") {
		if o == "fold" {
			continue
		}
		k, v, _ := strings.Cut(o, "=")
		if n, err := strconv.Atoi(v); (k != "depth" && k != "nodes") || err != nil || n < 1 || strconv.Itoa(n) != v {
			return bad(fmt.Sprintf("option %q", o))
		}
	}
	return nil
}

// budgetConfig turns --budget and --budget-action into the table's config lines.
func budgetConfig(c *cli.Context, set *accounts.Set, cfg map[string]string) error {
	budgets := c.StringSlice("budget")
	switch a := c.String("budget-action"); a {
	case "log", "dump", "throw", "dump,throw", "throw,dump":
		if len(budgets) > 0 {
			cfg["budget.action"] = a
		}
	default:
		return fmt.Errorf("--budget-action %q: want log, dump, throw or dump,throw", a)
	}
	if len(budgets) > 0 && (cfg["liveness"] == "" || cfg["liveness"] == "off") {
		return fmt.Errorf("--budget needs --liveness all or sample:N: a budget limits live bytes")
	}
	for _, b := range budgets {
		name, val, ok := strings.Cut(b, "=")
		if !ok || name == "" {
			return fmt.Errorf("--budget %q: want ACCOUNT=BYTES", b)
		}
		known := false
		for _, a := range set.Accounts {
			known = known || a.Name == name
		}
		if !known {
			return fmt.Errorf("--budget %q: %s is not one of the accounts (--accounts)", b, name)
		}
		n, err := parseBytes(val)
		if err != nil {
			return fmt.Errorf("--budget %q: %w", b, err)
		}
		cfg["budget."+name] = fmt.Sprint(n)
	}
	return nil
}

// parseBytes reads 1000, 64K, 10M, 2G (binary multiples).
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	var n int64
	if _, err := fmt.Sscanf(s, "%d", &n); err != nil || n <= 0 || fmt.Sprint(n) != s {
		return 0, fmt.Errorf("%q is not a positive number of bytes", s)
	}
	return n * mult, nil
}
