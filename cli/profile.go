package main

import (
	"fmt"
	"io"

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
		for _, m := range s.Edges {
			k := paths.MethodKey{Class: m.Class, Method: m.Method, Hash: m.Hash}
			for _, e := range m.Edges {
				p.Add(k, paths.EdgeKey{From: e.From, To: e.To}, e.Count)
			}
		}
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
