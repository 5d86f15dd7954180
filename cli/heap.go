package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/histogram"
)

func init() {
	register(&cli.Command{
		Name:  "heap",
		Usage: "analyse Java heap dumps (HPROF from jcmd GC.heap_dump, jmap, dumpHeap) and class histograms",
		Description: `Heap dumps may be plain or gzip-compressed (jcmd GC.heap_dump -gz=1); the format is detected
from the content. A compressed dump is inflated on other cores while it is read: the blocks that
HotSpot compresses separately (jcmd's -gz) side by side, any other gzip file as one stream on
one core. Inflating costs more than reading: a histogram of a compressed dump takes many times
as long as one of the plain file, and an analysis about twice as long. A damaged block of a
HotSpot dump is reported with its offset in the compressed file, before any of its bytes are
read. Damage in one gzip stream shows only where its data stops making sense or at its end,
where the checksum is: the error then says that the records read before may be damaged too.
Of a file holding several heap dumps only the one chosen (--dump; the last by default) is read:
damage inside the records of another stops the reading neither of a plain file nor of a
compressed one. Shallow sizes follow HotSpot's object layout: see 'heap histo --help'.`,
	})
	registerSub("heap", heapHistoCmd)
	registerSub("heap", heapTrendCmd)
}

// dumpFlags are shared by the heap subcommands that read dumps.
func dumpFlags() []cli.Flag {
	return []cli.Flag{
		&cli.IntFlag{Name: "dump", Usage: "which heap dump of a file holding several (1-based; 0 = the last)"},
		&cli.StringFlag{Name: "compressed", Value: "auto", Usage: "object layout: auto (found from the object addresses), on (compressed references, 12-byte headers) or off (8-byte references, 16-byte headers, as before JDK 15)"},
		&cli.BoolFlag{Name: "partial", Usage: "analyse what a truncated dump holds instead of failing (output is marked PARTIAL)"},
		&cli.BoolFlag{Name: "progress", Usage: "show progress on stderr even when it is not a terminal"},
		&cli.BoolFlag{Name: "json", Usage: "write JSON instead of text"},
	}
}

var heapHistoCmd = &cli.Command{
	Name:      "histo",
	Usage:     "class histogram (instances and shallow bytes per class) of a heap dump, in one pass",
	ArgsUsage: "DUMP",
	Description: `Reads an HPROF heap dump (plain or gzip) in one streaming pass and prints, per class, the
number of instances and their shallow bytes, largest first. DUMP may also be the text printed by
'jcmd PID GC.class_histogram' (or jmap -histo), which is passed through in the same form.

Shallow sizes: HotSpot's layout of the VM that wrote the dump. A 64-bit VM's is found from the
dump itself: object ids are addresses, and the gap between an array and the object dumped after it
is the array's size, which tells apart the default (compressed references and class pointers:
12-byte object header, 16-byte array header, 4-byte references), compact object headers (JDK 24
on: 8 and 12), uncompressed references (8 bytes; headers 12 and 16 from JDK 15 on, 16 and 24
before), uncompressed class pointers (16-byte headers, arrays 24, or 20 from JDK 22 on), and
objects aligned to 16 bytes instead of 8. With too few such arrays, compressed references are
assumed when all objects lie within 32 GB (HotSpot's default then), else 16-byte headers and
8-byte references (as before JDK 15); --compressed on/off sets one of those two. A 32-bit VM has
8-byte headers and 4-byte references. Fields are placed as HotSpot 15+ places them, every object
rounded up to the alignment. The header line says which layout was taken and how. Class objects
count as java.lang.Class instances plus their static fields.`,
	Flags: append(dumpFlags(),
		&cli.IntFlag{Name: "top", Usage: "print only the N largest classes (0 = all)"},
	),
	Action: func(c *cli.Context) error {
		args, err := interspersedArgs(c, c.Command.Flags)
		if err != nil {
			return fmt.Errorf("heap histo: %w", err)
		}
		if len(args) != 1 {
			return fmt.Errorf("heap histo: want exactly one DUMP argument, got %d", len(args))
		}
		// The pass allocates little but the names of the dump's symbols, which the collector
		// would otherwise scan again and again as they grow; a histogram is a cat-speed pass,
		// where a collection costs more than the memory it saves. GOGC still overrides.
		if os.Getenv("GOGC") == "" {
			defer debug.SetGCPercent(debug.SetGCPercent(800))
		}
		h, err := readHistogram(c, args[0])
		if err != nil {
			return fmt.Errorf("heap histo: %w", err)
		}
		// A line per class: one write for all of them rather than one each.
		out := bufio.NewWriter(c.App.Writer)
		defer out.Flush()
		if c.Bool("json") {
			return writeJSON(out, h)
		}
		writeHistogram(out, h, c.Int("top"))
		return out.Flush()
	},
}

var heapTrendCmd = &cli.Command{
	Name:      "trend",
	Usage:     "rank classes whose instance counts keep growing across dumps or histograms taken over time",
	ArgsUsage: "A B [C ...]",
	Description: `Takes two or more heap dumps or 'jcmd GC.class_histogram' outputs, oldest first, and ranks the
classes whose instance counts grow: those that grew in the largest share of intervals first, then
by the least-squares slope (instances per step). The thesis's cheap first step before an extended
dump: a class that grows in every interval is a leak suspect.`,
	Flags: append(dumpFlags(),
		&cli.IntFlag{Name: "top", Value: 20, Usage: "print the N strongest growers (0 = all)"},
	),
	Action: func(c *cli.Context) error {
		args, err := interspersedArgs(c, c.Command.Flags)
		if err != nil {
			return fmt.Errorf("heap trend: %w", err)
		}
		if len(args) < 2 {
			return fmt.Errorf("heap trend: want at least two dumps or histograms, oldest first; got %d", len(args))
		}
		var hs []*histogram.Histogram
		for _, p := range args {
			h, err := readHistogram(c, p)
			if err != nil {
				return fmt.Errorf("heap trend: %w", err)
			}
			hs = append(hs, h)
		}
		rows, err := histogram.Trend(hs)
		if err != nil {
			return fmt.Errorf("heap trend: %w", err)
		}
		if n := c.Int("top"); n > 0 && len(rows) > n {
			rows = rows[:n]
		}
		out := c.App.Writer
		if c.Bool("json") {
			var srcs []string
			partial := false
			for _, h := range hs {
				srcs = append(srcs, h.Source)
				partial = partial || h.Partial
			}
			return writeJSON(out, struct {
				Sources []string             `json:"sources"`
				Partial bool                 `json:"partial,omitempty"`
				Growing []histogram.TrendRow `json:"growing"`
			}{srcs, partial, rows})
		}
		for i, h := range hs {
			fmt.Fprintf(out, "# %d: %s (%s)%s\n", i+1, h.Source, h.Format, partialMark(h.Partial))
		}
		if len(rows) == 0 {
			fmt.Fprintln(out, "no class grew")
			return nil
		}
		fmt.Fprintf(out, "%12s %12s %12s %7s  %s\n", "first", "last", "slope/step", "grew", "class (instances per input)")
		for _, r := range rows {
			series := make([]string, len(r.Counts))
			for i, n := range r.Counts {
				series[i] = fmt.Sprint(n)
			}
			fmt.Fprintf(out, "%12d %12d %12.1f %6.0f%%  %s [%s]\n", r.First, r.Last, r.Slope, 100*r.Grew, r.Class, strings.Join(series, " "))
		}
		return nil
	},
}

func partialMark(p bool) string {
	if p {
		return " PARTIAL: the dump is truncated"
	}
	return ""
}

func readHistogram(c *cli.Context, path string) (*histogram.Histogram, error) {
	stderr := errWriter(c)
	opt := histogram.Options{Dump: c.Int("dump"), Compressed: c.String("compressed"), AllowPartial: c.Bool("partial")}
	p := newProgress(stderr, c.Bool("progress"))
	opt.Progress = func(done, total int64) { p.update("reading "+path, done, total) }
	h, err := histogram.Read(path, opt)
	p.done()
	if err != nil {
		if strings.Contains(err.Error(), "input ends at offset") && !c.Bool("partial") {
			err = fmt.Errorf("%w (--partial analyses the part that is there)", err)
		}
		return nil, err
	}
	for _, w := range h.Warnings {
		fmt.Fprintf(stderr, "warning: %s: %s\n", path, w)
	}
	return h, nil
}

func writeHistogram(out io.Writer, h *histogram.Histogram, top int) {
	fmt.Fprintf(out, "# %s (%s", h.Source, h.Format)
	if h.Format == "hprof" {
		fmt.Fprintf(out, ", dump %d of %d; %s", h.DumpIndex, h.Dumps, h.Model)
	}
	fmt.Fprintf(out, ")%s\n", partialMark(h.Partial))
	fmt.Fprintf(out, "%6s %14s %16s  %s\n", "num", "#instances", "#bytes", "class name")
	for i, e := range h.Entries {
		if top > 0 && i == top {
			fmt.Fprintf(out, "%6s %14s %16s  (%d more classes)\n", "...", "", "", len(h.Entries)-top)
			break
		}
		fmt.Fprintf(out, "%5d: %14d %16d  %s\n", i+1, e.Instances, e.Bytes, e.Class)
	}
	fmt.Fprintf(out, "%6s %14d %16d\n", "Total", h.Instances, h.Bytes)
}

// writeJSON prints v as indented JSON. HTML escaping is off: names such as "<unaccounted>" and
// "<GC root: ...>" must read as they are.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func errWriter(c *cli.Context) io.Writer {
	if c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}

// progress shows how far a long read has got on stderr: only once the work has taken more than
// a second, and only on a terminal unless forced, so pipes and logs never receive control
// characters they did not ask for. On a terminal it redraws one line; forced onto a
// non-terminal it writes a plain line at most once a second.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	on, tty bool
	start   time.Time
	last    time.Time
	shown   bool
}

func newProgress(w io.Writer, force bool) *progress {
	tty := isTerminal(w)
	return &progress{w: w, on: force || tty, tty: tty, start: time.Now()}
}

func (p *progress) update(what string, done, total int64) {
	if p == nil || !p.on {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond || (!p.tty && now.Sub(p.last) < time.Second) {
		return
	}
	p.last = now
	msg := fmt.Sprintf("%s: %d MB", what, done>>20)
	if total > 0 {
		msg = fmt.Sprintf("%s: %d / %d MB (%.0f%%)", what, done>>20, total>>20, 100*float64(done)/float64(total))
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", msg)
	} else {
		fmt.Fprintln(p.w, msg)
	}
	p.shown = true
}

func (p *progress) done() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown && p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	p.shown = false
}
