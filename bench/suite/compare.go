package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// compareJVM makes a comparison run as deterministic as the workload allows: one processor as
// far as the program can tell (thread pools sized by availableProcessors() run one thread), and
// the runtime counting counter increments (--count-increments, read at launch).
var compareJVM = []string{"-XX:ActiveProcessorCount=1", "-Dheapledger.increments=true"}

// rowID names a snapshot row independently of site IDs and process: the program, account and
// site as the table describes it, and the part.
type rowID struct {
	program, account, kind, typ, method string
	offset, part                        int
}

// runRows is what one run of a mode counted: its rows summed over the snapshots its JVMs
// wrote (COUNT, ELEMENTS, BYTES), and the increments they report.
type runRows struct {
	rows       map[rowID][3]int64
	increments int64
	byMethod   map[string]int64
}

// Comparison is one workload compared between two modes.
type Comparison struct {
	Workload   string
	Rows       int      // rows of the first mode
	Differ     []string // rows that differ, described
	Increments [2]int64
	Top        string // the second mode's methods with the most increments
	Err        error
}

// compareModes runs each workload once in mode a and once in mode b (one at a time, never
// timed against each other) with compareJVM, and compares their snapshots' rows; it prints a
// table to w and returns the comparisons.
func compareModes(env *Env, results []*Result, a, b string, w io.Writer) []Comparison {
	var out []Comparison
	for _, r := range results {
		c := Comparison{Workload: r.W.Name}
		var got [2]*runRows
		for i, name := range []string{a, b} {
			got[i], c.Err = r.rowsOf(env, findMode(name))
			if c.Err != nil {
				break
			}
			c.Increments[i] = got[i].increments
		}
		if c.Err == nil {
			c.Rows = len(got[0].rows)
			c.Differ = diffRows(got[0].rows, got[1].rows)
			c.Top = topMethods(got[1].byMethod, 5)
		}
		env.logf("compare %s: %s", r.W.Name, c.line())
		out = append(out, c)
	}
	fmt.Fprintf(w, "| workload | rows (%s) | equal | increments %s | increments %s | change | most increments under %s |\n|---|---|---|---|---|---|---|\n", a, a, b, b)
	for _, c := range out {
		if c.Err != nil {
			fmt.Fprintf(w, "| %s | failed: %s | | | | | |\n", c.Workload, strings.ReplaceAll(c.Err.Error(), "\n", " "))
			continue
		}
		eq := "yes"
		if len(c.Differ) > 0 {
			eq = fmt.Sprintf("no: %d rows, e.g. %s", len(c.Differ), c.Differ[0])
		}
		fmt.Fprintf(w, "| %s | %d | %s | %d | %d | %s | %s |\n", c.Workload, c.Rows, eq, c.Increments[0], c.Increments[1], change(c.Increments), c.Top)
	}
	return out
}

func (c Comparison) line() string {
	if c.Err != nil {
		return "failed: " + c.Err.Error()
	}
	return fmt.Sprintf("%d rows, %d differ; increments %d → %d (%s)", c.Rows, len(c.Differ), c.Increments[0], c.Increments[1], change(c.Increments))
}

func change(inc [2]int64) string {
	if inc[0] == 0 {
		return "–"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(inc[1]-inc[0])/float64(inc[0]))
}

// rowsOf runs the workload once in mode m, keeping the run directory, and reads its snapshots.
func (r *Result) rowsOf(env *Env, m *Mode) (*runRows, error) {
	dir, err := r.runKept(env, m)
	if err != nil {
		return nil, err
	}
	return readRunRows(dir)
}

// runKept runs the workload once in mode m with compareJVM, keeping the run directory, and
// returns it.
func (r *Result) runKept(env *Env, m *Mode) (string, error) {
	l, ok := r.Launches[m.Name]
	if !ok {
		return "", fmt.Errorf("%s was not prepared: %s", m.Name, r.Failed[m.Name])
	}
	det := *l
	det.JVM = append(append(append([]string(nil), l.JVM...), compareJVM...), r.W.Repeatable...)
	var err error
	if det.Classpath, err = samePlace(env, r.W.Name, l.Classpath); err != nil {
		return "", err
	}
	r.Launches[m.Name] = &det
	defer func() { r.Launches[m.Name] = l }()
	keep := env.Keep
	env.Keep = true
	defer func() { env.Keep = keep }()
	if _, err := r.runOnce(env, m, 0, 30*60e9); err != nil {
		return "", err
	}
	return filepath.Join(env.Out, "runs", r.W.Name, m.Name, "r1"), nil
}

// samePlace links the jars of classpath that a mode rewrote (they lie in a directory named
// after the mode) to one place per workload whatever the mode, and returns the classpath with
// them there. A program can count its own class path: ecj cuts it into char arrays, and a
// jar path six characters longer made six char array elements more under paths.
func samePlace(env *Env, workload string, classpath []string) ([]string, error) {
	rewritten := filepath.Join(env.Out, "rewritten") + string(filepath.Separator)
	dir := filepath.Join(env.Out, "compare", workload)
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	out := append([]string(nil), classpath...)
	for i, p := range out {
		if !strings.HasPrefix(p, rewritten) {
			continue
		}
		to := filepath.Join(dir, strconv.Itoa(i), filepath.Base(p))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return nil, err
		}
		if err := os.Link(p, to); err != nil {
			return nil, fmt.Errorf("compare: %w", err)
		}
		out[i] = to
	}
	return out, nil
}

// readRunRows sums the rows of every snapshot in dir.
func readRunRows(dir string) (*runRows, error) {
	snaps, err := filepath.Glob(filepath.Join(dir, "heapledger-*.snapshot"))
	if err != nil || len(snaps) == 0 {
		return nil, fmt.Errorf("no snapshot in %s (%v)", dir, err)
	}
	rr := &runRows{rows: map[rowID][3]int64{}, byMethod: map[string]int64{}}
	for _, path := range snaps {
		s, err := snapshot.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for _, row := range s.Rows {
			site := s.Sites[row.Site]
			k := rowID{s.Header["program"], s.AccountName(row.Account), site.Kind, site.Type, site.Method, site.Offset, row.Part}
			v, seen := rr.rows[k]
			bytes := v[2] + row.Bytes
			if row.Bytes < 0 || seen && v[2] < 0 {
				bytes = -1 // unknown in one snapshot: unknown in the sum
			}
			rr.rows[k] = [3]int64{v[0] + row.Count, v[1] + row.Elements, bytes}
		}
		n, err := strconv.ParseInt(s.Header["increments"], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: increments %q: %v", path, s.Header["increments"], err)
		}
		rr.increments += n
		addByMethod(rr.byMethod, s.Header["increments_by_method"])
	}
	return rr, nil
}

// diffRows describes the rows that differ between a and b, sorted.
func diffRows(a, b map[rowID][3]int64) []string {
	var out []string
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			out = append(out, fmt.Sprintf("%s.%s@%d %s %v→%v", k.account, k.method, k.offset, k.kind, v, w))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			out = append(out, fmt.Sprintf("%s.%s@%d %s only in the second: %v", k.account, k.method, k.offset, k.kind, w))
		}
	}
	sort.Strings(out)
	return out
}

// topMethods names the n methods with the most increments, with their share.
func topMethods(by map[string]int64, n int) string {
	type mc struct {
		m string
		c int64
	}
	var l []mc
	var total int64
	for m, c := range by {
		l = append(l, mc{m, c})
		total += c
	}
	sort.Slice(l, func(i, j int) bool { return l[i].c > l[j].c || l[i].c == l[j].c && l[i].m < l[j].m })
	var parts []string
	for i := 0; i < len(l) && i < n; i++ {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", l[i].m, 100*float64(l[i].c)/float64(max(total, 1))))
	}
	return strings.Join(parts, ", ")
}
