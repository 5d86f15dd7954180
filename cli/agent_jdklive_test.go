package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestAgentJDKLiveness runs agentfix.jdk.Main under `heapledger run --jdk --liveness all` on JDK
// 17 and 25: the output is the plain run's, the JDK's allocations are counted as without
// liveness, and liveness tracks none of the runtime's own work in rewritten JDK code (its
// snapshot writer, its liveness thread, the agent's transformer): no row may have more live,
// reclaimed and untracked objects than it counted. Before the runtime kept its private states
// out of liveness, rows of <unaccounted> (HashMap.newNode, String and StringBuilder sites the
// snapshot writer shares with the program) failed exactly that.
func TestAgentJDKLiveness(t *testing.T) {
	needAgent(t)
	app, _ := agentFixtures(t)
	onJDKs(t, func(t *testing.T, java string) {
		plain, err := exec.Command(java, "-cp", app, "agentfix.jdk.Main", "1000").Output()
		if err != nil {
			t.Fatalf("plain run: %v", err)
		}
		snaps := t.TempDir()
		out, errOut, err := runHL(t, "run", "--jdk", "--liveness", "all", "--accounts", "agentfix.jdk.*", "--snapshot-dir", snaps, "--",
			java, "-cp", app, "agentfix.jdk.Main", "1000")
		if err != nil {
			t.Fatalf("%v\n%s\n%s", err, out, errOut)
		}
		if out != string(plain) {
			t.Errorf("output under --jdk --liveness all:\n%s\nplain:\n%s", out, plain)
		}
		s := onlySnapshot(t, snaps)
		if !s.Liveness {
			t.Fatal("the snapshot has no liveness data")
		}
		// The runtime swallows its own failures rather than throw into the program; here there
		// must be none. Under load, a LongAdder's cells allocated in rewritten JDK code made
		// liveness re-enter itself until the stack overflowed, and the main thread lost its state.
		if d := s.Header["dropped"]; d != "0" {
			t.Errorf("the runtime dropped internal failures: %s, the first: %s", d, s.Header["dropped_first"])
		}
		if got := accountSiteCounts(s, "java.util.HashMap.newNode(")["agentfix.jdk.*"]["java.util.HashMap$Node"]; got != 1000 {
			t.Errorf("HashMap$Node in HashMap.newNode charged to agentfix.jdk.*: %d, want 1000", got)
			for _, r := range s.Rows {
				if site := s.Sites[r.Site]; strings.HasPrefix(site.Method, "agentfix") || strings.Contains(site.Method, "HashMap.newNode") {
					t.Logf("row: account %q site %d %q in %q: count %d live %d", s.Accounts[r.Account], r.Site, site.Type, site.Method, r.Count, r.Live)
				}
			}
		}
		for _, r := range s.Rows {
			if r.Live+r.Reclaimed+r.Untracked > r.Count {
				site := s.Sites[r.Site]
				t.Errorf("%s %s in %s: %d live + %d reclaimed + %d untracked of %d counted: liveness tracked objects nobody counted",
					s.Accounts[r.Account], site.Type, site.Method, r.Live, r.Reclaimed, r.Untracked, r.Count)
			}
		}
	})
}
