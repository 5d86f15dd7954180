package transformsvc

import (
	"crypto/sha256"
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
