package filecache

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func key(s string) Key { return sha256.Sum256([]byte(s)) }

func TestPutGet(t *testing.T) {
	c, err := Open(filepath.Join(t.TempDir(), "a", "b"), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(key("x")); ok {
		t.Fatal("hit in an empty cache")
	}
	for _, v := range [][]byte{[]byte("hello"), {}, bytes.Repeat([]byte{7}, 100000)} {
		if err := c.Put(key("x"), v); err != nil {
			t.Fatal(err)
		}
		got, ok := c.Get(key("x"))
		if !ok || !bytes.Equal(got, v) {
			t.Fatalf("got %d bytes (hit %v), want %d", len(got), ok, len(v))
		}
	}
	if _, ok := c.Get(key("y")); ok {
		t.Error("hit for a key never stored")
	}
	// A second handle on the directory (another JVM's service) sees the entry.
	c2, err := Open(c.Dir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := c2.Get(key("x")); !ok || len(got) != 100000 {
		t.Errorf("another handle: hit %v, %d bytes", ok, len(got))
	}
}

// A damaged entry is a miss, is removed, and the next Put stores a good one.
func TestCorruptEntries(t *testing.T) {
	c, err := Open(t.TempDir(), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	value := []byte("the class bytes")
	damage := map[string]func([]byte) []byte{
		"value byte flipped": func(b []byte) []byte { b[len(b)-1] ^= 1; return b },
		"cut short":          func(b []byte) []byte { return b[:len(b)-3] },
		"header only part":   func(b []byte) []byte { return b[:10] },
		"empty":              func(b []byte) []byte { return nil },
		"bad magic":          func(b []byte) []byte { b[0] = 'X'; return b },
		"checksum flipped":   func(b []byte) []byte { b[5] ^= 0x80; return b },
	}
	for name, f := range damage {
		k := key(name)
		if err := c.Put(k, value); err != nil {
			t.Fatal(err)
		}
		p := c.path(k)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f(data), 0o666); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Get(k); ok {
			t.Errorf("%s: damaged entry used: %q", name, got)
		}
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s: damaged entry not removed (%v)", name, err)
		}
		if err := c.Put(k, value); err != nil {
			t.Fatal(err)
		}
		if got, ok := c.Get(k); !ok || !bytes.Equal(got, value) {
			t.Errorf("%s: replaced entry: hit %v, %q", name, ok, got)
		}
	}
	// An entry copied under another key does not pass as that key's.
	if err := c.Put(key("a"), value); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(c.path(key("a")))
	os.MkdirAll(filepath.Dir(c.path(key("b"))), 0o777)
	if err := os.WriteFile(c.path(key("b")), data, 0o666); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get(key("b")); ok {
		t.Error("an entry under the wrong key was used")
	}
}

// Writers and readers of the same keys at once, as JVMs sharing the cache are: every read is
// a miss or one of the values written whole.
func TestConcurrent(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		c, err := Open(dir, 1<<30)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				k := key(fmt.Sprint(i % 10))
				v := bytes.Repeat([]byte{byte(i % 10)}, 1000+i%10)
				if i%3 == 0 {
					if err := c.Put(k, v); err != nil {
						t.Error(err)
						return
					}
				} else if got, ok := c.Get(k); ok && !bytes.Equal(got, v[:1000+i%10]) {
					t.Errorf("key %d: read %d bytes that are not the value", i%10, len(got))
					return
				}
			}
		}()
	}
	wg.Wait()
	left, _ := filepath.Glob(filepath.Join(dir, "*", tempPrefix+"*"))
	if len(left) > 0 {
		t.Errorf("temporaries left: %v", left)
	}
}

// Trim removes the least recently used entries down to 90% of the bound, keeps an entry a hit
// renewed, and removes temporaries only when they are old.
func TestTrim(t *testing.T) {
	c, err := Open(t.TempDir(), 10*(headerSize+1000))
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	for i := 0; i < 20; i++ {
		if err := c.Put(key(fmt.Sprint(i)), make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		// Entry i was last used i minutes after "old".
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(c.path(key(fmt.Sprint(i))), at, at)
	}
	// Entry 0, the oldest, is used now: the hit renews it.
	if _, ok := c.Get(key("0")); !ok {
		t.Fatal("miss")
	}
	stale := filepath.Join(filepath.Dir(c.path(key("0"))), tempPrefix+"stale")
	fresh := filepath.Join(filepath.Dir(c.path(key("0"))), tempPrefix+"fresh")
	os.WriteFile(stale, []byte("x"), 0o666)
	os.WriteFile(fresh, []byte("x"), 0o666)
	os.Chtimes(stale, old, old)
	removed, err := c.Trim()
	if err != nil {
		t.Fatal(err)
	}
	if removed != 11 {
		t.Errorf("removed %d entries, want 11 (20 down to 9, 90%% of 10)", removed)
	}
	for i := 0; i < 20; i++ {
		_, ok := c.Get(key(fmt.Sprint(i)))
		if want := i == 0 || i >= 12; ok != want {
			t.Errorf("entry %d kept %v, want %v", i, ok, want)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Error("an hour-old temporary was kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("a temporary another process may be writing was removed")
	}
	if removed, err := c.Trim(); err != nil || removed != 0 {
		t.Errorf("second Trim: removed %d, %v", removed, err)
	}
	if _, err := Open(t.TempDir(), 0); err == nil {
		t.Error("a bound of 0 was accepted")
	}
}
