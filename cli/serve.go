package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/rewrite/jar"
	rwpasses "github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/transformsvc"
)

// serveCmd is the transform service the Java agent starts as its child process. It is listed
// as internal: its standard input and output carry binary frames, not meant for people.
var serveCmd = &cli.Command{
	Name:  "serve",
	Usage: "internal: the agent's transform service (binary frames on stdin/stdout)",
	Description: "Started by heapledger-agent.jar inside a JVM: reads classes on standard input and answers with\n" +
		"rewritten classes and site-table lines on standard output (rewrite/transformsvc describes the\n" +
		"frames). It exits when standard input ends, which happens when the JVM exits.",
	Flags: []cli.Flag{
		&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "classes rewritten at once", DefaultText: "the number of CPUs"},
		&cli.IntFlag{Name: "object-init-sites", Usage: "hook java.lang.Object's constructor (the agent's --object-init) and reserve this many sites for it"},
		&cli.StringFlag{Name: "class-path", Usage: "the JVM's class path (java.class.path): the classes of --class-path-loader are rewritten reading the others of its jars, as offline rewriting reads its input"},
		&cli.StringFlag{Name: "class-path-file", Usage: "a file that holds --class-path (the agent's way for a class path too long for one argument)"},
		&cli.StringFlag{Name: "class-path-loader", Usage: "the loader, as the agent names it in requests, that finds classes on --class-path (the system class loader)"},
	},
	Action: func(c *cli.Context) error {
		// Ctrl-C and Ctrl-\ reach the whole foreground process group: they are the JVM's to
		// handle (a thread dump, or a program that carries on), and must not end its service.
		// The service ends when its input does.
		signal.Ignore(os.Interrupt, syscall.SIGQUIT)
		// The service lives as long as one JVM and allocates in bursts while the JVM waits for
		// its answers: collecting a heap of a few megabytes at Go's default pace costs the JVM
		// more waiting than the memory it saves (docs/benchmarks-startup.md). GOGC still wins.
		if os.Getenv("GOGC") == "" {
			debug.SetGCPercent(serveGCPercent)
		}
		run, err := buildCountPass(c)
		if err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		srv := &transformsvc.Server{Pass: run.pass, Table: run.table, Workers: c.Int("jobs")}
		if run.table.Config["adapt.after"] != "" {
			srv.Adapt = run.adaptFunc()
		}
		if n := c.Int("object-init-sites"); n > 0 {
			srv.Pass = rwpasses.WithObjectInitHook(run.pass)
			srv.HookSites = n
		} else if err := readClassPath(c, run, srv); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		if err := openTransformCache(c, srv); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		// The JVM has exited (its end closed standard input): a pattern no class it loaded
		// matched is most likely a typo. Said on the agent's stderr, the JVM's, before the
		// service lets go of it (AfterLast).
		warned := false
		warn := func() {
			if !warned {
				warned = true
				if srv.ClassesKnown() {
					warnUnmatched(errWriter(c), run.set, srv.Classes(), "the program loaded", false)
				}
				reportProfile(errWriter(c), run.profile, "the program loaded (classes from the transform cache are not planned again)")
			}
		}
		// The agent ends its input at exit and waits for this output to end: a JVM thread
		// blocked reading a pipe holds the JVM's exit up to 300 ms (HotSpot waits for threads
		// in native code). The answers are all written by now; the cache entries come after.
		letGo := srv.AfterLast
		srv.AfterLast = func() {
			warn()
			os.Stdout.Close()
			if letGo != nil {
				letGo()
			}
		}
		if err := srv.Serve(os.Stdin, os.Stdout); err != nil {
			return fmt.Errorf("serve: %w", err)
		}
		warn()
		trimTransformCache(srv)
		return nil
	},
}

// readClassPath gives the service the JVM's class path as its input (--class-path): the
// system loader's classes are then rewritten by a second count pass, which reads the others.
// Not with the Object.<init> hook, under which no method is account-neutral anyway.
func readClassPath(c *cli.Context, run *countRun, srv *transformsvc.Server) error {
	path, loader := c.String("class-path"), c.String("class-path-loader")
	if f := c.String("class-path-file"); f != "" {
		if path != "" {
			return fmt.Errorf("--class-path and --class-path-file: give one")
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("--class-path-file: %w", err)
		}
		path = string(b)
	}
	if path == "" {
		return nil
	}
	if loader == "" {
		return fmt.Errorf("--class-path needs --class-path-loader, the loader that searches it")
	}
	pass, err := rwpasses.Count(run.opts)
	if err != nil {
		return err
	}
	srv.ClassPath = jar.NewClassPath(path, string(os.PathListSeparator))
	pass.SetInputs(srv.ClassPath.Lookup)
	srv.ClassPathLoader, srv.ClassPathPass = loader, pass
	srv.Log = os.Stderr // the JVM's: a class changed on its way from the class path is said there
	return nil
}

// serveGCPercent is the service's GOGC unless the environment sets one.
const serveGCPercent = 400

func init() {
	serveCmd.Flags = append(serveCmd.Flags, cacheFlags()...)
	addCountFlags(serveCmd, "embed-runtime")
	register(serveCmd)
}
