package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/attach"
)

func init() {
	attachCmd := &cli.Command{
		Name:      "attach",
		Usage:     "load the heapledger agent into a running JVM and start counting",
		ArgsUsage: "PID",
		Description: "Loads the agent into the running JVM PID (same user; HotSpot's attach mechanism). The agent starts\n" +
			"the transform service, rewrites the classes already loaded that belong to application or custom\n" +
			"class loaders (with --jdk, the JDK's too), and every class loaded from then on; counts start now. A\n" +
			"method running at that moment keeps its original code until it returns (the JVM replaces code only\n" +
			"for later calls): a loop that never leaves main, say, is not counted, while the methods it calls\n" +
			"are. Snapshots are written at exit, every --snapshot-interval seconds, and by `heapledger detach\n" +
			"PID`, which restores the original bytecode. The agent jar stays in --dir until the JVM exits (it is\n" +
			"on its class path). JDK 21 and later print a warning about a dynamically loaded agent, and a JVM\n" +
			"using class-data sharing says that sharing now covers boot loader classes only (the agent jar goes\n" +
			"on the bootstrap class path); both are expected, and come again at the detach, which loads the\n" +
			"agent once more to reach it.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "snapshot-dir", Usage: "where the JVM writes snapshots", DefaultText: "the JVM's working directory"},
			&cli.StringFlag{Name: "dir", Usage: "where to put the agent jar", DefaultText: "$TMPDIR/heapledger-attach-PID"},
		},
		Action: attachAction,
	}
	addAgentFlags(attachCmd)
	register(attachCmd)
	register(&cli.Command{
		Name:      "detach",
		Usage:     "restore the original bytecode of a JVM heapledger attached to, and write a last snapshot",
		ArgsUsage: "PID",
		Description: "Removes the agent's transformer from the JVM PID, retransforms every class it rewrote back to its\n" +
			"original bytecode, writes a last snapshot (reason \"detach\") and ends the transform service.\n" +
			"Methods running at that moment finish in their rewritten form; every later call runs the original.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "where the agent jar of the attach is", DefaultText: "$TMPDIR/heapledger-attach-PID"},
			&cli.BoolFlag{Name: "stats", Usage: "also print class counts and transform latency"},
		},
		Action: detachAction,
	})
}

// pidArg reads the PID, with the options before or after it.
func pidArg(c *cli.Context, cmd string) (int, error) {
	args, err := interspersedArgs(c, c.Command.Flags)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", cmd, err)
	}
	if len(args) != 1 {
		return 0, fmt.Errorf("%s: want exactly one PID, got %d arguments", cmd, len(args))
	}
	pid, err := strconv.Atoi(args[0])
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("%s: %q is not a process ID", cmd, args[0])
	}
	return pid, nil
}

func attachDir(c *cli.Context, pid int) string {
	if d := c.String("dir"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("heapledger-attach-%d", pid))
}

func attachAction(c *cli.Context) error {
	pid, err := pidArg(c, "attach")
	if err != nil {
		return err
	}
	o, err := newAgentOptions(c)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	if d := c.String("snapshot-dir"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		o.add("snapshot.dir", abs)
	}
	jar, err := installAgentJar(attachDir(c, pid))
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	lines, err := loadWithStatus(pid, jar, o)
	if err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	notes := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "not ") {
			if notes++; notes > maxWarnings && !c.Bool("verbose") {
				continue
			}
		}
		fmt.Fprintln(c.App.Writer, l)
	}
	if notes > maxWarnings && !c.Bool("verbose") {
		fmt.Fprintf(c.App.Writer, "%d more classes not rewritten (--verbose lists them)\n", notes-maxWarnings)
	}
	where := c.String("snapshot-dir")
	if where == "" {
		if cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil {
			where = cwd
		} else {
			where = "the JVM's working directory"
		}
	}
	fmt.Fprintf(c.App.Writer, "snapshots go to %s; `heapledger detach %d` restores the original classes\n", where, pid)
	return nil
}

func detachAction(c *cli.Context) error {
	pid, err := pidArg(c, "detach")
	if err != nil {
		return err
	}
	jar := filepath.Join(attachDir(c, pid), AgentJarName)
	if _, err := os.Stat(jar); err != nil {
		// Any copy of the agent jar reaches the agent: its classes are already on the JVM's
		// bootstrap class path, and the JVM resolves the agent class there.
		if jar, err = installAgentJar(attachDir(c, pid)); err != nil {
			return fmt.Errorf("detach: %w", err)
		}
	}
	var o agentOptions
	o.add("detach", "true")
	if c.Bool("stats") {
		o.add("stats", "true")
	}
	lines, err := loadWithStatus(pid, jar, o)
	if err != nil {
		return fmt.Errorf("detach: %w", err)
	}
	for _, l := range lines {
		fmt.Fprintln(c.App.Writer, l)
	}
	return nil
}

// loadWithStatus loads the agent with a status file and returns the lines the agent wrote
// there; a line "error: ..." becomes the error.
func loadWithStatus(pid int, jar string, o agentOptions) ([]string, error) {
	f, err := os.CreateTemp("", "heapledger-status-*.txt")
	if err != nil {
		return nil, err
	}
	f.Close()
	defer os.Remove(f.Name())
	o.add("status", f.Name())
	if _, err := attach.LoadAgent(pid, jar, o.String(), attach.Options{}); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return nil, err
	}
	text := strings.TrimSpace(string(b))
	if text == "" {
		return nil, fmt.Errorf("JVM %d loaded the agent but it reported nothing (an older heapledger agent already loaded in it? see the JVM's messages)", pid)
	}
	lines := strings.Split(text, "\n")
	for _, l := range lines {
		if msg, ok := strings.CutPrefix(l, "error: "); ok {
			return nil, errors.New(msg)
		}
	}
	return lines, nil
}
