package main

import (
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/fixtures/demo"
	"github.com/heapledger/heapledger/internal/filecache"
)

// siteRows sums a snapshot's rows by what a report shows of them: the account and the site as
// named by its table line (kind, type, method, offset, line), not by its ID.
func siteRows(t *testing.T, s *snapshot.Snapshot) map[string][3]int64 {
	t.Helper()
	out := map[string][3]int64{}
	for _, r := range s.Rows {
		site, ok := s.Sites[r.Site]
		if !ok || site.Method == "" {
			t.Fatalf("%s: site %d counted %d but has no name", s.Path, r.Site, r.Count)
		}
		k := fmt.Sprintf("%s | %s %s %s @%d line %d", s.Accounts[r.Account], site.Kind, site.Type, site.Method, site.Offset, site.Line)
		v := out[k]
		out[k] = [3]int64{v[0] + r.Count, v[1] + r.Elements, v[2] + r.Bytes}
	}
	return out
}

// collide waits for the n entries of the cache directory to be whole, then stores under each
// key the entry of another, checksums and all, as if every key had collided with another's
// (keys are CRC-32s: transformsvc.cacheKey).
func collide(t *testing.T, dir string, n int) {
	t.Helper()
	store, err := filecache.Open(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	var keys []filecache.Key
	var values [][]byte
	for deadline := time.Now().Add(time.Minute); len(values) < n; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the run, %d whole entries in %s for %d classes", len(values), dir, n)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "[0-9a-f][0-9a-f]", "*"))
		keys, values = keys[:0], values[:0]
		for _, f := range files {
			var k filecache.Key
			if b, err := hex.DecodeString(filepath.Base(f)); err != nil || len(b) != len(k) {
				continue // a temporary
			} else {
				copy(k[:], b)
			}
			if v, ok := store.Get(k); ok {
				keys, values = append(keys, k), append(values, v)
			}
		}
	}
	for i, k := range keys {
		if err := store.Put(k, values[(i+1)%len(values)]); err != nil {
			t.Fatal(err)
		}
	}
}

var cacheStats = regexp.MustCompile(`(\d+) classes sent, .* (\d+) answered from the transform cache \((\d+) read by the agent itself\)`)

// The demo run twice under the agent with one cache: the first run rewrites every class and
// stores it, the second answers every class from the cache; both snapshots count the same
// at every site, by name, as the offline rewrite does; --no-cache reads nothing.
func TestAgentCacheSecondRun(t *testing.T) {
	needAgent(t)
	dir := t.TempDir()
	if out, errOut, err := runCLI(t, "demo", "--dir", dir); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	offline := siteRows(t, onlySnapshot(t, filepath.Join(dir, "snapshots")))
	cache := filepath.Join(dir, "cache")
	runDemo := func(name string, extra ...string) (sent, cached, inJVM int) {
		snaps := filepath.Join(dir, name)
		args := append([]string{"run", "--accounts", demo.Accounts, "--stats", "--snapshot-dir", snaps, "--cache-dir", cache}, extra...)
		args = append(args, "--", "java", "-cp", filepath.Join(dir, "classes"), demo.MainClass, "2000")
		out, errOut, err := runHL(t, args...)
		if err != nil {
			t.Fatalf("%s: %v\n%s\n%s", name, err, out, errOut)
		}
		if w := agentWarnings(errOut); len(w) > 0 {
			t.Errorf("%s: agent warnings: %v", name, w)
		}
		// Every pattern matches a class the demo loads, also those the agent answered
		// itself (their names reach the service at exit).
		if strings.Contains(errOut, "matched no class") {
			t.Errorf("%s: a pattern said to match no class:\n%s", name, errOut)
		}
		m := cacheStats.FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("%s: no stats line:\n%s", name, errOut)
		}
		sent, _ = strconv.Atoi(m[1])
		cached, _ = strconv.Atoi(m[2])
		inJVM, _ = strconv.Atoi(m[3])
		got := siteRows(t, onlySnapshot(t, snaps))
		if len(got) != len(offline) || len(got) == 0 {
			t.Errorf("%s: %d sites counted, offline %d", name, len(got), len(offline))
		}
		for k, w := range offline {
			if got[k] != w {
				t.Errorf("%s: %s: counted %v, offline %v", name, k, got[k], w)
			}
		}
		return sent, cached, inJVM
	}
	sent, cached, _ := runDemo("first")
	if sent == 0 || cached != 0 {
		t.Errorf("first run: %d classes sent, %d from the cache; want all rewritten", sent, cached)
	}
	// The service writes its entries after the JVM exited, having let go of its standard
	// error first, so the run can return before they are all there.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		entries, _ := filepath.Glob(filepath.Join(cache, "[0-9a-f][0-9a-f]", "*"))
		if len(entries) == sent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the first run, %d entries in %s for %d classes", len(entries), cache, sent)
		}
	}
	if sent, cached, inJVM := runDemo("second"); sent == 0 || cached != sent || inJVM != sent {
		t.Errorf("second run: %d classes sent, %d from the cache, %d of them by the agent itself; want all read by the agent", sent, cached, inJVM)
	}
	// Damaged entries are read by nobody: the agent asks the service, which rewrites the
	// classes and replaces the entries.
	entries, _ := filepath.Glob(filepath.Join(cache, "[0-9a-f][0-9a-f]", "*"))
	for _, e := range entries {
		b, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)-1] ^= 0xFF
		if err := os.WriteFile(e, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if sent, cached, inJVM := runDemo("damaged"); sent == 0 || cached != 0 || inJVM != 0 {
		t.Errorf("damaged entries: %d classes sent, %d from the cache, %d by the agent itself; want all rewritten", sent, cached, inJVM)
	}
	collide(t, cache, sent)
	if sent, cached, inJVM := runDemo("collided"); sent == 0 || cached != 0 || inJVM != 0 {
		t.Errorf("entries of other classes under each key: %d classes sent, %d from the cache, %d by the agent itself; want all rewritten", sent, cached, inJVM)
	}
	if sent, cached, _ := runDemo("uncached", "--no-cache"); sent == 0 || cached != 0 {
		t.Errorf("--no-cache: %d classes sent, %d from the cache", sent, cached)
	}
	// A cache directory that cannot be made costs the cache, not the run.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runHL(t, "run", "--accounts", demo.Accounts, "--cache-dir", filepath.Join(blocker, "cache"),
		"--snapshot-dir", filepath.Join(dir, "nocache"), "--", "java", "-cp", filepath.Join(dir, "classes"), demo.MainClass, "20")
	if err != nil || !regexp.MustCompile(`heapledger serve: no transform cache: .*not a directory`).MatchString(errOut) {
		t.Errorf("unusable cache directory: %v\n%s\n%s", err, out, errOut)
	}
}
