package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/heapledger/heapledger/internal/filecache"
	"github.com/heapledger/heapledger/rewrite/transformsvc"
)

// defaultCacheSize bounds the cache of transformed classes: a large program's classes
// (the Scala compiler's 5,000) take some tens of MiB, so a few programs fit.
const defaultCacheSize = "512M"

// cacheFlags are the options of the transform service's cache, on serve and on the commands
// that start a JVM under the agent (agent, run, attach), which pass them on.
func cacheFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "cache-dir", EnvVars: []string{"HEAPLEDGER_CACHE_DIR"},
			Usage:       "where the transform service keeps the classes it rewrote, for later runs to reuse; the agent reads them itself, without asking the service (shared by every JVM of the user; docs/agent.md)",
			DefaultText: "heapledger/transform in the user's cache directory ($XDG_CACHE_HOME or ~/.cache)"},
		&cli.StringFlag{Name: "cache-size", Value: defaultCacheSize, EnvVars: []string{"HEAPLEDGER_CACHE_SIZE"},
			Usage: "bound on the cache directory (suffixes K, M, G): after a run that stored classes, the least recently used are removed down to 90% of it"},
		&cli.BoolFlag{Name: "no-cache", EnvVars: []string{"HEAPLEDGER_NO_CACHE"},
			Usage: "rewrite every class, reading and writing no cache of transformed classes"},
	}
}

// cacheAgentOptions passes the cache flags the user gave on to the service the agent starts.
// The directory is made absolute here: the JVM may run elsewhere (a launcher written by agent).
func cacheAgentOptions(c *cli.Context, o *agentOptions) error {
	if d := c.String("cache-dir"); d != "" {
		abs, err := filepath.Abs(d)
		if err != nil {
			return err
		}
		o.add("arg", "--cache-dir="+abs)
	}
	if c.IsSet("cache-size") {
		if _, err := parseBytes(c.String("cache-size")); err != nil {
			return fmt.Errorf("--cache-size: %w", err)
		}
		o.add("arg", "--cache-size="+c.String("cache-size"))
	}
	if c.Bool("no-cache") {
		o.add("arg", "--no-cache")
	}
	return nil
}

// openTransformCache sets up srv's cache from serve's flags. A cache that cannot be opened is
// a warning, not a failure: the classes are rewritten all the same.
func openTransformCache(c *cli.Context, srv *transformsvc.Server) error {
	if c.Bool("no-cache") {
		return nil
	}
	size, err := parseBytes(c.String("cache-size"))
	if err != nil {
		return fmt.Errorf("--cache-size: %w", err)
	}
	dir := c.String("cache-dir")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			fmt.Fprintf(os.Stderr, "heapledger serve: no transform cache: %v (give --cache-dir)\n", err)
			return nil
		}
		dir = filepath.Join(base, "heapledger", "transform")
	}
	store, err := filecache.Open(dir, size)
	if err != nil {
		fmt.Fprintf(os.Stderr, "heapledger serve: no transform cache: %v\n", err)
		return nil
	}
	salt, err := cacheSalt(c)
	if err != nil {
		return err
	}
	srv.Cache, srv.CacheSalt, srv.Log = store, salt, os.Stderr
	// The service inherits the JVM's standard error. Once the JVM is gone, a shell pipeline
	// or a test reading that stream would wait for the entries to be written (and the cache
	// trimmed) unless the service closes its copy first. What it would say after that (a
	// cache it could not write) has no reader left.
	srv.AfterLast = func() { os.Stderr.Close() }
	return nil
}

// cacheSalt is what decides a rewrite besides the class and the table's hello: this binary
// (its build, and the file itself, as ccache's default check of a compiler does: a rebuild
// changes its modification time) and every pass option given, with the content of the files
// they name, since an edited accounts file keeps its name.
func cacheSalt(c *cli.Context) (string, error) {
	var b strings.Builder
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find this binary to key its transform cache: %w", err)
	}
	st, err := os.Stat(exe)
	if err != nil {
		return "", fmt.Errorf("cannot key the transform cache: %w", err)
	}
	fmt.Fprintf(&b, "binary %s %d %d\n", exe, st.Size(), st.ModTime().UnixNano())
	if bi, ok := debug.ReadBuildInfo(); ok {
		fmt.Fprintf(&b, "build %s %s\n", bi.Main.Version, bi.GoVersion)
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				fmt.Fprintf(&b, "%s=%s\n", s.Key, s.Value)
			}
		}
	}
	for _, f := range append(countFlags(), &cli.IntFlag{Name: "object-init-sites"}) {
		name := f.Names()[0]
		if name == "embed-runtime" || !c.IsSet(name) {
			continue
		}
		fmt.Fprintf(&b, "--%s=%v\n", name, c.Value(name))
		files := c.StringSlice("profile") // the profiles plan the path counters
		if name == "accounts-file" || name == "table" {
			files = []string{c.String(name)}
		} else if name != "profile" {
			files = nil
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil && !os.IsNotExist(err) {
				return "", err
			}
			fmt.Fprintf(&b, "content %x\n", sha256.Sum256(data))
		}
	}
	return b.String(), nil
}

// trimTransformCache keeps the cache under its bound after a run that stored classes (a run
// that only read it leaves it as it was, and pays nothing).
func trimTransformCache(srv *transformsvc.Server) {
	if srv.Cache == nil || srv.Cache.Written() == 0 {
		return
	}
	if _, err := srv.Cache.Trim(); err != nil {
		fmt.Fprintf(os.Stderr, "heapledger serve: trimming the transform cache: %v\n", err)
	}
}
