package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// treeFlags are report's options for the calling-context tree (--context cct snapshots).
var treeFlags = []cli.Flag{
	&cli.BoolFlag{Name: "tree", Usage: "text: show the calling contexts of a --context cct snapshot instead: the --top contexts by their own bytes with their stacks, then the tree (--json always carries the whole tree)"},
	&cli.IntFlag{Name: "tree-depth", Value: 12, Usage: "--tree: levels of the tree shown below the root"},
	&cli.Float64Flag{Name: "tree-threshold", Value: 1, Usage: "--tree: leave out contexts whose bytes with their callees' are below this percentage of all bytes"},
}

// checkTreeFlags refuses the tree's options where they would be ignored.
func checkTreeFlags(c *cli.Context, format string) error {
	for _, f := range []string{"tree-depth", "tree-threshold"} {
		if c.IsSet(f) && !c.Bool("tree") {
			return fmt.Errorf("--%s applies to --tree only", f)
		}
	}
	if c.Bool("tree") && format != "text" && format != "json" {
		return fmt.Errorf("--tree applies to the text report (and --json, which always carries the tree)")
	}
	if c.Float64("tree-threshold") < 0 || c.Int("tree-depth") < 1 {
		return fmt.Errorf("--tree-depth must be 1 or more and --tree-threshold 0 or more")
	}
	return nil
}

// printTree prints the hottest contexts and the tree down to depth levels, leaving out the
// contexts below threshold percent of all bytes (of all objects and arrays when no bytes are
// known).
func printTree(w io.Writer, s *snapshot.Snapshot, top, depth int, threshold float64) error {
	rep := s.ContextTree()
	if rep == nil {
		return fmt.Errorf("%s has no calling contexts: rewrite (or run the agent) with --context cct", s.Path)
	}
	h := s.Header
	fmt.Fprintf(w, "heapledger calling contexts: %s (program %s, pid %s, %s snapshot at %s)\n", s.Path, h["program"], h["pid"], h["reason"], h["time"])
	fmt.Fprintf(w, "context %s\n", rep.Mode)
	if cutNote := contextCuts(rep.Mode); cutNote != "" {
		fmt.Fprintln(w, "warning: "+cutNote)
	}
	total := rep.Nodes[0].Total
	fmt.Fprintf(w, "\nhottest contexts by their own allocations (top %d):\n", top)
	for _, id := range rep.Hottest(top) {
		n := rep.Nodes[id]
		fmt.Fprintf(w, "  %s, %d objects, %d arrays, %d calls [%s]\n", bytesCell(n.Self), n.Self.Objects, n.Self.Arrays, n.Calls, n.Account)
		stack := rep.Stack(id)
		for i := 0; i < len(stack); {
			j := i + 1
			for j < len(stack) && stack[j] == stack[i] {
				j++
			}
			if j-i > 1 {
				fmt.Fprintf(w, "      %s (×%d, recursive)\n", stack[i], j-i)
			} else {
				fmt.Fprintf(w, "      %s\n", stack[i])
			}
			i = j
		}
	}
	weight := func(t snapshot.Totals) float64 {
		if total.Bytes > 0 {
			return float64(t.Bytes) / float64(total.Bytes)
		}
		if all := total.Objects + total.Arrays; all > 0 {
			return float64(t.Objects+t.Arrays) / float64(all)
		}
		return 0
	}
	fmt.Fprintf(w, "\ntree (with callees; share of all bytes; contexts below %.1f%% and deeper than %d levels left out):\n", threshold, depth)
	fmt.Fprintf(w, "%10s %6s %9s %8s %9s  %s\n", "bytes", "share", "objects", "arrays", "calls", "context")
	var walk func(id, level int)
	walk = func(id, level int) {
		n := rep.Nodes[id]
		fmt.Fprintf(w, "%10s %5.1f%% %9d %8d %9d  %s%s", bytesCell(n.Total), 100*weight(n.Total), n.Total.Objects, n.Total.Arrays, n.Calls,
			strings.Repeat("  ", level), n.Method)
		if n.Account != "" {
			fmt.Fprintf(w, " [%s]", n.Account)
		}
		fmt.Fprintln(w)
		if level >= depth {
			return
		}
		for _, k := range n.Children {
			if 100*weight(rep.Nodes[k].Total) >= threshold && rep.Nodes[k].Total.Objects+rep.Nodes[k].Total.Arrays > 0 {
				walk(k, level+1)
			}
		}
	}
	walk(0, 0)
	return nil
}

// contextCuts says what the runtime's bounds kept out of the tree, from the context header
// ("... depth_cut_calls=N node_cut_calls=N"), or "" when nothing.
func contextCuts(mode string) string {
	var depth, nodes string
	for _, f := range strings.Fields(mode) {
		if v, ok := strings.CutPrefix(f, "depth_cut_calls="); ok && v != "0" {
			depth = v
		}
		if v, ok := strings.CutPrefix(f, "node_cut_calls="); ok && v != "0" {
			nodes = v
		}
	}
	var parts []string
	if depth != "" {
		parts = append(parts, depth+" calls past the depth limit were charged to the deepest context")
	}
	if nodes != "" {
		parts = append(parts, nodes+" calls past a thread's node limit were charged to <other contexts> of their parent")
	}
	return strings.Join(parts, "; ")
}
