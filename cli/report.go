package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/urfave/cli/v2"
)

func init() {
	register(&cli.Command{
		Name:      "report",
		Usage:     "print who allocated what, per memory account, from a runtime snapshot; or write it as a pprof profile or collapsed stacks",
		ArgsUsage: "SNAPSHOT",
		Description: "Reads a snapshot written by the heapledger runtime (text or JSON) and prints, per account,\n" +
			"objects, arrays, array elements and shallow bytes, with the top types, methods and sites.\n" +
			"Accounts are sorted by bytes. Rows whose object size was unknown are counted but their\n" +
			"bytes are left out, and the report says so. With the agent's --object-init, the rows of\n" +
			"the Object.<init> hook (every object constructed, per class) are a second view of objects\n" +
			"rewritten sites may also have counted: they stay out of the totals and are shown apart, per\n" +
			"account, with what no rewritten site saw (a class's init row minus its object and concat\n" +
			"rows, less the objects of reflect and lambda sites, which name no class).\n\n" +
			"--format pprof writes a profile for `go tool pprof` (gzip-compressed protocol buffer):\n" +
			"sample types alloc_objects, alloc_space and, with liveness, inuse_objects and inuse_space\n" +
			"(the default then, as in Go's heap profiles); each sample's stack is the allocated type on\n" +
			"the allocating method at the site's line (source file derived from the class name), with\n" +
			"the account, type and kind as labels (go tool pprof -tagroot=account puts accounts at the\n" +
			"root). --format collapsed writes collapsed stacks, the input of flame-graph tools, one\n" +
			"value (--sample-type) per stack, each stack's account as its root frame ([account]) unless\n" +
			"--by-account=false. Their totals are the report's: rows of unknown size count their\n" +
			"objects and no bytes, and the Object.<init> hook's rows are left out. --base OLD writes\n" +
			"the difference from snapshot OLD: pprof as its own -diff_base builds one, collapsed\n" +
			"stacks with a base and a new column (difffolded.pl's form). See docs/profiles.md.\n\n" +
			"A snapshot of a --context cct run carries calling contexts: --tree prints the --top contexts by\n" +
			"their own bytes with their stacks, then the tree with each context's callees' allocations\n" +
			"(--tree-depth levels, contexts under --tree-threshold percent of all bytes left out); --json\n" +
			"carries the whole tree, and pprof and collapsed stacks have full stacks.",
		Flags: append(reportFlags, treeFlags...),
		Action: func(c *cli.Context) error {
			args, err := interspersedArgs(c, append(reportFlags, treeFlags...))
			if err != nil {
				return cli.Exit("report: "+err.Error(), 2)
			}
			if len(args) != 1 {
				return cli.Exit("report needs exactly one SNAPSHOT file (see heapledger report --help)", 2)
			}
			if c.Int("top") < 0 {
				return cli.Exit("--top must be 0 (all) or more", 2)
			}
			format, err := reportFormat(c)
			if err == nil {
				err = checkTreeFlags(c, format)
			}
			if err != nil {
				return cli.Exit(err.Error(), 2)
			}
			s, err := snapshot.ReadFile(args[0])
			if err != nil {
				return err
			}
			switch format {
			case "pprof", "collapsed":
				return writeProfile(c, format, s)
			}
			return writeReport(c, format, func(w io.Writer) error {
				rep := s.Summarize(c.Int("top"))
				if format == "json" {
					return writeJSON(w, rep)
				}
				if c.Bool("tree") {
					return printTree(w, s, c.Int("top"), c.Int("tree-depth"), c.Float64("tree-threshold"))
				}
				printReport(w, s, rep)
				return nil
			})
		},
	})
}

var reportFlags = []cli.Flag{
	&cli.StringFlag{Name: "format", Value: "text", Usage: "text, json, pprof (a profile for go tool pprof) or collapsed (collapsed stacks for flame-graph tools)"},
	&cli.BoolFlag{Name: "json", Usage: "print the report as JSON (--format json)"},
	&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to FILE instead of standard output (pprof: FILE.pb.gz)"},
	&cli.IntFlag{Name: "top", Value: 5, Usage: "text and json: entries in each top list (0 = all)"},
	&cli.StringFlag{Name: "base", Usage: "pprof and collapsed: write the difference from this earlier SNAPSHOT"},
	&cli.StringFlag{Name: "sample-type", Usage: "collapsed: the value to write, alloc_objects, alloc_space, inuse_objects or inuse_space", DefaultText: "inuse_space with liveness, else alloc_space"},
	&cli.BoolFlag{Name: "by-account", Value: true, Usage: "collapsed: put each stack's account below it as its root frame, [account]"},
	&cli.BoolFlag{Name: "lines", Usage: "collapsed: append :LINE to method frames, so that a method's sites stay apart"},
}

// reportFormat is the output format the flags ask for, refusing combinations that would
// silently ignore one of them.
func reportFormat(c *cli.Context) (string, error) {
	format := c.String("format")
	if c.Bool("json") {
		if c.IsSet("format") && format != "json" {
			return "", fmt.Errorf("--json and --format %s disagree", format)
		}
		format = "json"
	}
	switch format {
	case "text", "json", "pprof", "collapsed":
	default:
		return "", fmt.Errorf("--format %q: want text, json, pprof or collapsed", format)
	}
	if c.String("base") != "" && format != "pprof" && format != "collapsed" {
		return "", fmt.Errorf("--base needs --format pprof or collapsed")
	}
	for _, f := range []string{"sample-type", "by-account", "lines"} {
		if c.IsSet(f) && format != "collapsed" {
			return "", fmt.Errorf("--%s applies to --format collapsed only (pprof holds every sample type and both views)", f)
		}
	}
	if c.IsSet("top") && format != "text" && format != "json" {
		return "", fmt.Errorf("--top applies to the text and json reports only (profiles hold every site)")
	}
	return format, nil
}

func printReport(w io.Writer, s *snapshot.Snapshot, rep *snapshot.Report) {
	h := rep.Header
	fmt.Fprintf(w, "heapledger report: %s (program %s, pid %s, %s snapshot at %s)\n",
		s.Path, h["program"], h["pid"], h["reason"], h["time"])
	if d := h["dropped"]; d != "" && d != "0" {
		fmt.Fprintf(w, "warning: the runtime dropped %s events", d)
		if first := h["dropped_first"]; first != "" {
			fmt.Fprintf(w, " (the first: %s)", first)
		}
		fmt.Fprintln(w)
	}
	if rep.Liveness {
		fmt.Fprintln(w, liveBasis(h))
	}
	// Path counters (--counters paths) see no object: said when liveness or a budget was on,
	// and for a site whose class the runtime could not name for its size.
	for _, k := range []string{"unseen_objects", "unsized_sites"} {
		if v := h[k]; v != "" {
			fmt.Fprintf(w, "warning: %s\n", v)
		}
	}
	if c := h["clashes"]; c != "" {
		fmt.Fprintf(w, "warning: %s: jars rewritten apart whose IDs met; their counts are named <ambiguous: ...>. Rewrite one of them again with --table naming the other's table (docs/formats.md, \"Site IDs\")\n", c)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	live := func(t snapshot.Totals) string {
		if !rep.Liveness {
			return ""
		}
		return fmt.Sprintf("%d\t%s\t%d\t", t.Live, humanBytes(t.LiveBytes), t.Reclaimed)
	}
	liveHead := ""
	if rep.Liveness {
		liveHead = "live\tlive bytes\treclaimed\t"
	}
	fmt.Fprintln(tw, "objects\tarrays\telements\tbytes\tshare\t"+liveHead+"\taccount\t")
	for _, a := range rep.Accounts {
		t := a.Totals
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%s\t%s\t\n", t.Objects, t.Arrays, t.Elements, bytesCell(t), share(t.Bytes, rep.Total.Bytes), live(t), a.Name)
	}
	t := rep.Total
	fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t100.0%%\t%s\t%s\t\n", t.Objects, t.Arrays, t.Elements, bytesCell(t), live(t), "(total)")
	tw.Flush()
	if hv := rep.Hook; hv != nil {
		fmt.Fprintf(w, "\nObject.<init> hook (--object-init), not in the figures above: constructed %s; not seen at any rewritten site %s\n",
			hookFigures(hv.Constructed, rep.Liveness), hookFigures(hv.NotSeen, rep.Liveness))
	}
	if rep.Liveness {
		fmt.Fprintf(w, "\nliveness %s", h["liveness"])
		if strings.HasPrefix(h["liveness"], "sample:") {
			fmt.Fprintf(w, " (live and reclaimed figures are estimates scaled from every %s-th allocation per site)", strings.TrimPrefix(h["liveness"], "sample:"))
		}
		if rep.Total.Untracked > 0 {
			fmt.Fprintf(w, "; %d objects were allocated past the tracking bound and are neither live nor reclaimed here", rep.Total.Untracked)
		}
		fmt.Fprintln(w)
		if len(rep.Ages) > 0 {
			fmt.Fprint(w, "live objects by age in collections:")
			for i, n := range rep.Ages {
				if n == 0 {
					continue
				}
				lo, hi := 0, 0
				if i > 0 {
					lo, hi = 1<<(i-1), 1<<i-1
				}
				if lo == hi {
					fmt.Fprintf(w, " %d: %d", lo, n)
				} else {
					fmt.Fprintf(w, " %d–%d: %d", lo, hi, n)
				}
			}
			fmt.Fprintln(w)
		}
	}
	for _, a := range rep.Accounts {
		fmt.Fprintf(w, "\n%s\n", a.Name)
		section(w, "top types", a.TopTypes)
		section(w, "top methods", a.TopMethods)
		section(w, "top sites", a.TopSites)
		if a.Hook != nil {
			hookSection(w, a.Hook, rep.Liveness)
		}
	}
	if rep.Total.UnknownRows > 0 {
		fmt.Fprintf(w, "\nnote: %d rows had no known object size; their bytes are not included (marked '+?').\n", rep.Total.UnknownRows)
	}
}

func section(w io.Writer, title string, es []snapshot.Entry) {
	if len(es) == 0 {
		return
	}
	fmt.Fprintf(w, "  %s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, e := range es {
		n := e.Totals.Objects + e.Totals.Arrays
		kind := "objects"
		if e.Totals.Arrays > 0 && e.Totals.Objects == 0 {
			kind = "arrays"
		} else if e.Totals.Arrays > 0 {
			kind = "objects+arrays"
		}
		fmt.Fprintf(tw, "    %d %s\t%s\t%s\n", n, kind, bytesCell(e.Totals), e.Name)
	}
	tw.Flush()
}

// hookSection prints an account's view from the Object.<init> hook: what it saw constructed,
// what no rewritten site counted, and per class how the two views meet.
func hookSection(w io.Writer, hv *snapshot.HookView, liveness bool) {
	fmt.Fprintf(w, "  constructed (Object.<init> hook; not in the totals above): %s\n", hookFigures(hv.Constructed, liveness))
	fmt.Fprintf(w, "    not seen at any rewritten site: %s\n", hookFigures(hv.NotSeen, liveness))
	if u := hv.Unnamed; u.Objects > 0 {
		fmt.Fprintf(w, "    (%d objects of reflect and lambda sites, which do not name the class, are taken off the account's figure, not a class's)\n", u.Objects)
	}
	if len(hv.Classes) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	liveHead := ""
	if liveness {
		liveHead = "live not seen\t"
	}
	// The class name is the one cell left unterminated, so it stays left-aligned.
	fmt.Fprintln(tw, "    constructed\tat object/concat sites\tnot seen there\tbytes not seen\t"+liveHead+"  class")
	for _, c := range hv.Classes {
		live := ""
		if liveness {
			live = fmt.Sprintf("%d\t", c.NotSeen.Live)
		}
		fmt.Fprintf(tw, "    %d\t%d\t%d\t%s\t%s  %s\n", c.Constructed.Objects, c.AtSites.Objects, c.NotSeen.Objects, bytesCell(c.NotSeen), live, c.Name)
	}
	tw.Flush()
}

// hookFigures is "N objects, B" with the live count when liveness was on.
func hookFigures(t snapshot.Totals, liveness bool) string {
	s := fmt.Sprintf("%d objects, %s", t.Objects, bytesCell(t))
	if liveness {
		s += fmt.Sprintf(", %d live", t.Live)
	}
	return s
}

func bytesCell(t snapshot.Totals) string {
	s := humanBytes(t.Bytes)
	if t.UnknownRows > 0 {
		s += "+?"
	}
	return s
}

func share(part, total int64) string {
	if total <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(part)/float64(total))
}

// humanBytes prints exact bytes below 10 KiB and binary units above, so small fixtures stay
// readable as exact numbers.
func humanBytes(n int64) string {
	const unit = 1024
	if n < 10*unit {
		return fmt.Sprintf("%d B", n)
	}
	f := float64(n)
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB"} {
		f /= unit
		if f < unit {
			return strings.TrimSuffix(fmt.Sprintf("%.1f", f), ".0") + " " + u
		}
	}
	return fmt.Sprintf("%.1f PiB", f/unit)
}

// liveBasis says what the live figures of a snapshot are of (its gc_before, young and
// refunded_by_snapshot lines; snapshots of earlier runtimes have none of them).
func liveBasis(h map[string]string) string {
	var basis string
	switch h["gc_before"] {
	case "true":
		basis = "live: exactly the tracked objects a full GC just before this snapshot left reachable"
	case "false":
		basis = "live: the tracked objects the last collection left (no full GC before this snapshot: old garbage no collection has examined since counts as live; --snapshot-gc makes them exact)"
	default:
		return "live: the tracked objects not yet known to be reclaimed (a snapshot of an earlier runtime)"
	}
	if y := h["young"]; y != "" && y != "0" {
		basis += "; " + y + " objects tracked since are in neither live nor reclaimed"
	}
	if r := h["refunded_by_snapshot"]; r != "" && r != "0" {
		basis += "; " + r + " objects the collector had reclaimed were still waiting to be refunded, and the snapshot refunded them"
	}
	return basis
}
