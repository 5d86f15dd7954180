package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/internal/htmlreport"
	"github.com/heapledger/heapledger/internal/outfile"
)

func init() {
	register(&cli.Command{
		Name:      "html",
		Usage:     "write one self-contained HTML report: accounts, flame graphs, accounts over time and growing sites, a heap dump's analysis",
		ArgsUsage: "SNAPSHOT... [DUMP]",
		Description: `Writes one HTML file (-o, default heapledger-report.html) that works offline, with nothing
to install: the JavaScript libraries that draw it (d3-flame-graph on d3, uPlot) are inside it.

  - per-account totals of the latest snapshot, as heapledger report prints them, with each
    account's top allocation sites;
  - an interactive flame graph of its allocations (bytes or objects), and of its live objects
    when it has liveness: each stack is the account charged (at the root, in brackets), the
    allocating method and the allocated type; click to zoom, search to highlight frames;
  - given several snapshots of one run: each account's live bytes in every snapshot (its
    allocated bytes, without liveness) and the growing sites, ranked as heapledger leaks ranks
    them;
  - given a heap dump (HPROF, plain or gzip): the summary of heapledger heap analyze, with the
    leak suspects, the top objects by retained size and retained size by class, and with a dump
    of a run with liveness, retained size per account and site (named from the dump's own table,
    else --table, else the latest snapshot).

Snapshots and a dump are told apart by their contents, in any order. The latest snapshot is the
one taken last (by uptime within one run, by wall-clock time across runs). See docs/profiles.md.`,
		Flags:  htmlFlags,
		Action: htmlAction,
	})
}

var htmlFlags = append([]cli.Flag{
	&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "heapledger-report.html", Usage: "the HTML file to write"},
	&cli.StringFlag{Name: "title", Usage: "the report's title", DefaultText: "heapledger: PROGRAM"},
	&cli.IntFlag{Name: "top", Value: 20, Usage: "rows of every ranking: growing sites, each account's top sites, the dump's objects and classes (0 = all)"},
	&cli.BoolFlag{Name: "lines", Usage: "flame graphs: give method frames their line, so that a method's sites stay apart"},
	&cli.BoolFlag{Name: "force", Usage: "rank the growing sites of snapshots of different runs together (as leaks --force)"},
}, analyzeFlags()...)

func htmlAction(c *cli.Context) error {
	args, err := interspersedArgs(c, htmlFlags)
	if err != nil {
		return cli.Exit("html: "+err.Error(), 2)
	}
	var snaps []*snapshot.Snapshot
	dump := ""
	for _, a := range args {
		isDump, err := isHeapDump(a)
		if err != nil {
			return fmt.Errorf("html: %w", err)
		}
		if isDump {
			if dump != "" {
				return cli.Exit(fmt.Sprintf("html: two heap dumps, %s and %s: a report shows one (heapledger heap trend compares dumps)", dump, a), 2)
			}
			dump = a
			continue
		}
		s, err := snapshot.ReadFile(a)
		if err != nil {
			return err
		}
		snaps = append(snaps, s)
	}
	if len(snaps) == 0 && dump == "" {
		return cli.Exit("html needs one or more SNAPSHOT files, and may take a heap DUMP (see heapledger html --help)", 2)
	}
	if err := checkAnalyzeFlags(c); err != nil {
		return cli.Exit("html: "+err.Error(), 2)
	}
	page, err := htmlreport.Build(snaps, htmlreport.Options{Version: version, Top: c.Int("top"), Lines: c.Bool("lines"), MixedRuns: c.Bool("force"), Now: time.Now()})
	if err != nil {
		return fmt.Errorf("html: %w", err)
	}
	stderr := errWriter(c)
	if g := page.Growing; g != nil {
		for _, w := range g.Warnings {
			fmt.Fprintln(stderr, "warning:", w)
		}
	}
	if dump != "" {
		names := ""
		if len(snaps) > 0 {
			names = page.Snapshots[page.Latest].Path
		}
		given, err := givenNames(c.String("table"), names)
		if err != nil {
			return fmt.Errorf("html: %w", err)
		}
		shown := newPhases(stderr, dump, c.Bool("progress"), c.Bool("timings"))
		rep, err := analyzeDump(c, dump, given, shown)
		shown.end()
		if err != nil {
			return fmt.Errorf("html: %w", err)
		}
		page.Heap = rep
	}
	page.Title = c.String("title")
	if page.Title == "" {
		page.Title = "heapledger: " + reportSubject(page, dump)
	}
	out := c.String("output")
	f, err := outfile.Create(out, outfile.Data)
	if err != nil {
		return err
	}
	if err := htmlreport.Write(f, page); err != nil {
		f.Abort()
		return fmt.Errorf("html: %w", err)
	}
	if err := f.Commit(); err != nil {
		return err
	}
	abs, _ := filepath.Abs(out)
	fmt.Fprintf(c.App.Writer, "wrote %s: open it in a browser\n", abs)
	return nil
}

// reportSubject names what a report is of: the latest snapshot's program, else the dump.
func reportSubject(p *htmlreport.Page, dump string) string {
	if len(p.Snapshots) > 0 {
		if prog := p.Snapshots[p.Latest].Program; prog != "" {
			return prog
		}
		return filepath.Base(p.Snapshots[p.Latest].Path)
	}
	return filepath.Base(dump)
}

// isHeapDump tells an HPROF heap dump (plain or gzip-compressed) from a snapshot by its first
// bytes, and refuses a file that is neither.
func isHeapDump(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return false, nil // snapshot.ReadFile says what a directory holds
	}
	head := make([]byte, 32)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return false, err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return false, fmt.Errorf("%s: %w", path, err)
		}
		head = make([]byte, 32)
		n, _ = io.ReadFull(zr, head)
		head = head[:n]
	}
	switch {
	case bytes.HasPrefix(head, []byte("JAVA PROFILE ")):
		return true, nil
	case bytes.HasPrefix(head, []byte("# heapledger snapshot")), bytes.HasPrefix(bytes.TrimLeft(head, " \t\r\n"), []byte("{")):
		return false, nil
	}
	return false, fmt.Errorf("%s is neither a heapledger snapshot nor an HPROF heap dump", path)
}
