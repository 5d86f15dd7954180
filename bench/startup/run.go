//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Sample is one timed run: wall time until the command exited, and the CPU time of the command
// and of every process it left behind (the agent's transform service, which finishes writing the
// cache after the JVM exits, is one).
type Sample struct {
	Wall, CPU time.Duration
}

// Result is a finished run: its sample, its canonical output and what it printed on stderr.
type Result struct {
	Sample
	Output string
	Stderr []byte
}

// becomeSubreaper makes this process the parent of every orphan its children leave, so reapAll
// can wait for them and count their CPU time: without it the transform service, reparented to
// init when the JVM exits, would be neither counted nor waited for, and the second run could
// start while the first one's cache entries were still being written.
func becomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %v", e)
	}
	return nil
}

// reapAll waits for every remaining child (orphans reparented here) and returns their CPU time.
func reapAll(limit time.Duration) (time.Duration, error) {
	var cpu time.Duration
	deadline := time.Now().Add(limit)
	for {
		var ws syscall.WaitStatus
		var ru syscall.Rusage
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, &ru)
		if errors.Is(err, syscall.ECHILD) {
			return cpu, nil
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return cpu, fmt.Errorf("waiting for the processes a run left behind: %w", err)
		}
		if pid > 0 {
			cpu += rusageCPU(&ru)
			continue
		}
		if time.Now().After(deadline) {
			return cpu, fmt.Errorf("a process the run left behind is still running after %s", limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func rusageCPU(ru *syscall.Rusage) time.Duration {
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runTimed runs argv in dir with stdout and stderr going to files there (a pipe would make the
// wait last until every process holding it ends, not the command), then waits for what it left
// behind. The output is the command's stdout followed by a digest line per file under dir/out.
func runTimed(dir string, argv []string) (*Result, error) {
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		return nil, err
	}
	defer stderr.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, stdout, stderr
	start := time.Now()
	runErr := cmd.Run()
	wall := time.Since(start)
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = rusageCPU(cmd.ProcessState.SysUsage().(*syscall.Rusage))
	}
	left, reapErr := reapAll(2 * time.Minute)
	errOut, _ := os.ReadFile(filepath.Join(dir, "stderr"))
	if runErr != nil {
		return nil, fmt.Errorf("%s failed: %v\n%s", strings.Join(argv, " "), runErr, tail(errOut, 20))
	}
	if reapErr != nil {
		return nil, reapErr
	}
	out, err := canonicalOutput(dir)
	if err != nil {
		return nil, err
	}
	return &Result{Sample: Sample{Wall: wall, CPU: cpu + left}, Output: out, Stderr: errOut}, nil
}

// canonicalOutput is what a run must reproduce in every mode: its stdout and, per file the
// program wrote under out/, the file's path and SHA-256.
func canonicalOutput(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "stdout"))
	if err != nil {
		return "", err
	}
	var files []string
	root := filepath.Join(dir, "out")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		c, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(c)
		rel, _ := filepath.Rel(root, p)
		files = append(files, "file "+rel+" "+hex.EncodeToString(sum[:]))
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	sort.Strings(files)
	return string(b) + strings.Join(files, "\n"), nil
}

// firstDifference names the first line where got differs from want, for the failure message.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d: plain %q, this run %q", i+1, clip(a), clip(b))
		}
	}
	return "identical"
}

func clip(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func tail(b []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
