package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/heapledger/heapledger/internal/loadavg"
)

// Env is where the suite runs: the checkout, its scratch directory, the JDK and the heapledger
// binary.
type Env struct {
	Ctx     context.Context // cancelled on interrupt: the running JVM is killed, no new run starts
	Root    string          // repository root
	Out     string          // scratch: inputs, rewritten jars, run directories (git-ignored bench/out)
	Java    string
	Javac   string
	JarTool string
	JFRTool string // empty when the JDK has no jfr tool; recordings are then only checked to exist
	Bin     string // bin/heapledger
	Quick   bool
	Keep    bool // keep every run directory, not only failed ones
	Log     io.Writer
}

func (env *Env) logf(format string, args ...any) {
	fmt.Fprintf(env.Log, "bench: "+format+"\n", args...)
}

// findJDK resolves java and its sibling tools from JAVA_HOME or PATH, so all of them come from
// one JDK and the version in the doc is the one that ran.
func findJDK(java string) (javaPath, javac, jar, jfr string, err error) {
	if java == "" {
		java = "java"
		if jh := os.Getenv("JAVA_HOME"); jh != "" {
			java = filepath.Join(jh, "bin", "java")
		}
	}
	javaPath, err = exec.LookPath(java)
	if err != nil {
		return "", "", "", "", fmt.Errorf("no java: %v (install openjdk-17-jdk-headless via scripts/install-deps.sh)", err)
	}
	real, err := filepath.EvalSymlinks(javaPath)
	if err != nil {
		return "", "", "", "", err
	}
	bin := filepath.Dir(real)
	sibling := func(name string) string {
		p := filepath.Join(bin, name)
		if _, err := os.Stat(p); err == nil {
			return p
		}
		return ""
	}
	javac, jar, jfr = sibling("javac"), sibling("jar"), sibling("jfr")
	if javac == "" || jar == "" {
		return "", "", "", "", fmt.Errorf("%s has no javac/jar beside it: a full JDK is needed", real)
	}
	return javaPath, javac, jar, jfr, nil
}

// command runs a helper tool (javac, jar) and returns its combined output.
func (env *Env) command(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// runJava runs an untimed JVM (input preparation) and returns its combined output.
func (env *Env) runJava(dir string, cp []string, main string, args ...string) ([]byte, error) {
	full := append([]string{"-cp", strings.Join(cp, string(os.PathListSeparator)), main}, args...)
	return env.command(dir, env.Java, full...)
}

// Machine describes the computer a run happened on, for the doc.
type Machine struct {
	CPU, Kernel, JDK, Date, LoadStart, LoadEnd string
	Cores                                      int
	MemGiB                                     float64
}

func describeMachine(env *Env) Machine {
	m := Machine{Cores: runtime.NumCPU(), Date: time.Now().UTC().Format("2006-01-02 15:04 MST")}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				m.CPU = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb float64
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, "MemTotal:")), "%f", &kb)
			}
		}
		m.MemGiB = kb / (1 << 20)
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command(env.Java, "-version").CombinedOutput(); err == nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) >= 2 {
			m.JDK = strings.TrimSpace(lines[0]) + "; " + strings.TrimSpace(lines[1])
		} else {
			m.JDK = strings.TrimSpace(string(out))
		}
	}
	m.LoadStart = loadavg.Read()
	return m
}
