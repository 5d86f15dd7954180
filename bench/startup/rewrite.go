//go:build linux

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// rewriteOffline rewrites p's jars into one jar with the count pass, p's accounts and the runtime
// embedded, as a user rewrites a program before shipping it. The result is kept under a key of
// the binary, the runtime jar beside it, the flags and the input jars, so a second benchmark run
// with the same binary does not rewrite again. An account pattern that matches no class of the
// jars fails the program: the offline and agent modes would then measure fewer accounts than the
// table says.
func rewriteOffline(cfg *Config, p *Program) ([]string, error) {
	flags := []string{"--pass", "count", "--accounts", strings.Join(p.Accounts, ","), "--embed-runtime"}
	key := []string{strings.Join(flags, "\x00")}
	for _, f := range []string{cfg.Bin, filepath.Join(filepath.Dir(cfg.Bin), "heapledger-runtime.jar")} {
		sum, err := fileSum(f)
		if err != nil && f == cfg.Bin {
			return nil, err
		}
		key = append(key, f+" "+sum)
	}
	for _, j := range p.Jars {
		st, err := os.Stat(j)
		if err != nil {
			return nil, err
		}
		key = append(key, fmt.Sprintf("%s %d %d", j, st.Size(), st.ModTime().UnixNano()))
	}
	sum := sha256.Sum256([]byte(strings.Join(key, "\n")))
	dir := filepath.Join(cfg.Work, "offline", p.Name, hex.EncodeToString(sum[:8]))
	jar := filepath.Join(dir, p.Name+".jar")
	if _, err := os.Stat(filepath.Join(dir, ".done")); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		args := append(append(append([]string{"rewrite"}, flags...), "-o", jar), p.Jars...)
		fmt.Fprintf(cfg.Log, "%s: %s %s\n", p.Name, cfg.Bin, strings.Join(args, " "))
		start := time.Now()
		log, err := exec.Command(cfg.Bin, args...).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("offline rewrite failed: %v\n%s", err, tail(log, 20))
		}
		if i := bytes.Index(log, []byte("matched no class")); i >= 0 {
			start := bytes.LastIndexByte(log[:i], '\n') + 1
			end := i + bytes.IndexByte(append(log[i:], '\n'), '\n')
			return nil, fmt.Errorf("the accounts do not fit the jars: %s", log[start:end])
		}
		fmt.Fprintf(cfg.Log, "%s: rewritten in %.1f s\n", p.Name, time.Since(start).Seconds())
		if err := os.WriteFile(filepath.Join(dir, ".done"), log, 0o644); err != nil {
			return nil, err
		}
	}
	// Anything else the rewrite wrote beside its output goes on the class path too.
	cp := []string{jar}
	others, err := filepath.Glob(filepath.Join(dir, "*.jar"))
	if err != nil {
		return nil, err
	}
	for _, o := range others {
		if o != jar {
			cp = append(cp, o)
		}
	}
	return cp, nil
}

func fileSum(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:]), nil
}
