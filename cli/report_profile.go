package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/analysis/stacks"
	"github.com/heapledger/heapledger/internal/outfile"
)

// writeProfile writes the snapshot as a pprof profile or collapsed stacks (report --format),
// the difference from --base when given.
func writeProfile(c *cli.Context, format string, s *snapshot.Snapshot) error {
	p := stacks.FromSnapshot(s)
	if path := c.String("base"); path != "" {
		b, err := snapshot.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--base: %w", err)
		}
		d, dropped, err := stacks.Diff(p, stacks.FromSnapshot(b))
		if err != nil {
			return fmt.Errorf("--base %s: %w", path, err)
		}
		if len(dropped) > 0 {
			fmt.Fprintf(errWriter(c), "warning: only one of %s and %s has liveness: the difference leaves out %s\n", path, s.Path, strings.Join(dropped, ", "))
		}
		p = d
	}
	unknown := 0
	for _, smp := range p.Samples {
		if smp.UnknownSize && !smp.Base {
			unknown++
		}
	}
	if unknown > 0 {
		fmt.Fprintf(errWriter(c), "note: %d rows had no known object size: their objects are counted, their bytes are not (as in the text report)\n", unknown)
	}
	if format == "pprof" {
		if c.String("output") == "" && isTerminal(c.App.Writer) {
			return cli.Exit("--format pprof writes a binary file: give -o FILE.pb.gz, or redirect standard output", 2)
		}
		return writeReport(c, format, p.WritePprof)
	}
	opt := stacks.StackOptions{Type: c.String("sample-type"), Accounts: c.Bool("by-account"), Lines: c.Bool("lines")}
	return writeReport(c, format, func(w io.Writer) error { return p.WriteCollapsed(w, opt) })
}

// writeReport runs write on the --output file, written whole or not at all, or on standard
// output.
func writeReport(c *cli.Context, format string, write func(io.Writer) error) error {
	path := c.String("output")
	if path == "" {
		return write(c.App.Writer)
	}
	f, err := outfile.Create(path, outfile.Data)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Abort()
		return fmt.Errorf("report --format %s: %w", format, err)
	}
	return f.Commit()
}
