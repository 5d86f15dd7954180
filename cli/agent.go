package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// AgentJarName is the -javaagent jar (agent and runtime). Its manifest puts the jar itself on the
// bootstrap class path by this name, so it is always written under it.
const AgentJarName = "heapledger-agent.jar"

// LauncherName is the script `heapledger agent` writes beside the jar.
const LauncherName = "heapledger-java"

// countPassFlags are the count pass's own options, as pass_count.go declares them on `rewrite`
// (their usage starts with "count pass:"), without those in except. Every option of the pass is
// then reachable through the agent, and stays so as the pass gains options.
func countPassFlags(except ...string) []cli.Flag {
	var out []cli.Flag
outer:
	for _, f := range rewriteCmd.Flags {
		df, ok := f.(cli.DocGenerationFlag)
		if !ok || !strings.HasPrefix(df.GetUsage(), "count pass:") {
			continue
		}
		for _, e := range except {
			if f.Names()[0] == e {
				continue outer
			}
		}
		out = append(out, f)
	}
	return out
}

// agentOnlyFlags are the options of a JVM run under the agent (agent, run and attach) besides
// those of the count pass.
func agentOnlyFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.DurationFlag{Name: "timeout", Value: 20 * time.Second, Usage: "how long a class may wait for the transform service; after that the service is given up and classes load unmodified"},
		&cli.BoolFlag{Name: "stats", Usage: "print class counts and per-class transform latency (median, p99) at exit"},
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
	}, cacheFlags()...)
}

// defaultHookSites is --object-init-sites: enough for the classes a large program constructs
// (ecj compiling constructs about 1,500), at a few bytes of runtime table per unused site.
const defaultHookSites = 8192

// The count pass's flags are added in an init function of serve.go: init functions run in the
// order of their files' names, and pass_count.go must have declared them first.
var (
	agentCmd  *cli.Command
	runCmd    *cli.Command
	attachCmd *cli.Command
)

// agentExcluded are count-pass options that make no sense under the agent: the agent keeps the
// table itself, and the runtime is in the agent jar.
var agentExcluded = []string{"table", "embed-runtime"}

// buildCountPass builds the count pass and its fresh (or continued, with --table) table from
// the flags of countPassFlags.
func buildCountPass(c *cli.Context) (transform.Class, *accounts.Table, error) {
	pass, err := countFactory(c)
	if err != nil {
		return nil, nil, err
	}
	run := countRuns[c]
	delete(countRuns, c)
	return pass, run.table, nil
}

// agentOptions is the text after "=" in -javaagent:heapledger-agent.jar=...: comma-separated
// KEY=VALUE with percent-encoded values (runtime-java/agent Options).
type agentOptions []string

func (o *agentOptions) add(key, value string) { *o = append(*o, key+"="+percentEncode(value)) }

func (o agentOptions) String() string { return strings.Join(o, ",") }

// percentEncode keeps letters, digits and a few path characters; everything else, commas and
// every non-ASCII byte included, becomes %XX, which the agent decodes as UTF-8.
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		if ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || strings.IndexByte("/._-*:+@", ch) >= 0 {
			b.WriteByte(ch)
		} else {
			fmt.Fprintf(&b, "%%%02X", ch)
		}
	}
	return b.String()
}

// newAgentOptions validates the pass options (so a bad pattern fails here, not inside the JVM)
// and turns them into agent options naming this binary as the service.
func newAgentOptions(c *cli.Context) (agentOptions, error) {
	if _, _, err := buildCountPass(c); err != nil {
		return nil, err
	}
	exe, err := heapledgerBinary()
	if err != nil {
		return nil, err
	}
	var o agentOptions
	o.add("bin", exe)
	for _, f := range countPassFlags(agentExcluded...) {
		name := f.Names()[0]
		if !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.BoolFlag:
			o.add("arg", fmt.Sprintf("--%s=%t", name, c.Bool(name)))
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				o.add("arg", "--"+name+"="+v)
			}
		default:
			v := fmt.Sprint(c.Value(name))
			if name == "accounts-file" {
				abs, err := filepath.Abs(v)
				if err != nil {
					return nil, err
				}
				v = abs
			}
			o.add("arg", "--"+name+"="+v)
		}
	}
	if c.Duration("timeout") <= 0 {
		return nil, fmt.Errorf("--timeout %v: must be positive", c.Duration("timeout"))
	}
	o.add("timeout", strconv.FormatInt(c.Duration("timeout").Milliseconds(), 10))
	if err := cacheAgentOptions(c, &o); err != nil {
		return nil, err
	}
	if c.Bool("stats") {
		o.add("stats", "true")
	}
	if c.Bool("verbose") {
		o.add("verbose", "true")
	}
	if c.Bool("jdk") {
		o.add("jdk", "true")
	}
	if c.IsSet("object-init-sites") && !c.Bool("object-init") {
		return nil, errors.New("--object-init-sites is given without --object-init")
	}
	if c.Bool("object-init") {
		if n := c.Int("object-init-sites"); n < 2 {
			return nil, fmt.Errorf("--object-init-sites %d: must be at least 2 (one per class and one for the classes past them)", n)
		}
		o.add("object.init", "true")
		o.add("arg", "--object-init-sites="+strconv.Itoa(c.Int("object-init-sites")))
	}
	return o, nil
}

// heapledgerBinary is the binary the agent starts as its service: this one. HEAPLEDGER_BIN
// overrides it (tests run the CLI inside a test binary, which cannot serve).
func heapledgerBinary() (string, error) {
	if p := os.Getenv("HEAPLEDGER_BIN"); p != "" {
		return filepath.Abs(p)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the heapledger binary to serve transforms: %v", err)
	}
	return exe, nil
}

// agentJar finds the built agent jar: $HEAPLEDGER_AGENT, beside the binary, or in the build/
// directory of a source checkout the binary was built in.
func agentJar() (string, error) { return findJar(AgentJarName, "HEAPLEDGER_AGENT") }

// installAgentJar copies the agent jar into dir and returns its absolute path.
func installAgentJar(dir string) (string, error) {
	src, err := agentJar()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	dst, err := filepath.Abs(filepath.Join(dir, AgentJarName))
	if err != nil {
		return "", err
	}
	if err := outfile.WriteFile(dst, data, outfile.Data); err != nil {
		return "", err
	}
	return dst, nil
}

// javaagentArg is the JVM option that loads the agent with its options.
func javaagentArg(jar string, o agentOptions) string {
	return "-javaagent:" + jar + "=" + o.String()
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeLauncher(path, javaagent string) error {
	script := `#!/bin/sh
# Written by heapledger agent: runs java with the heapledger agent, which rewrites classes as they
# load (memory accounts and allocation counts) and writes a snapshot at exit.
# Usage: heapledger-java [java options] MainClass|-jar app.jar [args]
# The java of $JAVA_HOME is used when it is set, else the one on PATH.
if [ -n "$JAVA_HOME" ]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
exec "$JAVA" ` + shellQuote(javaagent) + ` "$@"
`
	return outfile.WriteFile(path, []byte(script), outfile.Executable)
}

func init() {
	agentCmd = &cli.Command{
		Name:      "agent",
		Usage:     "write a -javaagent jar and a java launcher that rewrite classes as they load",
		ArgsUsage: "-o DIR",
		Description: "Writes DIR/" + AgentJarName + " (the agent and the runtime) and DIR/" + LauncherName + ", a script that runs\n" +
			"java with the agent and the given options: `DIR/" + LauncherName + " -cp app.jar Main` runs the program with every\n" +
			"class of its class loaders rewritten by the count pass as it loads, and writes a snapshot at exit\n" +
			"(heapledger.snapshot.dir, docs/runtime.md). The rewriting runs in this binary, started by the agent\n" +
			"as a child process (`heapledger serve`); if it fails, classes load unmodified with one warning.\n" +
			"The -javaagent option is also printed, to use in other launch scripts. See docs/agent.md.",
		Flags: append(agentOnlyFlags(), &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the directory to write (required)"},
			&cli.BoolFlag{Name: "print-jvm-option", Usage: "print only the -javaagent option, unquoted, on one line (for tools that build java command lines)"}),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return fmt.Errorf("agent: unexpected arguments %q (options only; the program is given to %s)", c.Args().Slice(), LauncherName)
			}
			dir := c.String("output")
			if dir == "" {
				return errors.New("agent: no -o DIR given")
			}
			o, err := newAgentOptions(c)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			jar, err := installAgentJar(dir)
			if err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			arg := javaagentArg(jar, o)
			launcher := filepath.Join(filepath.Dir(jar), LauncherName)
			if err := writeLauncher(launcher, arg); err != nil {
				return fmt.Errorf("agent: %w", err)
			}
			if c.Bool("print-jvm-option") {
				fmt.Fprintln(c.App.Writer, arg)
				return nil
			}
			fmt.Fprintf(c.App.Writer, "wrote %s and %s\nrun a program with:  %s -cp APP Main\nor add to java:      %s\n", jar, launcher, launcher, shellQuote(arg))
			return nil
		},
	}
	register(agentCmd)
}
