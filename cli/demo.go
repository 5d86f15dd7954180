package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures/demo"
	"github.com/heapledger/heapledger/internal/htmlreport"
	"github.com/heapledger/heapledger/internal/outfile"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	passlib "github.com/heapledger/heapledger/rewrite/passes"
)

func init() {
	register(&cli.Command{
		Name:  "demo",
		Usage: "build, rewrite, run and report on the bundled example (needs a JDK)",
		Description: "Compiles the bundled example (a tiny shop: accounted packages demo.web, demo.orders and\n" +
			"demo.reports, and a shared unaccounted library demo.lib), rewrites it with the count pass,\n" +
			"runs it with the heapledger runtime (liveness on, a full GC before its exit snapshot), prints\n" +
			"the report, and writes the HTML report (flame graphs of what was allocated and what is still\n" +
			"live), printing its path. Allocations the library makes for demo.reports are charged to\n" +
			"demo.reports, the principal. The steps are printed as the commands that would do the same\n" +
			"by hand.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "dir", Usage: "work in DIR and keep it (default: a temporary directory, removed at the end)"},
			&cli.StringFlag{Name: "java-home", Usage: "the JDK to use", EnvVars: []string{"JAVA_HOME"}},
			&cli.IntFlag{Name: "requests", Value: 2000, Usage: "how many orders the example places"},
			&cli.StringFlag{Name: "liveness", Value: "all", Usage: "liveness of the run: off, all or sample:N (as rewrite --liveness)"},
			&cli.StringFlag{Name: "html", Usage: "write the HTML report to FILE", DefaultText: "DIR/report.html with --dir, else heapledger-demo.html"},
		},
		Action: demoAction,
	})
}

func demoAction(c *cli.Context) error {
	out := c.App.Writer
	liveness := c.String("liveness")
	if err := checkLiveness(liveness); err != nil {
		return cli.Exit("demo: "+err.Error(), 2)
	}
	javac, java, err := jdkTools(c.String("java-home"))
	if err != nil {
		return err
	}
	rt, err := runtimeJar()
	if err != nil {
		return err
	}
	dir := c.String("dir")
	if dir == "" {
		if dir, err = os.MkdirTemp("", "heapledger-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, outfile.Executable); err != nil {
		return err
	}
	src, classes, rewritten := filepath.Join(dir, "src"), filepath.Join(dir, "classes"), filepath.Join(dir, "classes-hl")
	snaps := filepath.Join(dir, "snapshots")
	for _, d := range []string{rewritten, snaps} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	var files []string
	err = fs.WalkDir(demo.Sources, "src", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := demo.Sources.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, filepath.FromSlash(p))
		files = append(files, dst)
		if err := os.MkdirAll(filepath.Dir(dst), outfile.Executable); err != nil {
			return err
		}
		return os.WriteFile(dst, data, outfile.Data)
	})
	if err != nil {
		return fmt.Errorf("demo: unpacking the example: %w", err)
	}

	step(out, "1. compile the example", "javac -d %s %s/demo/...", classes, src)
	if err := runTool(out, javac, append([]string{"-d", classes, "-encoding", "UTF-8"}, files...)...); err != nil {
		return fmt.Errorf("demo: javac: %w", err)
	}

	step(out, "2. rewrite it with memory accounts", "heapledger rewrite --pass count --accounts %s %s -o %s", demo.Accounts, classes, rewritten)
	set, err := accounts.Parse(demo.Accounts)
	if err != nil {
		return err
	}
	table := accounts.NewTable(nil)
	pass, err := passlib.Count(passlib.CountOptions{Accounts: set, Table: table})
	if err != nil {
		return err
	}
	rep, err := jar.Rewrite([]string{classes}, rewritten, pass, jar.Options{Add: tableAddition(table, rewritten+".table.tsv", nil)})
	if err != nil {
		return fmt.Errorf("demo: rewrite: %w", err)
	}
	fmt.Fprintf(out, "   %s\n", rep.Summary())
	if rep.Failed > 0 || rep.SkippedMethods > 0 || rep.SkippedClasses > 0 {
		return fmt.Errorf("demo: the example did not rewrite cleanly: %s", rep.Summary())
	}
	fmt.Fprintf(out, "   %d allocation sites, table in %s\n", table.Sites(), rewritten+".table.tsv")

	// A full GC before the exit snapshot makes its live figures exact (docs/runtime.md).
	props := []string{"-Dheapledger.snapshot.dir=" + snaps, "-Dheapledger.liveness=" + liveness, "-Dheapledger.snapshot.gc=true"}
	step(out, "3. run it with the heapledger runtime", "java %s -cp %s%c%s %s", strings.Join(props, " "), rewritten, os.PathListSeparator, rt, demo.MainClass)
	cmd := exec.Command(java, append(props, "-cp", rewritten+string(os.PathListSeparator)+rt,
		demo.MainClass, fmt.Sprint(c.Int("requests")))...)
	cmd.Stdout = prefixWriter{out, "   | "}
	cmd.Stderr = prefixWriter{c.App.ErrWriter, "   | "}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("demo: running the rewritten example: %w", err)
	}
	found, _ := filepath.Glob(filepath.Join(snaps, "*.snapshot"))
	if len(found) != 1 {
		return fmt.Errorf("demo: expected one exit snapshot in %s, found %d", snaps, len(found))
	}

	step(out, "4. report who allocated what", "heapledger report %s", found[0])
	s, err := snapshot.ReadFile(found[0])
	if err != nil {
		return err
	}
	printReport(out, s, s.Summarize(5))

	page := c.String("html")
	if page == "" {
		page = "heapledger-demo.html"
		if c.String("dir") != "" {
			page = filepath.Join(dir, "report.html")
		}
	}
	step(out, "5. write the HTML report: accounts, flame graphs of allocated and live memory", "heapledger html %s -o %s", found[0], page)
	if err := writeDemoPage(s, page); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if c.String("dir") != "" {
		fmt.Fprintf(out, "\nEverything is kept in %s.\n", dir)
	}
	abs, _ := filepath.Abs(page)
	fmt.Fprintf(out, "\nHTML report: %s (open it in a browser)\n", abs)
	return nil
}

// writeDemoPage writes the HTML report of the demo's snapshot to path.
func writeDemoPage(s *snapshot.Snapshot, path string) error {
	p, err := htmlreport.Build([]*snapshot.Snapshot{s}, htmlreport.Options{Version: version, Top: 20})
	if err != nil {
		return err
	}
	p.Title = "heapledger demo: " + demo.MainClass
	f, err := outfile.Create(path, outfile.Data)
	if err != nil {
		return err
	}
	if err := htmlreport.Write(f, p); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

func step(w io.Writer, title, format string, args ...any) {
	fmt.Fprintf(w, "\n%s\n   $ %s\n", title, fmt.Sprintf(format, args...))
}

func runTool(out io.Writer, tool string, args ...string) error {
	cmd := exec.Command(tool, args...)
	b, err := cmd.CombinedOutput()
	if len(b) > 0 {
		prefixWriter{out, "   | "}.Write(b)
	}
	return err
}

// jdkTools finds javac and java: under javaHome when given, else on PATH.
func jdkTools(javaHome string) (javac, java string, err error) {
	if javaHome != "" {
		javac, java = filepath.Join(javaHome, "bin", "javac"), filepath.Join(javaHome, "bin", "java")
		for _, p := range []string{javac, java} {
			if _, err := os.Stat(p); err != nil {
				return "", "", fmt.Errorf("JAVA_HOME/--java-home %s has no %s: a JDK (not a JRE) is needed", javaHome, filepath.Base(p))
			}
		}
		return javac, java, nil
	}
	if javac, err = exec.LookPath("javac"); err != nil {
		return "", "", fmt.Errorf("javac not found on PATH: the demo compiles its example and needs a JDK (set JAVA_HOME or --java-home)")
	}
	if java, err = exec.LookPath("java"); err != nil {
		return "", "", fmt.Errorf("java not found on PATH")
	}
	return javac, java, nil
}

// prefixWriter indents a child process's output under the step that ran it.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if p.w == nil {
		p.w = os.Stderr
	}
	text := strings.TrimRight(string(b), "\n")
	for _, line := range strings.Split(text, "\n") {
		if _, err := fmt.Fprintf(p.w, "%s%s\n", p.prefix, line); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}
