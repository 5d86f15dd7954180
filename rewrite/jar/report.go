package jar

import (
	"fmt"
	"sort"
	"strings"
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
	// SkippedMethods counts methods the pass left alone; SkipReasons groups them by reason.
	// A Skip without a method (a whole class left alone) counts under its reason too.
	SkippedMethods int
	SkipReasons    map[string]int
	Failures       []Failure
	// Warnings are things the user should know that did not stop the run: duplicates across
	// inputs, removed signature files, warnings of the pass.
	Warnings []string
}

func (r *Report) warn(format string, args ...any) {
	r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
}

// Summary is the one-line account of a run printed by `heapledger rewrite`.
func (r *Report) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d classes: %d rewritten, %d unchanged, %d failed; %d methods skipped",
		r.Classes, r.Rewritten, r.Unchanged, r.Failed, r.SkippedMethods)
	if len(r.SkipReasons) > 0 {
		reasons := make([]string, 0, len(r.SkipReasons))
		for reason := range r.SkipReasons {
			reasons = append(reasons, reason)
		}
		// Most frequent first, so the reason worth fixing leads.
		sort.Slice(reasons, func(i, j int) bool {
			ri, rj := r.SkipReasons[reasons[i]], r.SkipReasons[reasons[j]]
			if ri != rj {
				return ri > rj
			}
			return reasons[i] < reasons[j]
		})
		b.WriteString(" (")
		for i, reason := range reasons {
			if i > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %d", reason, r.SkipReasons[reason])
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, "; %d entries written", r.Entries)
	return b.String()
}
