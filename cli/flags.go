package main

import (
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/rewrite/jar"
)

// Flag groups shared by several commands, each added by one function, as the Go toolchain's
// work.AddBuildFlags adds the build flags to every command that builds. A group makes fresh
// flag values for each command, and its names are listed here, not found by reading help texts.

// countFlagNames are the count pass's options, in help order: taken from countFlags, so that a
// flag added there is at once an option that chooses the pass and is refused with another.
var countFlagNames = flagNames(countFlags())

// flagNames returns each flag's first name.
func flagNames(flags []cli.Flag) []string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = f.Names()[0]
	}
	return names
}

// countFlags makes the count pass's options. Their usage starts with "count pass:" so that
// `rewrite --help` says which pass reads them.
func countFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "accounts", Usage: "count pass: memory accounts as package patterns, comma-separated or repeated: 'a.b' is the classes directly in a.b, 'a.b.*' also its subpackages, '*' everything; the most specific pattern wins; a pattern that matches no class of the input is warned about when it looks like a slip or none matched, else noted in one line with the others (one list may serve several jars rewritten apart)"},
		&cli.StringFlag{Name: "accounts-file", Usage: "count pass: read accounts from FILE: one per line, a pattern or 'NAME = pattern, pattern'; # starts a comment"},
		&cli.StringFlag{Name: "table", Usage: "count pass: the ID table to write (and to continue, when it exists, so separately rewritten jars get distinct IDs)", DefaultText: "OUTPUT.table.tsv"},
		&cli.BoolFlag{Name: "embed-runtime", Usage: "count pass: copy the heapledger runtime into the output, so it needs nothing else on the class path"},
		&cli.StringFlag{Name: "liveness", Usage: "count pass: track which objects are still alive: off, all (every object), or sample:N (every N-th allocation per site, figures scaled); -Dheapledger.liveness overrides it at launch", DefaultText: "off"},
		&cli.Float64Flag{Name: "snapshot-interval", Usage: "count pass: seconds between periodic snapshots (0: only at exit and on demand); -Dheapledger.snapshot.interval overrides it at launch"},
		&cli.StringSliceFlag{Name: "budget", Usage: "count pass: ACCOUNT=BYTES (suffixes K, M, G for KiB, MiB, GiB): when the account's live bytes pass it the runtime says so once (needs --liveness); repeatable"},
		&cli.StringFlag{Name: "budget-action", Value: "log", Usage: "count pass: what passing a budget does besides logging: log, dump (a heap dump beside the snapshots), throw (OutOfMemoryError at the account's next allocation in rewritten code), or dump,throw"},
		&cli.BoolFlag{Name: "snapshot-gc", Usage: "count pass: run a full GC before each periodic or on-demand snapshot, so live figures count only reachable objects"},
		&cli.StringFlag{Name: "counters", Value: "sites", Usage: "count pass: how objects are counted: sites (a call at every allocation), paths (DuckTracks path counters: about one increment per method execution, turned back into the same per-site rows at snapshot time; arrays, lambdas, clones and reflection keep their own calls; not with --liveness, --budget or --object-init; docs/instrumentation.md) or edges (a profiling run: path counters on every edge a profile needs, whose snapshots also carry each method's edge counts for --profile; the same rows)"},
		&cli.StringSliceFlag{Name: "profile", Usage: "count pass, with --counters paths: plan the path counters of each method from the edge counts a snapshot of a run rewritten with --counters edges holds (same class, method and code; other methods keep static estimates); repeatable, the counts of several snapshots add up; docs/instrumentation.md, \"Profiles\""},
		&cli.IntFlag{Name: "adapt", Usage: "count pass, under the agent (run, agent, attach) with --counters paths: adaptive path counters: each class is first rewritten as --counters edges (a profiling run); once its chord counters have counted N increments, the agent retransforms it with path counters planned from its counts so far, as --profile would; counts before and after add up exactly (0: off; refused offline, where --counters edges and --profile do it; docs/instrumentation.md, \"Adaptive path counters under the agent\")"},
		&cli.BoolFlag{Name: "count-increments", Usage: "count pass: snapshots also say how many counter increments ran (either --counters) and how many account switches ran and were left out, per method and in total"},
		&cli.StringFlag{Name: "context", Usage: "count pass: calling contexts: none, or cct (every rewritten method that allocates or calls enters its node of a per-thread calling-context tree; snapshots carry the merged tree, heapledger report --tree shows it); cct:depth=N,nodes=N,fold sets the depth limit (512), the nodes per thread (100000) and folds recursion; -Dheapledger.context overrides the bounds at launch", DefaultText: "none"},
		&cli.StringFlag{Name: "jmx", Usage: "count pass: when the runtime registers heapledger:type=Ledger in the platform MBean server: auto (once someone else creates the server), on (creating it at start-up), off (never); -Dheapledger.jmx overrides it at launch", DefaultText: "auto"},
	}
}

// addCountFlags adds the count pass's options, but those in except, to cmd: every option of the
// pass is then reachable from each command that runs it, and stays so as the pass gains options.
func addCountFlags(cmd *cli.Command, except ...string) {
	for _, f := range countFlags() {
		if !slices.Contains(except, f.Names()[0]) {
			cmd.Flags = append(cmd.Flags, f)
		}
	}
}

// agentExcluded are count-pass options that make no sense under the agent: the agent keeps the
// table itself, and the runtime is in the agent jar.
var agentExcluded = []string{"table", "embed-runtime"}

// addAgentFlags adds the options of a JVM run under the agent (agent, run and attach): its own
// and the count pass's.
func addAgentFlags(cmd *cli.Command) {
	cmd.Flags = append(cmd.Flags,
		&cli.DurationFlag{Name: "timeout", Value: 20 * time.Second, Usage: "how long a class may wait for the transform service; after that the service is given up and classes load unmodified"},
		&cli.BoolFlag{Name: "stats", Usage: "print class counts, how many came from the transform cache (and of those, how many the agent read itself), and per-class transform latency (median, p99) at exit"},
		&cli.BoolFlag{Name: "verbose", Usage: "print every skipped method and every class the service could not rewrite"},
		&cli.BoolFlag{Name: "jdk", Usage: "also rewrite the JDK's own classes (Java 9+), by retransformation: allocations inside JDK code " +
			"(HashMap nodes and tables, Integer boxes, String.split) are charged to the calling account. Runtime-critical JDK packages are " +
			"excluded, loaded classes the JVM cannot retransform are listed; java.lang.Object.<init> is hooked only with --object-init. " +
			"Costs one round trip per JDK class at start-up and a thread-local read in JDK methods that allocate (docs/agent.md)"},
		&cli.BoolFlag{Name: "object-init", Usage: "hook java.lang.Object's constructor (by retransformation): every object constructed is also counted, " +
			"per class, in sites of kind init charged to the thread's account, including objects made by reflection, JNI, deserialization and JDK " +
			"code no rewritten site sees (arrays, clone() and Class objects run no constructor). These rows overlap the rows of rewritten sites: " +
			"heapledger report keeps them out of the totals and shows, per class, what no rewritten site saw. Expensive: a call in every constructor (docs/agent.md)"},
		&cli.IntFlag{Name: "object-init-sites", Value: defaultHookSites, Usage: "with --object-init: sites reserved for the hook, one per class; " +
			"classes past the last are counted together in one site, with a warning"},
	)
	cmd.Flags = append(cmd.Flags, cacheFlags()...)
	addCountFlags(cmd, agentExcluded...)
}

// addJarLimitFlags adds the bounds on inflated entries (jar.Limits) to cmd.
func addJarLimitFlags(cmd *cli.Command) {
	cmd.Flags = append(cmd.Flags,
		&cli.Int64Flag{Name: "max-entry-size", Value: jar.DefaultLimits.MaxEntrySize,
			Usage: "refuse to inflate an entry declared larger than this many bytes"},
		&cli.Int64Flag{Name: "max-ratio", Value: jar.DefaultLimits.MaxRatio,
			Usage: "refuse to inflate an entry over 1 MiB whose size/compressed-size ratio exceeds this (zip bombs)"},
	)
}
