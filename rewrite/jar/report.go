package jar

import (
	"fmt"
	"sort"
	"strings"

	"github.com/heapledger/heapledger/rewrite/transform"
)

// Failure is a class that could not be rewritten and was copied unchanged.
type Failure struct {
	Entry string // "lib.jar!a/B.class"
	Err   error
}

func (f Failure) String() string { return f.Entry + ": " + f.Err.Error() }

// Report counts what a run did. Rewritten + Unchanged + Failed == Classes.
type Report struct {
	Entries   int // entries written to the output
	Classes   int // class entries handed to the pass
	Rewritten int // classes whose bytes changed
	Unchanged int // classes the pass left as they were (or returned identical bytes for)
	Failed    int // classes that failed to parse or rewrite and were copied unchanged
	// SkippedMethods counts methods the pass left alone; SkipReasons groups them by reason
	// (transform.SkipCode, never a detail that names a method or an offset).
	SkippedMethods int
	SkipReasons    map[string]int
	// SkippedClasses counts classes the pass left alone as a whole (module-info, a class
	// rewritten before), which are among Unchanged; ClassReasons groups them by reason.
	SkippedClasses int
	ClassReasons   map[string]int
	// FallbackMethods counts methods the pass rewrote with a fallback (transform.SkipCode's
	// Fallback: --counters paths keeping a method's objects on per-site counters), which are
	// not among SkippedMethods; FallbackReasons groups them by code.
	FallbackMethods int
	FallbackReasons map[string]int
	// Examples holds, by reason, the first skip met for it with its detail ("a/B.run()V:
	// ..."), for a listing that shows what each reason looks like.
	Examples map[string]string
	Failures []Failure
	// Warnings are things the user should know that did not stop the run: duplicates across
	// inputs, removed signature files, warnings of the pass.
	Warnings []string
}

func (r *Report) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// ReasonCount is how many methods were skipped for one reason.
type ReasonCount struct {
	Reason  string
	Methods int
	Example string // Report.Examples of the reason
}

// skipped counts one skip of class (an entry name) under its code.
func (r *Report) skipped(entry string, s transform.Skip) {
	code := string(s.Code)
	switch {
	case s.Code.Fallback():
		if r.FallbackReasons == nil {
			r.FallbackReasons = map[string]int{}
		}
		r.FallbackMethods++
		r.FallbackReasons[code]++
	case s.Method == "":
		r.SkippedClasses++
		r.ClassReasons[code]++
	default:
		r.SkippedMethods++
		r.SkipReasons[code]++
	}
	if _, ok := r.Examples[code]; !ok {
		if r.Examples == nil {
			r.Examples = map[string]string{}
		}
		what := entry
		if s.Method != "" {
			what += " " + s.Method
		}
		if s.Detail != "" {
			what += ": " + s.Detail
		}
		r.Examples[code] = what
	}
}

// Reasons lists the reasons methods were skipped for, most frequent first, so the reason
// worth fixing leads.
func (r *Report) Reasons() []ReasonCount { return r.byCount(r.SkipReasons) }

// Fallbacks lists the codes methods were rewritten with a fallback for, as Reasons does.
func (r *Report) Fallbacks() []ReasonCount { return r.byCount(r.FallbackReasons) }

// ClassSkips lists the reasons whole classes were skipped for, as Reasons does (Methods then
// counts classes).
func (r *Report) ClassSkips() []ReasonCount { return r.byCount(r.ClassReasons) }

func (r *Report) byCount(m map[string]int) []ReasonCount {
	rs := make([]ReasonCount, 0, len(m))
	for reason, n := range m {
		rs = append(rs, ReasonCount{reason, n, r.Examples[reason]})
	}
	sort.Slice(rs, func(i, j int) bool {
		if rs[i].Methods != rs[j].Methods {
			return rs[i].Methods > rs[j].Methods
		}
		return rs[i].Reason < rs[j].Reason
	})
	return rs
}

// summaryReasons is how many skip reasons the summary line names; a pass whose reasons carry
// method names would otherwise make the line as long as the jar. The rest are counted.
const summaryReasons = 5

// Summary is the one-line account of a run printed by `heapledger rewrite`.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d classes: %d rewritten, %d unchanged, %d failed; %d methods skipped",
		r.Classes, r.Rewritten, r.Unchanged, r.Failed, r.SkippedMethods)
	writeReasons(&b, r.Reasons(), "methods")
	if r.FallbackMethods > 0 {
		fmt.Fprintf(&b, "; %d methods rewritten with a fallback", r.FallbackMethods)
		writeReasons(&b, r.Fallbacks(), "methods")
	}
	if r.SkippedClasses > 0 {
		fmt.Fprintf(&b, "; %d classes skipped", r.SkippedClasses)
		writeReasons(&b, r.ClassSkips(), "classes")
	}
	fmt.Fprintf(&b, "; %d entries written", r.Entries)
	return b.String()
}

func writeReasons(b *strings.Builder, rs []ReasonCount, what string) {
	if len(rs) == 0 {
		return
	}
	b.WriteString(" (")
	for i, rc := range rs {
		if i == summaryReasons {
			rest := 0
			for _, x := range rs[i:] {
				rest += x.Methods
			}
			fmt.Fprintf(b, "; %d more %s for %d other reasons", rest, what, len(rs)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(b, "%s: %d", rc.Reason, rc.Methods)
	}
	b.WriteString(")")
}
