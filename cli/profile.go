package main

import (
	"fmt"
	"io"

	"github.com/heapledger/heapledger/rewrite/accounts"
	passlib "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transform"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/rewrite/paths"
)

// readProfile reads --profile: the edge profiles of the snapshots it names, their counts added
// up. It is nil without --profile, and refused unless the run counts by path counters (usePaths):
// a profile only steers where they go.
func readProfile(c *cli.Context, usePaths bool) (*paths.Profile, error) {
	files := c.StringSlice("profile")
	if len(files) == 0 {
		return nil, nil
	}
	if !usePaths {
		return nil, fmt.Errorf("--profile needs --counters paths (it places path counters; --counters %s has none to place)", c.String("counters"))
	}
	return loadProfile(files)
}

// adaptThreshold reads --adapt: the chord increments after which the agent re-instruments a
// class from its own edge counts (0: off). It needs the agent, whose retransformation gives the
// class its new code, and --counters paths, the counters it plans; offline the same is a
// profiling run (--counters edges) and a rewrite with --profile.
func adaptThreshold(s passSetup, usePaths bool) (int, error) {
	n := s.flags.Int("adapt")
	switch {
	case n < 0:
		return 0, fmt.Errorf("--adapt %d: must be 0 (off) or more chord increments", n)
	case n == 0:
		return 0, nil
	case s.output != "" || len(s.inputs) > 0:
		return 0, fmt.Errorf("--adapt re-instruments classes while they run, which only the agent can (heapledger run, agent or attach); offline, take a profile with --counters edges and rewrite with --profile")
	case !usePaths:
		return 0, fmt.Errorf("--adapt needs --counters paths (it re-plans path counters; --counters %s has none to plan)", s.flags.String("counters"))
	case len(s.flags.StringSlice("profile")) > 0:
		return 0, fmt.Errorf("--adapt takes each class's profile from the run itself; it cannot go with --profile")
	}
	return n, nil
}

// adaptFunc makes the service's re-instrumenting passes (--adapt): the count pass of run's
// options with path counters planned from one class's edge profile, numbering into table.
func (run *countRun) adaptFunc() func(table *accounts.Table, profile string) (transform.Class, *paths.Profile, error) {
	return func(table *accounts.Table, text string) (transform.Class, *paths.Profile, error) {
		edges, err := snapshot.ParseEdges(text)
		if err != nil {
			return nil, nil, fmt.Errorf("--adapt: %w", err)
		}
		p := paths.NewProfile()
		addEdges(p, edges)
		o := run.opts
		o.Table, o.Edges, o.Profile = table, false, p
		pass, err := passlib.Count(o)
		return pass, p, err
	}
}

// addEdges adds the counts of edge profile lines to p.
func addEdges(p *paths.Profile, edges []snapshot.MethodEdges) {
	for _, m := range edges {
		k := paths.MethodKey{Class: m.Class, Method: m.Method, Hash: m.Hash}
		for _, e := range m.Edges {
			p.Add(k, paths.EdgeKey{From: e.From, To: e.To}, e.Count)
		}
	}
}

// loadProfile adds up the "edges" lines of the snapshots files (docs/formats.md).
func loadProfile(files []string) (*paths.Profile, error) {
	p := paths.NewProfile()
	for _, f := range files {
		s, err := snapshot.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
		if len(s.Edges) == 0 {
			return nil, fmt.Errorf("--profile %s: the snapshot has no edge profile (no edges lines): take one from a run rewritten with --counters edges", f)
		}
		addEdges(p, s.Edges)
	}
	return p, nil
}

// reportProfile says what the rewrite made of the profile: how many methods were planned from
// it, and why the other entries were not (changed code, edges that do not fit, or no such
// method where among names the classes looked at), with an example of each.
func reportProfile(w io.Writer, p *paths.Profile, where string) {
	if p == nil {
		return
	}
	u := p.Use()
	fmt.Fprintf(w, "profile: %d of its %d methods planned from observed edge counts\n", u.Planned, p.Len())
	if u.Changed > 0 {
		fmt.Fprintf(w, "profile: %d methods not used, their code changed since the profile was taken (stale; the first: %s): they keep static estimates; take the profile again\n", u.Changed, u.ChangedExample)
	}
	if u.Misfit > 0 {
		fmt.Fprintf(w, "profile: %d methods not used, their edges do not fit the graph rewritten now (the first: %s): they keep static estimates\n", u.Misfit, u.MisfitExample)
	}
	if u.Absent > 0 {
		fmt.Fprintf(w, "profile: %d methods matched no method %s counted by path counters (the first: %s)\n", u.Absent, where, u.AbsentExample)
	}
}
