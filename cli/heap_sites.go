package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/heapledger/heapledger/analysis/pipeline"
	"github.com/heapledger/heapledger/analysis/tracked"
)

// givenNames reads the names --table and --snapshot give.
func givenNames(table, snap string) (*tracked.Names, error) {
	names := tracked.NewNames()
	if table != "" {
		n, err := tracked.TableFile(table)
		if err != nil {
			return nil, fmt.Errorf("--table: %w", err)
		}
		names.Add(n)
	}
	if snap != "" {
		n, err := tracked.SnapshotNames(snap)
		if err != nil {
			return nil, fmt.Errorf("--snapshot: %w", err)
		}
		names.Add(n)
	}
	return names, nil
}

// heldShown is how many accounts, and how many sites, the text report lists below each suspect.
const heldShown = 5

// writeSummary says, below the heap's totals, what the figures leave out as heapledger's own, and
// where the names of accounts and sites come from.
func writeLedgerSummary(w io.Writer, v *pipeline.Ledger) {
	fmt.Fprintf(w, "heapledger (liveness %s): left out of every figure as its own: %d tracking references (%d bytes",
		v.Liveness, v.TrackingReferences, v.TrackingBytes)
	if v.ClearedReferences > 0 {
		fmt.Fprintf(w, "; %d of them cleared by the collector, not yet refunded", v.ClearedReferences)
	}
	fmt.Fprintf(w, ") and %d other objects of its runtime (%d bytes)\n", v.RuntimeObjects-uint64(v.TrackingReferences), v.RuntimeBytes-v.TrackingBytes)
	if v.TrackingReferences == 0 {
		return
	}
	if len(v.NamesFrom) > 0 {
		fmt.Fprintf(w, "names of accounts and sites: %s\n", strings.Join(v.NamesFrom, "; "))
	} else {
		fmt.Fprintln(w, "names of accounts and sites: none (the dump holds no table, as a dump the runtime did not write; --table or --snapshot names them)")
	}
}

// writeTables prints retained size by account and by site (top of them).
func writeLedgerTables(w io.Writer, v *pipeline.Ledger, top int) {
	if v.TrackingReferences == 0 {
		return
	}
	basis := "exact: liveness all tracked every allocation"
	if v.Estimates {
		basis = fmt.Sprintf("estimated from every %s allocation of each site: ± is two standard errors (about 95%%), at least is what the tracked objects alone retain", ordinal(v.Rate))
	}
	fmt.Fprintf(w, "\nretained size by memory account (%s)\n", basis)
	writeGroups(w, v.Accounts, len(v.Accounts), v.Estimates, "account", func(g pipeline.Group) string { return g.Account })
	fmt.Fprintf(w, "\nretained size by allocation site (top %d of %d)\n", min(top, len(v.Sites)), len(v.Sites))
	writeGroups(w, v.Sites, top, v.Estimates, "site", func(g pipeline.Group) string { return g.Site })
}

// writeGroups prints up to n rows under a header whose last column is what, named by name.
func writeGroups(w io.Writer, rows []pipeline.Group, n int, estimates bool, what string, name func(pipeline.Group) string) {
	if estimates {
		fmt.Fprintf(w, "%14s %12s %14s %12s %14s  %s\n", "retained", "±", "at least", "objects", "shallow", what)
	} else {
		fmt.Fprintf(w, "%14s %12s %14s  %s\n", "retained", "objects", "shallow", what)
	}
	for _, r := range rows[:min(n, len(rows))] {
		if estimates {
			fmt.Fprintf(w, "%14d %12d %14d %12d %14d  %s\n", r.Retained, r.Error, r.AtLeast, r.Objects, r.Shallow, name(r))
		} else {
			fmt.Fprintf(w, "%14d %12d %14d  %s\n", r.Retained, r.Objects, r.Shallow, name(r))
		}
	}
}

// writeText prints, below a suspect, who made what its accumulation point holds.
func writeAllocated(w io.Writer, a *pipeline.Allocated, estimates bool) {
	if a == nil {
		return
	}
	if len(a.Accounts) == 0 {
		fmt.Fprintln(w, "    it holds no object heapledger tracked")
		return
	}
	fmt.Fprintln(w, "    what it holds was allocated by (retained bytes, objects):")
	est := func(g pipeline.Group) string {
		if estimates {
			return fmt.Sprintf("%d ± %d bytes, ~%s", g.Retained, g.Error, objects(g.Objects))
		}
		return fmt.Sprintf("%d bytes, %s", g.Retained, objects(g.Objects))
	}
	for _, g := range a.Accounts[:min(heldShown, len(a.Accounts))] {
		fmt.Fprintf(w, "      account %s: %s\n", g.Account, est(g))
	}
	if more := len(a.Accounts) - heldShown; more > 0 {
		fmt.Fprintf(w, "      ... %d more accounts (all of them in --json)\n", more)
	}
	for _, g := range a.Sites[:min(heldShown, len(a.Sites))] {
		fmt.Fprintf(w, "      site %s (account %s): %s\n", g.Site, g.Account, est(g))
	}
	if more := len(a.Sites) - heldShown; more > 0 {
		fmt.Fprintf(w, "      ... %d more sites (all of them in --json)\n", more)
	}
}

// ordinal writes n as "8th", "2nd", "21st", "12th".
func ordinal(n uint64) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprint(n) + suffix
}

// objects is "1 object" or "N objects".
func objects(n uint64) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
