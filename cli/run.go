package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

func init() {
	runCmd := &cli.Command{
		Name:      "run",
		Usage:     "run a java command with the heapledger agent and say where its snapshot went",
		ArgsUsage: "[options] -- java ARGS...",
		Description: "Runs the java command with the heapledger agent added (-javaagent, as `heapledger agent` writes it,\n" +
			"from a temporary directory removed afterwards): every class of the program's class loaders is\n" +
			"rewritten by the count pass as it loads (with --jdk, the JDK's classes too). When the program ends, the snapshots it wrote are listed,\n" +
			"and with --report the exit snapshot is reported. All heapledger says goes to stderr, so stdout holds\n" +
			"the program's output alone. The exit status is the program's.\n\n" +
			"When the command is not java itself but a script that starts java (gradlew, catalina.sh), the\n" +
			"agent goes into JAVA_TOOL_OPTIONS, so every JVM the script starts runs under it.\n\n" +
			"Example: heapledger run --accounts 'com.acme.*' -- java -cp app.jar com.acme.Main",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "snapshot-dir", Usage: "where the program writes its snapshots", DefaultText: "the working directory"},
			&cli.BoolFlag{Name: "report", Usage: "print the report of the exit snapshot, on stderr like everything heapledger says (stdout is the program's)"},
		},
		Action: runAction,
	}
	addAgentFlags(runCmd)
	register(runCmd)
}

func runAction(c *cli.Context) error {
	args := c.Args().Slice()
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return errors.New("run: no java command given (heapledger run [options] -- java ARGS...)")
	}
	o, err := newAgentOptions(c)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	tmp, err := os.MkdirTemp("", "heapledger-run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	jar, err := installAgentJar(tmp)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	jvmArgs := []string{javaagentArg(jar, o)}
	snapDir := snapshotDirOf(args[1:])
	if d := c.String("snapshot-dir"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		snapDir = abs
		jvmArgs = append(jvmArgs, "-Dheapledger.snapshot.dir="+abs)
	}
	var cmd *exec.Cmd
	if base := filepath.Base(args[0]); base == "java" || base == "java.exe" {
		cmd = exec.Command(args[0], append(jvmArgs, args[1:]...)...)
	} else {
		// A launch script (gradlew, mvn, catalina.sh): every JVM it starts reads
		// JAVA_TOOL_OPTIONS. The options hold no spaces (percent-encoded) unless the paths do.
		for _, a := range jvmArgs {
			if strings.ContainsAny(a, " \t") {
				return fmt.Errorf("run: %s is not java, and the agent option %q has a space, which JAVA_TOOL_OPTIONS cannot carry", args[0], a)
			}
		}
		cmd = exec.Command(args[0], args[1:]...)
		tool := strings.Join(jvmArgs, " ")
		if old := os.Getenv("JAVA_TOOL_OPTIONS"); old != "" {
			tool = old + " " + tool
		}
		cmd.Env = append(os.Environ(), "JAVA_TOOL_OPTIONS="+tool)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.App.Writer, c.App.ErrWriter
	if cmd.Stderr == nil {
		cmd.Stderr = os.Stderr
	}
	// Ctrl-C reaches the program (same process group); we stay to say where its snapshot went.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	started := time.Now()
	runErr := cmd.Run()
	var exit *exec.ExitError
	if runErr != nil && !errors.As(runErr, &exit) {
		return fmt.Errorf("run: %s: %w", args[0], runErr)
	}
	snaps := snapshotsSince(snapDir, cmd.ProcessState.Pid(), started)
	stderr := cmd.Stderr
	if len(snaps) == 0 {
		fmt.Fprintf(stderr, "heapledger run: the program wrote no snapshot in %s\n", snapDir)
	}
	for _, s := range snaps {
		fmt.Fprintf(stderr, "heapledger run: snapshot %s\n", s)
	}
	if c.Bool("report") && len(snaps) > 0 {
		last := snaps[len(snaps)-1]
		s, err := snapshot.ReadFile(last)
		if err != nil {
			return fmt.Errorf("run: %w", err)
		}
		// stdout is the program's: a report among its output would corrupt what it pipes.
		printReport(stderr, s, s.Summarize(5))
	}
	if exit != nil {
		return cli.Exit("", exit.ExitCode())
	}
	return nil
}

// snapshotDirOf is where the runtime will write: the program's own -Dheapledger.snapshot.dir,
// else $HEAPLEDGER_SNAPSHOT_DIR, else the working directory (docs/runtime.md).
func snapshotDirOf(javaArgs []string) string {
	dir := os.Getenv("HEAPLEDGER_SNAPSHOT_DIR")
	for _, a := range javaArgs {
		if v, ok := strings.CutPrefix(a, "-Dheapledger.snapshot.dir="); ok {
			dir = v
		}
		if !strings.HasPrefix(a, "-") {
			break // the main class or jar: what follows is the program's
		}
	}
	if dir == "" {
		dir = "."
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}

// snapshotsSince lists the text (or, without text, JSON) snapshots of process pid written since
// t, oldest first. The pid is the JVM's when the command was java itself; for a wrapper script
// every snapshot written since t is listed instead.
func snapshotsSince(dir string, pid int, t time.Time) []string {
	var mine, recent []string
	for _, ext := range []string{".snapshot", ".json"} {
		found, _ := filepath.Glob(filepath.Join(dir, "heapledger-*"+ext))
		for _, f := range found {
			st, err := os.Stat(f)
			if err != nil || st.ModTime().Before(t.Add(-time.Second)) {
				continue
			}
			if strings.Contains(filepath.Base(f), fmt.Sprintf("-%d-", pid)) {
				mine = append(mine, f)
			} else {
				recent = append(recent, f)
			}
		}
		if len(mine)+len(recent) > 0 {
			break
		}
	}
	if len(mine) == 0 {
		mine = recent
	}
	sort.Slice(mine, func(i, j int) bool { return snapSeq(mine[i]) < snapSeq(mine[j]) })
	return mine
}

// snapSeq is the SEQ of heapledger-PROGRAM-PID-SEQ.snapshot, so snapshots sort in writing order.
func snapSeq(path string) int {
	base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".snapshot"), ".json")
	var n int
	if i := strings.LastIndexByte(base, '-'); i >= 0 {
		fmt.Sscan(base[i+1:], &n)
	}
	return n
}
