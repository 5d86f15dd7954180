package transformsvc

import (
	"bytes"
	"crypto/sha256"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/internal/filecache"
)

// Entries wait while classes keep coming, are written once the JVM has been quiet for the
// wait, and whatever is left is written when the service ends.
func TestWriteBehind(t *testing.T) {
	store, err := filecache.Open(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := filecache.Key(sha256.Sum256([]byte("1"))), filecache.Key(sha256.Sum256([]byte("2")))
	fail := func(err error) { t.Error(err) }

	busy := newWriteBehind(store, time.Hour, fail)
	busy.add(k1, []byte("one"))
	time.Sleep(50 * time.Millisecond)
	if _, ok := store.Get(k1); ok {
		t.Error("an entry was written while classes were still coming")
	}
	busy.close()
	if v, ok := store.Get(k1); !ok || string(v) != "one" {
		t.Errorf("close left the entry unwritten: %q %v", v, ok)
	}

	quiet := newWriteBehind(store, 10*time.Millisecond, fail)
	defer quiet.close()
	quiet.add(k2, []byte("two"))
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if v, ok := store.Get(k2); ok && string(v) == "two" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle service did not write its entry within 10 s")
		}
	}
}

// The service's last answer comes before AfterLast, and AfterLast before the entries still
// queued are written, so that `heapledger serve` can let go of the JVM's standard error first.
func TestAfterLastBeforeQueuedWrites(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 3)
	dir := t.TempDir()
	store, err := filecache.Open(dir, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s := countServer(t, store, "*")
	s.writeWait = time.Hour
	ran := 0
	var atAfterLast []string
	s.AfterLast = func() {
		ran++
		atAfterLast, _ = filepath.Glob(filepath.Join(dir, "*", "*"))
	}
	if got := serveInTurn(t, s, classes); len(got) != 3 {
		t.Fatalf("%d answers", len(got))
	}
	if ran != 1 || len(atAfterLast) != 0 {
		t.Errorf("AfterLast ran %d times; entries written before it: %v", ran, atAfterLast)
	}
	after, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	if len(after) != 3 {
		t.Errorf("%d entries written when the service ended, want 3", len(after))
	}
}

// TestAfterLastNotOnBrokenInput: a frame cut short is an error the caller reports on the
// JVM's standard error, so AfterLast, which lets go of that stream, must not run first (it
// did, and the service exited with status 1 and no word of why).
func TestAfterLastNotOnBrokenInput(t *testing.T) {
	store, err := filecache.Open(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s := countServer(t, store, "*")
	ran := false
	s.AfterLast = func() { ran = true }
	in := []byte{0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'} // a frame of 5 bytes: too short for a request
	err = s.Serve(bytes.NewReader(in), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reading requests") {
		t.Errorf("Serve: %v, want a reading error", err)
	}
	if ran {
		t.Error("AfterLast ran on a broken input")
	}
}
