package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/internal/testenv"
)

// asCLI lets the test binary stand in for bin/heapledger as the agent's transform service: the
// agent runs HEAPLEDGER_BIN serve ..., and with this variable set the test binary runs main
// instead of the tests. Test files' init functions run after every command has registered.
const asCLI = "HEAPLEDGER_TEST_AS_CLI"

func init() {
	if os.Getenv(asCLI) == "1" {
		main()
		os.Exit(0)
	}
}

// needAgent skips outside CI (fails in CI) without a JDK or the built agent jar, and makes this
// test binary the transform service the agent starts.
func needAgent(t *testing.T) {
	t.Helper()
	needJDK(t)
	if os.Getenv("HEAPLEDGER_AGENT") == "" {
		p, _ := filepath.Abs(filepath.Join("..", "build", AgentJarName))
		testenv.File(t, p) // `make build` builds it
		t.Setenv("HEAPLEDGER_AGENT", p)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HEAPLEDGER_BIN", exe)
	t.Setenv(asCLI, "1")
	t.Setenv("HEAPLEDGER_CACHE_DIR", testCacheDir(t))
}

// onJDKs runs test as one subtest per JDK the agent is proven on: 17 (java on the PATH) and 25
// (fixtures.JDK25Home()); a missing JDK skips its subtest outside CI and fails it in CI.
func onJDKs(t *testing.T, test func(t *testing.T, java string)) {
	t.Helper()
	for _, jdk := range []struct{ name, java string }{
		{"jdk17", "java"},
		{"jdk25", filepath.Join(fixtures.JDK25Home(), "bin", "java")},
	} {
		t.Run(jdk.name, func(t *testing.T) { test(t, testenv.Tool(t, jdk.java)) })
	}
}

// sharedCache is the transform cache of every agent test of this package, never the user's.
// It is shared, so that a test's services meet classes earlier tests stored and every exact
// count the tests check is also checked on classes answered from the cache. It cannot be a
// test's TempDir: a service writes its entries after its JVM has exited, and so after the
// test may have ended.
var sharedCache struct {
	once sync.Once
	dir  string
	err  error
}

func testCacheDir(t *testing.T) string {
	t.Helper()
	sharedCache.once.Do(func() { sharedCache.dir, sharedCache.err = os.MkdirTemp("", "heapledger-cli-test-cache-") })
	if sharedCache.err != nil {
		t.Fatal(sharedCache.err)
	}
	return sharedCache.dir
}

// TestMain removes the shared transform cache after the tests, giving services still writing
// to it some seconds to finish.
func TestMain(m *testing.M) {
	code := m.Run()
	if sharedCache.dir != "" {
		for i := 0; i < 100 && os.RemoveAll(sharedCache.dir) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	os.Exit(code)
}

// agentFixtures compiles fixtures/agent: the application classes into app/ and the plugin,
// which only the custom loader may see, into plugin/.
func agentFixtures(t *testing.T) (app, plugin string) {
	t.Helper()
	src := filepath.Join("..", "fixtures", "agent", "src")
	dir := t.TempDir()
	app, plugin = filepath.Join(dir, "app"), filepath.Join(dir, "plugin")
	var appSrcs, pluginSrcs []string
	filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err == nil && strings.HasSuffix(p, ".java") {
			if strings.Contains(filepath.ToSlash(p), "/agentfix/plugin/") {
				pluginSrcs = append(pluginSrcs, p)
			} else {
				appSrcs = append(appSrcs, p)
			}
		}
		return nil
	})
	for _, job := range []struct {
		out  string
		srcs []string
	}{{app, appSrcs}, {plugin, pluginSrcs}} {
		args := append([]string{"--release", "11", "-encoding", "UTF-8", "-d", job.out}, job.srcs...)
		if b, err := exec.Command("javac", args...).CombinedOutput(); err != nil {
			t.Fatalf("javac: %v\n%s", err, b)
		}
	}
	return app, plugin
}

// runGuarded runs a command with a generous hang guard and returns stdout, stderr. On the
// guard it kills the command's whole process group (heapledger run, its JVM, the service).
func runGuarded(t *testing.T, limit time.Duration, name string, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %v: still running after %v (hang guard)\nstdout:\n%s\nstderr:\n%s", name, args, limit, out.String(), errb.String())
	}
	return out.String(), errb.String(), err
}

// runHL runs this test binary as the heapledger command (needAgent set it up), under the hang
// guard: a program that hung under the agent fails the test instead of stalling the suite.
func runHL(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return runGuarded(t, 3*time.Minute, exe, args...)
}

// onlySnapshot reads the single text snapshot in dir.
func onlySnapshot(t *testing.T, dir string) *snapshot.Snapshot {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if len(found) != 1 {
		t.Fatalf("want one snapshot in %s, found %v", dir, found)
	}
	s, err := snapshot.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	return s
}
