package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

func init() {
	register(&cli.Command{
		Name:      "leaks",
		Usage:     "rank the allocation sites whose live objects keep growing across snapshots",
		ArgsUsage: "SNAPSHOT SNAPSHOT...",
		Description: "Reads two or more snapshots of one run of a program taken with liveness on (rewrite with\n" +
			"--liveness all or sample:N), orders them by the program's uptime, and ranks the\n" +
			"(account, type, site) rows whose live count rose overall, in at least --min-share of the\n" +
			"intervals, and still in the last third of them (a cache that grew and levelled off is not\n" +
			"a leak). The account named is the principal the objects were charged to: the nearest\n" +
			"accounted method on the stack when they were allocated. With the agent's --object-init, a\n" +
			"class's Object.<init> hook row is ranked by the live objects no site naming the class\n" +
			"counted (its live count less its object and concat sites'), listed apart: objects made by\n" +
			"reflect and lambda sites, which name no class, can show in both lists.\n\n" +
			"Snapshots of different programs or processes are refused: their live counts are no one series,\n" +
			"and uptimes of different processes do not order them. --force ranks them anyway, with a warning.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the leaks as JSON"},
			&cli.Float64Flag{Name: "min-share", Value: snapshot.DefaultLeakOptions.MinShare, Usage: "smallest share of intervals in which the live count must have grown (0–1)"},
			&cli.Int64Flag{Name: "min-growth", Value: snapshot.DefaultLeakOptions.MinGrowth, Usage: "smallest rise of the live count, first to last snapshot"},
			&cli.IntFlag{Name: "top", Value: 20, Usage: "leaks to print (0 = all)"},
			&cli.BoolFlag{Name: "force", Usage: "rank snapshots of different programs or processes together (refused otherwise)"},
		},
		Action: leaksAction,
	})
}

func leaksAction(c *cli.Context) error {
	if c.NArg() < 2 {
		return cli.Exit("leaks needs two or more SNAPSHOT files (see heapledger leaks --help)", 2)
	}
	if s := c.Float64("min-share"); s < 0 || s > 1 {
		return cli.Exit("--min-share must be between 0 and 1", 2)
	}
	var snaps []*snapshot.Snapshot
	for _, p := range c.Args().Slice() {
		s, err := snapshot.ReadFile(p)
		if err != nil {
			return err
		}
		snaps = append(snaps, s)
	}
	leaks, warnings, err := snapshot.Leaks(snaps, snapshot.LeakOptions{MinShare: c.Float64("min-share"), MinGrowth: c.Int64("min-growth"), MixedRuns: c.Bool("force")})
	if errors.Is(err, snapshot.ErrDifferentRuns) {
		return fmt.Errorf("leaks: %w; give snapshots of one run, or --force to rank them together anyway", err)
	}
	var nl *snapshot.NoLivenessError
	if errors.As(err, &nl) {
		return fmt.Errorf("leaks: %w: rewrite with --liveness all or sample:N, or run with -Dheapledger.liveness=all", err)
	}
	if err != nil {
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(c.App.ErrWriter, "warning:", w)
	}
	shown := leaks
	if top := c.Int("top"); top > 0 && len(shown) > top {
		shown = shown[:top]
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, map[string]any{"snapshots": len(snaps), "leaks": shown, "total": len(leaks)})
	}
	w := c.App.Writer
	if len(leaks) == 0 {
		fmt.Fprintf(w, "no growing allocation sites in %d snapshots\n", len(snaps))
		return nil
	}
	// The hook's rows are a second view of the objects: apart from the sites, numbered in one
	// ranking so --top cuts both alike.
	var sites, hook []int
	for i, l := range shown {
		if l.Hook {
			hook = append(hook, i)
		} else {
			sites = append(sites, i)
		}
	}
	fmt.Fprintf(w, "%d growing allocation sites", len(leaks)-countHook(leaks))
	if n := countHook(leaks); n > 0 {
		fmt.Fprintf(w, " and %d growing classes seen by the Object.<init> hook", n)
	}
	fmt.Fprintf(w, " in %d snapshots (most live bytes gained first):\n", len(snaps))
	if len(sites) > 0 {
		fmt.Fprintln(w)
		leakTable(w, shown, sites)
	}
	if len(hook) > 0 {
		fmt.Fprintln(w, "\nObject.<init> hook (--object-init): live objects of the class that no site naming it counted")
		fmt.Fprintln(w, "(objects made by reflect and lambda sites, which name no class, may be listed above too):")
		leakTable(w, shown, hook)
	}
	if len(shown) < len(leaks) {
		fmt.Fprintf(w, "(%d more; --top 0 shows all)\n", len(leaks)-len(shown))
	}
	return nil
}

func countHook(leaks []snapshot.Leak) int {
	n := 0
	for _, l := range leaks {
		if l.Hook {
			n++
		}
	}
	return n
}

// leakTable prints the leaks at the given ranks (from 0) of the ranking.
func leakTable(w io.Writer, leaks []snapshot.Leak, ranks []int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\taccount\ttype\tlive first→last\tgained\tper s\tgrew\tgenerations\tsite")
	for _, i := range ranks {
		l := leaks[i]
		n := len(l.Live)
		gained := "?"
		if l.LiveBytes[0] >= 0 && l.LiveBytes[n-1] >= 0 {
			gained = humanBytes(l.LiveBytes[n-1] - l.LiveBytes[0])
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d→%d\t%s\t%.1f\t%d/%d\t%d\t%s\n", i+1, l.Account, l.Type, l.Live[0], l.Live[n-1], gained, l.Slope, l.Grew, l.Intervals, l.Generations, l.Site)
	}
	tw.Flush()
}
