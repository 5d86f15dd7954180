package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/outfile"
)

// AgentJarName is the -javaagent jar (agent and runtime). Its manifest puts the jar itself on the
// bootstrap class path by this name, so it is always written under it.
const AgentJarName = "heapledger-agent.jar"

// LauncherName is the script `heapledger agent` writes beside the jar.
const LauncherName = "heapledger-java"

// defaultHookSites is --object-init-sites: enough for the classes a large program constructs
// (ecj compiling constructs about 1,500), at a few bytes of runtime table per unused site.
const defaultHookSites = 8192

// buildCountPass builds the count pass and its fresh (or continued, with --table) table from
// the count pass's options (addCountFlags), for a run with no input jar: the agent's.
func buildCountPass(c *cli.Context) (*countRun, error) {
	return newCountRun(passSetup{flags: c, stderr: errWriter(c)})
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
	if _, err := buildCountPass(c); err != nil {
		return nil, err
	}
	exe, err := heapledgerBinary()
	if err != nil {
		return nil, err
	}
	var o agentOptions
	o.add("bin", exe)
	for _, f := range countFlags() {
		name := f.Names()[0]
		if slices.Contains(agentExcluded, name) || !c.IsSet(name) {
			continue
		}
		switch f.(type) {
		case *cli.BoolFlag:
			o.add("arg", fmt.Sprintf("--%s=%t", name, c.Bool(name)))
		case *cli.StringSliceFlag:
			for _, v := range c.StringSlice(name) {
				if name == "profile" {
					// The service may start elsewhere: a file it reads is named in full.
					abs, err := filepath.Abs(v)
					if err != nil {
						return nil, err
					}
					v = abs
				}
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
		return "", fmt.Errorf("cannot find the heapledger binary to serve transforms: %w", err)
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
	agentCmd := &cli.Command{
		Name:      "agent",
		Usage:     "write a -javaagent jar and a java launcher that rewrite classes as they load",
		ArgsUsage: "-o DIR",
		Description: "Writes DIR/" + AgentJarName + " (the agent and the runtime) and DIR/" + LauncherName + ", a script that runs\n" +
			"java with the agent and the given options: `DIR/" + LauncherName + " -cp app.jar Main` runs the program with every\n" +
			"class of its class loaders rewritten by the count pass as it loads, and writes a snapshot at exit\n" +
			"(heapledger.snapshot.dir, docs/runtime.md). The rewriting runs in this binary, started by the agent\n" +
			"as a child process (`heapledger serve`); if it fails, classes load unmodified with one warning.\n" +
			"The -javaagent option is also printed, to use in other launch scripts. See docs/agent.md.",
		Flags: []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the directory to write (required)"},
			&cli.BoolFlag{Name: "print-jvm-option", Usage: "print only the -javaagent option, unquoted, on one line (for tools that build java command lines)"}},
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
	addAgentFlags(agentCmd)
	register(agentCmd)
}
