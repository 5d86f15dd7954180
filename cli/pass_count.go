package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// RuntimeJarName is the runtime that rewritten code calls; `make build` puts it beside the binary.
const RuntimeJarName = "heapledger-runtime.jar"

// countRun is what the count pass's finish needs of its factory: the table, the pass (for the
// classes it saw) and the accounts.
type countRun struct {
	table *accounts.Table
	pass  *passlib.CountPass
	set   *accounts.Set
}

// countRuns remembers each count pass between the factory and finish, per command invocation
// (one rewrite per process, but tests run several in one process).
var countRuns = map[*cli.Context]*countRun{}

func init() {
	rewriteCmd.Flags = append(rewriteCmd.Flags,
		&cli.StringFlag{Name: "accounts", Usage: "count pass: memory accounts as package patterns, comma-separated: 'a.b' is the classes directly in a.b, 'a.b.*' also its subpackages, '*' everything; the most specific pattern wins; a pattern that matches no class of the input is warned about"},
		&cli.StringFlag{Name: "accounts-file", Usage: "count pass: read accounts from FILE: one per line, a pattern or 'NAME = pattern, pattern'; # starts a comment"},
		&cli.StringFlag{Name: "table", Usage: "count pass: the ID table to write (and to continue, when it exists, so separately rewritten jars get distinct IDs)", DefaultText: "OUTPUT.table.tsv"},
		&cli.BoolFlag{Name: "embed-runtime", Usage: "count pass: copy the heapledger runtime into the output, so it needs nothing else on the class path"},
		&cli.StringFlag{Name: "liveness", Usage: "count pass: track which objects are still alive: off, all (every object), or sample:N (every N-th allocation per site, figures scaled); -Dheapledger.liveness overrides it at launch", DefaultText: "off"},
		&cli.Float64Flag{Name: "snapshot-interval", Usage: "count pass: seconds between periodic snapshots (0: only at exit and on demand); -Dheapledger.snapshot.interval overrides it at launch"},
		&cli.StringSliceFlag{Name: "budget", Usage: "count pass: ACCOUNT=BYTES (suffixes K, M, G for KiB, MiB, GiB): when the account's live bytes pass it the runtime says so once (needs --liveness); repeatable"},
		&cli.StringFlag{Name: "budget-action", Value: "log", Usage: "count pass: what passing a budget does besides logging: log, dump (a heap dump beside the snapshots), throw (OutOfMemoryError at the account's next allocation in rewritten code), or dump,throw"},
		&cli.BoolFlag{Name: "snapshot-gc", Usage: "count pass: run a full GC before each periodic or on-demand snapshot, so live figures count only reachable objects"},
		&cli.StringFlag{Name: "jmx", Usage: "count pass: when the runtime registers heapledger:type=Ledger in the platform MBean server: auto (once someone else creates the server), on (creating it at start-up), off (never); -Dheapledger.jmx overrides it at launch", DefaultText: "auto"},
	)
	registerPassWithFinish("count", "memory accounts and exact allocation counts (the product; --accounts chooses the accounts); writes OUTPUT.table.tsv and needs "+RuntimeJarName+" on the class path unless --embed-runtime",
		countFactory, countFinish)
}

// rewriteInputs are the inputs of a rewrite being set up, for the count pass's factory (per
// invocation, as countRuns).
var rewriteInputs = map[*cli.Context][]string{}

// includeInputTables continues the tables that inputs carry (accounts.TableResource): an input
// rewritten by the count pass before. Its rewritten classes are left as they are (the passes
// skip rewritten code), and they run with the IDs of that table, which the output's table must
// keep: a fresh table would give the same IDs to other sites, and the output's table replaces
// the input's. Inputs rewritten separately, whose IDs clash, are refused.
func includeInputTables(c *cli.Context, table *accounts.Table, inputs []string) error {
	lim := jar.Limits{MaxEntrySize: c.Int64("max-entry-size"), MaxRatio: c.Int64("max-ratio")}
	for _, in := range inputs {
		data, err := inputTable(in, lim)
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
		fmt.Fprintf(errWriter(c), "%s: rewritten by heapledger before (%d allocation sites): its table is continued, and its rewritten classes are left as they are\n", in, t.Sites())
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

func tablePath(c *cli.Context) string {
	if p := c.String("table"); p != "" {
		return p
	}
	return strings.TrimRight(c.String("output"), "/"+string(os.PathSeparator)) + ".table.tsv"
}

func countFactory(c *cli.Context) (transform.Class, error) {
	var accts []accounts.Account
	if f := c.String("accounts-file"); f != "" {
		a, err := accounts.ReadFile(f)
		if err != nil {
			return nil, err
		}
		accts = append(accts, a...)
	}
	if c.IsSet("accounts") {
		s, err := accounts.Parse(c.String("accounts"))
		if err != nil {
			return nil, fmt.Errorf("--accounts: %w", err)
		}
		if len(s.Accounts) == 0 {
			// Everything would land in <unaccounted>, which no one asks for by naming accounts.
			return nil, fmt.Errorf("--accounts %q names no account: give package patterns such as 'com.acme.*,org.lib' or '*' for every class", c.String("accounts"))
		}
		accts = append(accts, s.Accounts...)
	}
	set, err := accounts.New(accts)
	if err != nil {
		return nil, err
	}
	table := accounts.NewTable(nil)
	if p := tablePath(c); c.IsSet("table") {
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
	if err := includeInputTables(c, table, rewriteInputs[c]); err != nil {
		return nil, err
	}
	// A fresh table's IDs start where the input says, so that jars rewritten apart can run
	// together (docs/formats.md, "Site IDs"). The agent's table, with no input, keeps the IDs
	// from 1, below every placed base.
	if inputs := rewriteInputs[c]; len(inputs) > 0 {
		fp, err := jar.Fingerprint(inputs)
		if err != nil {
			return nil, err
		}
		table.Place(fp)
	}
	if c.Bool("embed-runtime") {
		if jar.IsClassOutput(c.String("output")) {
			return nil, fmt.Errorf("--embed-runtime: a class file output cannot hold the runtime; write a jar or a directory")
		}
		if _, err := runtimeJar(); err != nil {
			return nil, err
		}
	}
	if table.Config == nil {
		table.Config = map[string]string{}
	}
	if l := c.String("liveness"); l != "" {
		if err := checkLiveness(l); err != nil {
			return nil, err
		}
		table.Config["liveness"] = l
	}
	if c.IsSet("snapshot-interval") {
		if iv := c.Float64("snapshot-interval"); iv < 0 {
			return nil, fmt.Errorf("--snapshot-interval %v: must be 0 or more seconds", iv)
		}
		table.Config["snapshot.interval"] = fmt.Sprint(c.Float64("snapshot-interval"))
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
			return nil, fmt.Errorf("--jmx %q: must be auto, on or off", m)
		}
	}
	if err := budgetConfig(c, set, table.Config); err != nil {
		return nil, err
	}
	// serve's --object-init-sites: the agent hooks Object.<init> (0 where the flag is not).
	pass, err := passlib.Count(passlib.CountOptions{Accounts: set, Table: table, ObjectInit: c.Int("object-init-sites") > 0})
	if err != nil {
		return nil, err
	}
	countRuns[c] = &countRun{table: table, pass: pass, set: set}
	return pass, nil
}

// countFinish writes the table beside the output and into it, where the runtime finds it on
// the class path, and merges the runtime in when asked.
func countFinish(c *cli.Context, output string, rep *jar.Report) error {
	run := countRuns[c]
	delete(countRuns, c)
	if run == nil {
		return fmt.Errorf("internal: no table for this run")
	}
	table := run.table
	tp := tablePath(c)
	if err := installTable(table, output, tp, c.Bool("embed-runtime")); err != nil {
		return err
	}
	stderr := c.App.ErrWriter
	if stderr == nil {
		stderr = os.Stderr
	}
	if jar.IsClassOutput(output) {
		// A class file has no room for the table: the runtime must be told where it is.
		fmt.Fprintf(stderr, "%s: %d allocation sites; table written to %s (a class file cannot carry it: run with -Dheapledger.table=%s)\n", output, table.Sites(), tp, tp)
	} else {
		fmt.Fprintf(stderr, "%s: %d allocation sites; table written to %s and %s inside the output\n", output, table.Sites(), tp, accounts.TableResource)
	}
	if !c.Bool("embed-runtime") {
		if rj, err := runtimeJar(); err == nil {
			fmt.Fprintf(stderr, "run with %s on the class path\n", rj)
		}
	}
	for _, u := range run.set.Unmatched(run.pass.Classes()) {
		hint := ""
		if u.Hint != "" {
			hint = " (" + u.Hint + ")"
		}
		fmt.Fprintf(stderr, "warning: %s matched no class of the input, so its account stays empty%s\n", u, hint)
	}
	return nil
}

// installTable writes the table to tablePath and into the output (with the runtime's classes
// too when embed is set).
func installTable(table *accounts.Table, output, tablePath string, embed bool) error {
	var buf bytes.Buffer
	if err := table.Write(&buf); err != nil {
		return err
	}
	if err := outfile.WriteFile(tablePath, buf.Bytes(), outfile.Data); err != nil {
		return err
	}
	if jar.IsClassOutput(output) {
		return nil
	}
	extra := map[string][]byte{accounts.TableResource: buf.Bytes()}
	if embed {
		rj, err := runtimeJar()
		if err != nil {
			return err
		}
		if err := readJarInto(rj, extra); err != nil {
			return err
		}
	}
	return addEntries(output, extra)
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

// addEntries adds (or replaces) entries in a finished output: files in a directory output, or
// entries appended to a jar by copying it raw into a new file that replaces it atomically.
func addEntries(output string, entries map[string][]byte) error {
	if st, err := os.Stat(output); err == nil && st.IsDir() {
		for name, data := range entries {
			if err := outfile.WriteFile(filepath.Join(output, filepath.FromSlash(name)), data, outfile.Data); err != nil {
				return err
			}
		}
		return nil
	}
	zr, err := zip.OpenReader(output)
	if err != nil {
		return fmt.Errorf("%s: %w", output, err)
	}
	defer zr.Close()
	tmp, err := outfile.Create(output, outfile.Data)
	if err != nil {
		return err
	}
	if err := copyWithEntries(tmp, zr, entries); err != nil {
		tmp.Abort()
		return fmt.Errorf("%s: %w", output, err)
	}
	return tmp.Commit()
}

// copyWithEntries writes the entries of zr, raw, to w, then entries in name order in place
// of any of zr's of the same name.
func copyWithEntries(w io.Writer, zr *zip.ReadCloser, entries map[string][]byte) error {
	zw := zip.NewWriter(w)
	for _, f := range zr.File {
		if _, replaced := entries[f.Name]; replaced {
			continue
		}
		if err := zw.Copy(f); err != nil {
			return fmt.Errorf("%s: %w", f.Name, err)
		}
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		ew, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate})
		if err != nil {
			return err
		}
		if _, err := ew.Write(entries[n]); err != nil {
			return err
		}
	}
	return zw.Close()
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
