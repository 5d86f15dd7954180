package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// passSetup is what a pass is built from: the options it reads (its own flags, on the command
// that runs it) and the run it is for.
type passSetup struct {
	flags  *cli.Context
	inputs []string // the rewrite's inputs; none under the agent, which rewrites as classes load
	output string   // the rewrite's output; "" under the agent
	limits jar.Limits
	stderr io.Writer
}

// passRun is a pass set up for one run.
type passRun struct {
	pass transform.Class
	// add, when set, adds entries of the pass's own to the output as it is written
	// (jar.Options.Add): the count pass's site table, complete only once every class is done.
	add *jar.Addition
	// done, when set, runs once the output is in place, to say what the pass made.
	done func(rep *jar.Report) error
}

// passFactory sets a pass up for a run.
type passFactory func(s passSetup) (*passRun, error)

type passEntry struct {
	usage   string
	factory passFactory
}

// passes holds the rewriting passes by name. Each pass registers itself from an init function in
// its own file (pass_*.go), like the subcommands do.
var passes = map[string]passEntry{}

// defaultPass is what `heapledger rewrite` runs without --pass: the pass whose output behaves
// exactly like its input, so that trying the command can never break a program.
const defaultPass = "identity"

// registerPass adds a pass to `heapledger rewrite --pass`. It keeps the command's help current,
// whatever the order in which init functions run: rewriteCmd is a package-level variable and so
// exists before any of them.
func registerPass(name, usage string, f passFactory) {
	if _, dup := passes[name]; dup {
		panic("pass registered twice: " + name)
	}
	passes[name] = passEntry{usage: usage, factory: f}
	rewriteCmd.Description = rewriteDescription()
}

// plainPass is the factory of a pass that needs no setup.
func plainPass(pass transform.Class) passFactory {
	return func(passSetup) (*passRun, error) { return &passRun{pass: pass}, nil }
}

func passNames() []string {
	names := make([]string, 0, len(passes))
	for n := range passes {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func rewriteDescription() string {
	var b strings.Builder
	b.WriteString(`Rewrites the classes of jars, class directories or class files with a pass and writes the result.

OUTPUT is a directory when it already is one (it must then be empty), ends in "/", or does not end
in .jar, .zip, .war, .ear or .class; otherwise a jar, or a class file, replaced if it exists. A
class file INPUT counts as its class's entry (com/acme/A.class, whatever the file is called):
to a directory it is written as DIR/com/acme/A.class, to a .class OUTPUT as that file, which
takes exactly one class.

The output appears only when complete: an error never leaves a half-written file in place of a
good one. New files get the modes cp would give them (0666, directories 0777, less the umask); a
replaced output keeps its mode. A rewrite killed while writing leaves .OUTPUT.heapledger-*.tmp
beside the output; the next rewrite of that output removes it once the process that wrote it is
gone.

Several INPUTs are merged like a classpath: the first entry of a name wins, later ones are dropped
with a warning. Entries that are not rewritten are copied byte for byte, in their order, with the
manifest first. Classes under META-INF/versions/N/ are rewritten too; module-info and package-info
are copied. Signature files of signed jars are removed with a warning (the classes change), with
the manifest digests of the classes that changed.

A class that the pass cannot rewrite is copied unchanged and reported; methods it cannot instrument
safely stay as they were and are counted by reason in the summary. With --strict any failed class
makes the exit status non-zero (the output is still written).

Rewriting is idempotent: a class heapledger rewrote before is left as it is, and the table an input
carries (META-INF/heapledger/table.tsv) is continued, so a rewritten jar rewritten again comes out
the same. Jars rewritten apart run together: a fresh table numbers its sites from a base its input
chooses (docs/formats.md, "Site IDs"), and the same input and options always give the same output.
Inputs rewritten apart whose IDs do clash are refused together: rewrite them together, or one
after the other with --table.

Passes:
`)
	if len(passes) == 0 {
		b.WriteString("   (none registered in this build)\n")
	}
	for _, n := range passNames() {
		fmt.Fprintf(&b, "   %-10s %s\n", n, passes[n].usage)
	}
	return b.String()
}

var rewriteCmd = &cli.Command{
	Name:      "rewrite",
	Usage:     "rewrite the classes of jars, class directories or class files with a pass",
	ArgsUsage: "INPUT... -o OUTPUT",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the jar, directory or class file to write (required)"},
		&cli.StringFlag{Name: "pass", Value: defaultPass, Usage: "the pass to run (see Passes above)"},
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "classes rewritten at once", DefaultText: "the number of CPUs"},
		&cli.BoolFlag{Name: "strict", Usage: "exit with status 2 when any class failed"},
		&cli.BoolFlag{Name: "progress", Usage: "show progress on stderr even when it is not a terminal"},
		&cli.BoolFlag{Name: "verbose", Usage: "print every warning (by default the first 20, then a count) and every skip reason"},
		&cli.IntFlag{Name: "deflate-level", Value: 1, Usage: "compression of rewritten classes: 1 (fastest) to 9 (smallest)"},
	},
	Action: rewriteAction,
}

func init() {
	addJarLimitFlags(rewriteCmd)
	addCountFlags(rewriteCmd)
	rewriteCmd.Description = rewriteDescription()
	register(rewriteCmd)
}

// maxWarnings is how many warnings are printed without --verbose; the rest are counted, never
// silently dropped.
const maxWarnings = 20

func rewriteAction(c *cli.Context) error {
	inputs, err := interspersedArgs(c, c.Command.Flags)
	if err != nil {
		return fmt.Errorf("rewrite: %w", err)
	}
	if len(inputs) == 0 {
		return errors.New("rewrite: no INPUT given (jars, class directories or class files)")
	}
	output := c.String("output")
	if output == "" {
		return errors.New("rewrite: no -o OUTPUT given (a jar, a directory, or a .class file for one class)")
	}
	name := c.String("pass")
	// Options of the count pass (countFlagNames) choose it when no --pass is given, as in `heapledger rewrite --accounts 'com.acme.*' app.jar -o out.jar`;
	// with another pass they would be silently ignored, so that is an error.
	if set := countOptionsSet(c); len(set) > 0 {
		if !c.IsSet("pass") {
			name = "count"
		} else if name != "count" {
			return fmt.Errorf("rewrite: --%s is an option of the count pass, not of --pass %s", set[0], name)
		}
	}
	p, ok := passes[name]
	if !ok {
		known := strings.Join(passNames(), ", ")
		if known == "" {
			known = "none in this build"
		}
		return fmt.Errorf("rewrite: unknown pass %q (known passes: %s)", name, known)
	}
	if c.Int("jobs") < 0 {
		return fmt.Errorf("rewrite: -j %d: must be positive", c.Int("jobs"))
	}
	stderr := errWriter(c)
	limits := jar.Limits{MaxEntrySize: c.Int64("max-entry-size"), MaxRatio: c.Int64("max-ratio")}
	run, err := p.factory(passSetup{flags: c, inputs: inputs, output: output, limits: limits, stderr: stderr})
	if err != nil {
		return fmt.Errorf("rewrite: pass %s: %w", name, withHint(err))
	}
	pass := run.pass
	var cmap *ctorMapper
	if c.String("ctor-map") != "" {
		cmap = &ctorMapper{inner: pass}
		pass = cmap
	}
	opt := jar.Options{
		Workers:      c.Int("jobs"),
		DeflateLevel: c.Int("deflate-level"),
		Limits:       limits,
		Add:          run.add,
	}
	if c.Bool("progress") || isTerminal(stderr) {
		opt.Progress = stderr
	}
	// Ctrl-C stops the run cleanly: the temporary output is removed and the old output stays.
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt.Context = ctx
	rep, err := jar.Rewrite(inputs, output, pass, opt)
	if err != nil {
		return fmt.Errorf("rewrite: %w", withHint(err))
	}
	for i, w := range rep.Warnings {
		if i == maxWarnings && !c.Bool("verbose") {
			fmt.Fprintf(stderr, "warning: %d more warnings not shown (--verbose shows all)\n", len(rep.Warnings)-i)
			break
		}
		fmt.Fprintln(stderr, "warning:", w)
	}
	if c.Bool("verbose") {
		for _, rc := range rep.Reasons() {
			fmt.Fprintf(stderr, "skipped %d methods: %s (for example %s)\n", rc.Methods, rc.Reason, rc.Example)
		}
		for _, rc := range rep.Fallbacks() {
			fmt.Fprintf(stderr, "rewrote %d methods with a fallback: %s (for example %s)\n", rc.Methods, rc.Reason, rc.Example)
		}
		for _, rc := range rep.ClassSkips() {
			fmt.Fprintf(stderr, "skipped %d classes: %s (for example %s)\n", rc.Methods, rc.Reason, rc.Example)
		}
	}
	for _, f := range rep.Failures {
		fmt.Fprintln(stderr, "failed (copied unchanged):", f.Entry+":", withHint(f.Err))
	}
	fmt.Fprintf(stderr, "%s: pass %s: %s\n", output, name, rep.Summary())
	if cmap != nil {
		if err := cmap.write(c.String("ctor-map"), stderr); err != nil {
			return fmt.Errorf("rewrite: %w", err)
		}
	}
	if run.done != nil {
		if err := run.done(rep); err != nil {
			return fmt.Errorf("rewrite: pass %s: %w", name, err)
		}
	}
	if c.Bool("strict") && rep.Failed > 0 {
		return cli.Exit(fmt.Sprintf("rewrite: --strict: %d classes failed", rep.Failed), 2)
	}
	return nil
}

// interspersedArgs lets flags follow the inputs, as in `rewrite a.jar b.jar -o out.jar`:
// urfave/cli stops parsing flags at the first argument, so the flags among the arguments are
// applied here. "--" ends the flags; what follows is an argument even if it starts with "-".
func interspersedArgs(c *cli.Context, flags []cli.Flag) ([]string, error) {
	byName := map[string]cli.Flag{}
	for _, f := range flags {
		for _, n := range f.Names() {
			byName[n] = f
		}
	}
	var args []string
	rest := c.Args().Slice()
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		if a == "--" {
			args = append(args, rest[i+1:]...)
			break
		}
		if len(a) < 2 || a[0] != '-' {
			args = append(args, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("flag provided but not defined: %s", a)
		}
		if _, isBool := f.(*cli.BoolFlag); isBool && !hasValue {
			value = "true"
		} else if !hasValue {
			if i+1 >= len(rest) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			value = rest[i]
		}
		if err := c.Set(f.Names()[0], value); err != nil {
			return nil, fmt.Errorf("invalid value %q for flag %s: %w", value, a, err)
		}
	}
	return args, nil
}

// isTerminal reports whether w is a character device, the standard library's way to tell a
// terminal without a dependency.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// countOptionsSet names the count pass's options given on the command line.
func countOptionsSet(c *cli.Context) []string {
	var set []string
	for _, n := range countFlagNames {
		if c.IsSet(n) {
			set = append(set, n)
		}
	}
	return set
}

// withHint adds to err the option that lifts the limit it names: the library's errors are typed
// and name no flag (jar.LimitError), the command line knows which of its options sets what.
func withHint(err error) error {
	var le *jar.LimitError
	if !errors.As(err, &le) {
		return err
	}
	flag := "--max-entry-size"
	if le.Ratio {
		flag = "--max-ratio"
	}
	return fmt.Errorf("%w (raise it with %s)", err, flag)
}
