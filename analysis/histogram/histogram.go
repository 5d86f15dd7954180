// Package histogram builds class histograms — per class, the number of instances and their
// shallow bytes: the thesis's "simple heap dump" — from an HPROF file in one streaming pass, or
// from the text `jcmd PID GC.class_histogram` prints, and ranks classes whose instance counts
// keep growing across a series of histograms.
package histogram

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// Entry is one class's line.
type Entry struct {
	Class     string `json:"class"`
	Instances uint64 `json:"instances"`
	Bytes     uint64 `json:"bytes"`
}

// Histogram is a class histogram, entries sorted by bytes (then instances, then name).
type Histogram struct {
	Source    string  `json:"source"`
	Format    string  `json:"format"` // "hprof" or "jcmd"
	Entries   []Entry `json:"classes"`
	Instances uint64  `json:"total_instances"`
	Bytes     uint64  `json:"total_bytes"`
	// For dumps: the size model used, how many heap dumps the file holds and which one this is.
	Model     string   `json:"size_model,omitempty"`
	Dumps     int      `json:"dumps,omitempty"`
	DumpIndex int      `json:"dump,omitempty"`
	Partial   bool     `json:"partial,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
}

// Options control reading a dump.
type Options struct {
	Dump         int    // which heap dump of the file (1-based); 0 = the last
	Compressed   string // "", "auto", "on", "off": see heapdump.Options.Compressed
	AllowPartial bool   // a truncated dump yields the histogram of what was read, marked Partial
	Progress     func(done, total int64)
}

func (h *Histogram) finish() {
	sort.Slice(h.Entries, func(i, j int) bool {
		a, b := h.Entries[i], h.Entries[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		if a.Instances != b.Instances {
			return a.Instances > b.Instances
		}
		return a.Class < b.Class
	})
	h.Instances, h.Bytes = 0, 0
	for _, e := range h.Entries {
		h.Instances += e.Instances
		h.Bytes += e.Bytes
	}
}

// Read reads a histogram from path, which may be an HPROF dump (plain or gzip) or the text of
// jcmd GC.class_histogram (plain or gzip); the format is detected from the content.
func Read(path string, opt Options) (*Histogram, error) {
	if opt.Dump < 0 {
		return nil, fmt.Errorf("%s: dump %d asked for: dumps are numbered from 1 (0 asks for the last)", path, opt.Dump)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(2)
	var peekR *bufio.Reader = br
	if len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: bad gzip data: %v", path, err)
		}
		peekR = bufio.NewReader(zr)
	}
	start, _ := peekR.Peek(12)
	if bytes.HasPrefix(start, []byte("JAVA PROFILE")) {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return FromDump(path, f, opt)
	}
	h, err := ParseClassHistogram(peekR)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h.Source = path
	return h, nil
}

// ParseClassHistogram parses the output of `jcmd PID GC.class_histogram` (also jmap -histo):
//
//	 num     #instances         #bytes  class name (module)
//	-------------------------------------------------------
//	   1:         11801        2484488  [B (java.base@17.0.15)
//	...
//	Total         98765        4321098
//
// Class names are turned into Java form ("[B" → "byte[]") so that they match dump histograms;
// the module suffix is dropped.
func ParseClassHistogram(r io.Reader) (*Histogram, error) {
	h := &Histogram{Format: "jcmd"}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	var total *Entry
	byName := map[string]int{}
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" || strings.HasPrefix(s, "num ") || strings.HasPrefix(s, "---") {
			continue
		}
		f := strings.Fields(s)
		if f[0] == "Total" && len(f) >= 3 {
			n, err1 := strconv.ParseUint(f[1], 10, 64)
			b, err2 := strconv.ParseUint(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("line %d: bad Total line %q", line, s)
			}
			total = &Entry{Instances: n, Bytes: b}
			continue
		}
		if len(f) < 4 || !strings.HasSuffix(f[0], ":") {
			if line <= 2 && len(h.Entries) == 0 {
				// jcmd prints "PID:" first when run against a process.
				if _, err := strconv.Atoi(strings.TrimSuffix(s, ":")); err == nil {
					continue
				}
			}
			if len(h.Entries) == 0 {
				return nil, fmt.Errorf("neither an HPROF heap dump nor jcmd GC.class_histogram output (line %d: %.60q)", line, s)
			}
			return nil, fmt.Errorf("line %d: not a class histogram line (want \"N: instances bytes class\"): %q", line, s)
		}
		n, err1 := strconv.ParseUint(f[1], 10, 64)
		b, err2 := strconv.ParseUint(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("line %d: bad instance or byte count in %q", line, s)
		}
		// jcmd names hidden classes "Foo$$Lambda$1/0x…" where the dump says "Foo$$Lambda$1+0x…".
		name := f[3]
		if i := strings.LastIndex(name, "/0x"); i > 0 {
			name = name[:i] + "+" + name[i+1:]
		}
		name = hprof.JavaName(name)
		if i, ok := byName[name]; ok {
			// The same name from two class loaders: one class as far as a histogram is concerned.
			h.Entries[i].Instances += n
			h.Entries[i].Bytes += b
			continue
		}
		byName[name] = len(h.Entries)
		h.Entries = append(h.Entries, Entry{Class: name, Instances: n, Bytes: b})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(h.Entries) == 0 {
		return nil, fmt.Errorf("no class histogram lines found (neither an HPROF dump nor jcmd GC.class_histogram output)")
	}
	h.finish()
	if total != nil && (total.Instances != h.Instances || total.Bytes != h.Bytes) {
		h.Warnings = append(h.Warnings, fmt.Sprintf("Total line says %d instances, %d bytes; the lines add up to %d, %d", total.Instances, total.Bytes, h.Instances, h.Bytes))
	}
	return h, nil
}
