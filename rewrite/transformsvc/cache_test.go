package transformsvc

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/internal/filecache"
	"github.com/heapledger/heapledger/internal/testjars"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/passes"
)

type testClass struct {
	name string
	data []byte
}

// realClasses returns the first n classes of a Debian jar, by internal name.
func realClasses(t *testing.T, jar string, n int) []testClass {
	t.Helper()
	var out []testClass
	testjars.Each(t, jar, func(entry string, data []byte) {
		if len(out) < n && strings.HasSuffix(entry, ".class") && !testjars.IsModuleInfo(entry) {
			out = append(out, testClass{strings.TrimSuffix(entry, ".class"), data})
		}
	})
	return out
}

// countServer is the service as `heapledger serve --accounts PATTERNS` builds it, with store
// as its cache (nil for none).
func countServer(t *testing.T, store *filecache.Cache, patterns string) *Server {
	t.Helper()
	set, err := accounts.Parse(patterns)
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(set)
	pass, err := passes.Count(passes.CountOptions{Accounts: set, Table: table})
	if err != nil {
		t.Fatal(err)
	}
	return &Server{Pass: pass, Table: table, Workers: 2, Cache: store, CacheSalt: "test binary\n--accounts=" + patterns}
}

// serveInTurn sends the classes one after another, each after the answer to the one before,
// so that the site IDs follow the order given, and returns the answers once the service ended
// (and so finished storing what it stores).
func serveInTurn(t *testing.T, s *Server, classes []testClass) []*Response {
	t.Helper()
	return serveInTurnWith(t, s, classes, "")
}

// serveInTurnWith is serveInTurn with every request carrying profile (--adapt).
func serveInTurnWith(t *testing.T, s *Server, classes []testClass, profile string) []*Response {
	t.Helper()
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.Serve(reqR, respW)
		respW.Close()
		done <- err
	}()
	if _, err := ReadResponse(respR); err != nil {
		t.Fatal(err)
	}
	var out []*Response
	for i, c := range classes {
		if err := WriteRequest(reqW, &Request{ID: uint32(i + 1), Name: c.name, Loader: "app", Profile: profile, Class: c.data}); err != nil {
			t.Fatal(err)
		}
		resp, err := ReadResponse(respR)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status == StatusFailed {
			t.Fatalf("%s: %s", c.name, resp.Messages)
		}
		out = append(out, resp)
	}
	reqW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return out
}

// sameAnswers fails unless got and want say the same of every class: status, bytes, the site
// lines that name the class's IDs, and the messages.
func sameAnswers(t *testing.T, what string, classes []testClass, got, want []*Response) {
	t.Helper()
	for i := range want {
		g, w := got[i], want[i]
		if g.Status != w.Status || !bytes.Equal(g.Class, w.Class) || g.Table != w.Table || g.Messages != w.Messages {
			t.Fatalf("%s: %s: answer differs from a fresh rewrite's:\nstatus %d/%d, %d/%d bytes, equal %v\ntable:\n%s\nwant:\n%s",
				what, classes[i].name, g.Status, w.Status, len(g.Class), len(w.Class), bytes.Equal(g.Class, w.Class), g.Table, w.Table)
		}
	}
}

func emptyStore(t *testing.T) *filecache.Cache {
	t.Helper()
	store, err := filecache.Open(t.TempDir(), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return store
}

func countCached(rs []*Response) (n int) {
	for _, r := range rs {
		if r.Cached {
			n++
		}
	}
	return n
}

// A class answered from the cache is byte for byte the class a fresh rewrite gives at that
// point of the run, with the same site IDs and site names, although the classes come in
// another order than when they were stored (so every ID differs from the stored one). Other
// options do not hit the entries, and damaged entries are rewritten and replaced.
func TestCacheReplaysWithThisRunsIDs(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 160)
	reversed := slices.Clone(classes)
	slices.Reverse(reversed)
	dir := t.TempDir()
	store, err := filecache.Open(dir, 1<<30)
	if err != nil {
		t.Fatal(err)
	}

	first := serveInTurn(t, countServer(t, store, "*"), classes)
	if n := countCached(first); n != 0 {
		t.Fatalf("first run: %d answers from an empty cache", n)
	}
	changed := 0
	for _, r := range first {
		if r.Status == StatusChanged {
			changed++
		}
	}
	if changed < 50 || changed == len(classes) {
		t.Fatalf("want changed and unchanged classes among the test's: %d of %d changed", changed, len(classes))
	}
	// The fresh rewrites come from a server with a cache of its own, empty: it reserves the
	// agent's first lease as every server with a cache does, so IDs line up.
	want := serveInTurn(t, countServer(t, emptyStore(t), "*"), classes)
	sameAnswers(t, "first run, storing", classes, first, want)

	again := serveInTurn(t, countServer(t, store, "*"), reversed)
	if n := countCached(again); n != len(classes) {
		t.Fatalf("second run: %d of %d answers from the cache", n, len(classes))
	}
	want = serveInTurn(t, countServer(t, emptyStore(t), "*"), reversed)
	sameAnswers(t, "second run, other order", reversed, again, want)

	other := serveInTurn(t, countServer(t, store, "org.eclipse.*"), classes)
	if n := countCached(other); n != 0 {
		t.Fatalf("other accounts: %d answers from entries of '*'", n)
	}

	entries, _ := filepath.Glob(filepath.Join(dir, "*", "*"))
	for _, e := range entries {
		data, err := os.ReadFile(e)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 0x10
		if err := os.WriteFile(e, data, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	damaged := serveInTurn(t, countServer(t, store, "*"), classes)
	if n := countCached(damaged); n != 0 {
		t.Fatalf("damaged entries: %d answers from them", n)
	}
	sameAnswers(t, "damaged entries", classes, damaged, first)
	replaced := serveInTurn(t, countServer(t, store, "*"), classes)
	if n := countCached(replaced); n != len(classes) {
		t.Fatalf("replaced entries: %d of %d answers from the cache", n, len(classes))
	}
	sameAnswers(t, "replaced entries", classes, replaced, first)
}

// An entry that passes its checksum but could not be replayed (written by a bug) is refused.
func TestDecodeCachedClassRefusesBadEntries(t *testing.T) {
	good := &cachedClass{changed: true, reserved: 2, data: []byte{0xCA, 0xFE, 3, 0, 0, 0, 7},
		sites: []cachedSite{{at: 3, site: accounts.Site{Kind: "object", Type: "T", Method: "a.B.m()V", Offset: 4, Line: 9}}}}
	if c, err := decodeCachedClass(good.encode()); err != nil || c.sites[0] != good.sites[0] || !bytes.Equal(c.data, good.data) {
		t.Fatalf("round trip: %+v, %v", c, err)
	}
	bad := map[string]*cachedClass{
		"ID outside the class":  {changed: true, reserved: 1, data: []byte{3, 0, 0}, sites: []cachedSite{{at: 1}}},
		"ID not in an integer":  {changed: true, reserved: 1, data: []byte{1, 0, 0, 0, 0}, sites: []cachedSite{{at: 1}}},
		"more sites than IDs":   {changed: true, reserved: 0, data: []byte{3, 0, 0, 0, 0}, sites: []cachedSite{{at: 1}}},
		"sites of an unchanged": {changed: false, reserved: 1, sites: []cachedSite{{at: 1}}},
	}
	for name, c := range bad {
		if _, err := decodeCachedClass(c.encode()); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	enc := good.encode()
	for _, cut := range []int{1, 5, len(enc) - 1} {
		if _, err := decodeCachedClass(enc[:cut]); err == nil {
			t.Errorf("cut to %d bytes: accepted", cut)
		}
	}
	if _, err := decodeCachedClass(append(enc, 0)); err == nil {
		t.Error("a byte after the class: accepted")
	}
}

// Keys are CRC-32s and may collide: an entry under a class's key that was made from another
// class is a miss, and the class is rewritten, not given the other's code.
func TestCacheKeyCollisionIsAMiss(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 2)
	a, b := classes[0], classes[1]
	store := emptyStore(t)
	fresh := serveInTurn(t, countServer(t, store, "*"), classes)
	s := countServer(t, store, "*")
	ss := startSession(t, s)
	stored, ok := store.Get(cacheKey(s.salt, b.name, b.data))
	if !ok {
		t.Fatal("the first run stored no entry for " + b.name)
	}
	if err := store.Put(cacheKey(s.salt, a.name, a.data), stored); err != nil {
		t.Fatal(err)
	}
	got := ss.ask(a.name, "", a.data)
	ss.end()
	if got.Cached || got.Status != fresh[0].Status || !bytes.Equal(got.Class, fresh[0].Class) {
		t.Fatalf("%s under a colliding key: cached %v, status %d, %d bytes; want a fresh rewrite (%d bytes)", a.name, got.Cached, got.Status, len(got.Class), len(fresh[0].Class))
	}
}
