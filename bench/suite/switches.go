package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// switchesMode is heapledger-accounts counting its account switches (issue 35), run by -switches.
const switchesMode = "heapledger-accounts-switches"

// switchCounts is what one run's snapshots say of account switches, summed over its JVMs.
type switchCounts struct {
	ran, leftOut     int64
	ranBy, leftOutBy map[string]int64
}

// runSwitches is -switches: each workload once in switchesMode, as deterministically as
// -compare runs it, printing the account switches that ran and the ones the rewriter left out
// (every caller of the method runs in its account), with the methods that switch most.
func runSwitches(env *Env, ws []*Workload, stdout io.Writer) (int, error) {
	m := findMode(switchesMode)
	if err := m.Available(env); err != nil {
		return 2, fmt.Errorf("mode %s cannot run: %v", m.Name, err)
	}
	results, err := prepare(env, ws, []*Mode{m})
	if err != nil {
		return 2, err
	}
	fmt.Fprintf(stdout, "| workload | switches that ran | left out | left out ÷ all | most switches |\n|---|---|---|---|---|\n")
	bad := 0
	for _, r := range results {
		c, err := r.switchesOf(env, m)
		if err != nil {
			bad++
			env.logf("switches %s: %v", r.W.Name, err)
			fmt.Fprintf(stdout, "| %s | failed: %s | | | |\n", r.W.Name, strings.ReplaceAll(err.Error(), "\n", " "))
			continue
		}
		share := "–"
		if all := c.ran + c.leftOut; all > 0 {
			share = fmt.Sprintf("%.1f%%", 100*float64(c.leftOut)/float64(all))
		}
		env.logf("switches %s: %d ran, %d left out", r.W.Name, c.ran, c.leftOut)
		fmt.Fprintf(stdout, "| %s | %d | %d | %s | %s |\n", r.W.Name, c.ran, c.leftOut, share, topMethods(c.ranBy, 5))
	}
	if bad > 0 {
		return 1, fmt.Errorf("%d of %d workloads failed", bad, len(results))
	}
	return 0, nil
}

// switchesOf runs the workload once in m and adds up its snapshots' switch lines.
func (r *Result) switchesOf(env *Env, m *Mode) (*switchCounts, error) {
	dir, err := r.runKept(env, m)
	if err != nil {
		return nil, err
	}
	snaps, err := filepath.Glob(filepath.Join(dir, "heapledger-*.snapshot"))
	if err != nil || len(snaps) == 0 {
		return nil, fmt.Errorf("no snapshot in %s (%v)", dir, err)
	}
	c := &switchCounts{ranBy: map[string]int64{}, leftOutBy: map[string]int64{}}
	for _, path := range snaps {
		s, err := snapshot.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if s.Header["switches"] == "" {
			return nil, fmt.Errorf("%s has no switches line: was it rewritten with --count-increments?", path)
		}
		for _, f := range []struct {
			key string
			sum *int64
			by  map[string]int64
		}{{"switches", &c.ran, c.ranBy}, {"switches_left_out", &c.leftOut, c.leftOutBy}} {
			n, err := strconv.ParseInt(s.Header[f.key], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %s %q: %v", path, f.key, s.Header[f.key], err)
			}
			*f.sum += n
			addByMethod(f.by, s.Header[f.key+"_by_method"])
		}
	}
	return c, nil
}

// addByMethod adds a header value of METHOD=N fields into by.
func addByMethod(by map[string]int64, v string) {
	for _, f := range strings.Fields(v) {
		if i := strings.LastIndexByte(f, '='); i > 0 {
			k, _ := strconv.ParseInt(f[i+1:], 10, 64)
			by[f[:i]] += k
		}
	}
}
