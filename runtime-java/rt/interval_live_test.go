package rt

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// busyFixture allocates from several threads without pause while the runtime writes periodic
// snapshots: what a thread counts between the snapshot's steps lands in one view of the row
// and not the other unless the snapshot orders them.
const busyFixture = `package heapledger.rt;

public class BusyFixture {
    public static void main(String[] args) throws Exception {
        final long until = System.currentTimeMillis() + Long.parseLong(args[0]);
        Thread[] ts = new Thread[Integer.parseInt(args[1])];
        for (int i = 0; i < ts.length; i++) {
            final int account = 1 + i % 2;
            ts[i] = new Thread() {
                @Override
                public void run() {
                    Acct t = Ledger.here();
                    t.account = account;
                    Object[] keep = new Object[4096]; // a moving window stays live, the rest is reclaimed
                    for (int j = 0; System.currentTimeMillis() < until; j++) {
                        for (int k = 0; k < 1000; k++, j++) {
                            Object o = new Object();
                            Acct.object(o, t, 1);
                            int[] a = new int[j & 7];
                            Acct.array(a, t, 2);
                            keep[j & 4095] = (j & 1) == 0 ? o : a;
                        }
                        // Busy, but not so busy that walking the tracked objects takes
                        // longer than the snapshot interval.
                        try {
                            Thread.sleep(1);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }
            };
            ts[i].start();
        }
        for (Thread t : ts) t.join();
    }
}
`

// TestIntervalSnapshotsLiveWithinCount: in every row of every periodic snapshot of a busy
// multi-threaded program, the objects liveness accounts for (live, reclaimed, untracked) are
// among those counted. The snapshot takes its live view before it merges the threads' counts,
// and every object is counted before it is tracked, so this holds however busy the threads are;
// merging first let objects allocated in between show up live but not counted.
func TestIntervalSnapshotsLiveWithinCount(t *testing.T) {
	classes := build(t)
	java := need(t, "java")
	compileRuntimeFixture(t, classes, "BusyFixture", busyFixture)
	dir := t.TempDir()
	cmd := exec.Command(java, "-cp", classes, "-Dheapledger.snapshot.dir="+dir, "-Dheapledger.liveness=all",
		"-Dheapledger.snapshot.interval=0.05", "heapledger.rt.BusyFixture", "2500", "4")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	snaps, _ := filepath.Glob(filepath.Join(dir, "heapledger-BusyFixture-*.snapshot"))
	intervals, checked := 0, 0
	for _, s := range snaps {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			f := strings.Split(line, "\t")
			if f[0] == "reason" && f[1] == "interval" {
				intervals++
			}
			if f[0] == "dropped" && f[1] != "0" {
				t.Errorf("%s: the runtime dropped events: %s", s, line)
			}
			if f[0] != "alloc" {
				continue
			}
			// alloc ACCOUNT SITE PART COUNT ELEMENTS BYTES LIVE LIVE_BYTES RECLAIMED RECLAIMED_BYTES UNTRACKED GENERATIONS
			if len(f) != 14 {
				t.Fatalf("%s line %d: want 14 fields with liveness on: %q", s, i+1, line)
			}
			n := func(k int) int64 {
				v, err := strconv.ParseInt(f[k], 10, 64)
				if err != nil {
					t.Fatalf("%s line %d field %d: %v", s, i+1, k+1, err)
				}
				return v
			}
			count, live, reclaimed, untracked := n(4), n(7), n(9), n(11)
			if live+reclaimed+untracked > count {
				t.Errorf("%s line %d: %d live + %d reclaimed + %d untracked > %d counted: %s", s, i+1, live, reclaimed, untracked, count, line)
			}
			checked++
		}
	}
	// 2.5 s at one snapshot every 50 ms, each taking a while; a loaded machine writes fewer, but two prove
	// the periodic path ran while the threads allocated.
	t.Logf("%d interval snapshots, %d rows checked", intervals, checked)
	if intervals < 2 || checked == 0 {
		t.Fatalf("want periodic snapshots of the busy threads: %d interval snapshots, %d rows in %d files", intervals, checked, len(snaps))
	}
}

// compileRuntimeFixture compiles source, class name of package heapledger.rt (so it reaches the
// runtime's package-private API), into classes, the runtime built by build.
func compileRuntimeFixture(t *testing.T, classes, name, source string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "heapledger", "rt", name+".java")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(need(t, "javac"), "--release", "8", "-nowarn", "-cp", classes, "-d", classes, p).CombinedOutput(); err != nil {
		t.Fatalf("javac %s: %v\n%s", name, err, out)
	}
}
