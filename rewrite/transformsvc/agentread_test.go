package transformsvc

import (
	"encoding/binary"
	"encoding/hex"
	"hash/crc32"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/internal/filecache"
	"github.com/heapledger/heapledger/internal/testjars"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/paths"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// session is a running server: its hello, and one request at a time.
type session struct {
	t     *testing.T
	hello *Response
	reqW  *io.PipeWriter
	respR *io.PipeReader
	done  chan error
	next  uint32
}

func startSession(t *testing.T, s *Server) *session {
	t.Helper()
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	ss := &session{t: t, reqW: reqW, respR: respR, done: make(chan error, 1)}
	go func() {
		err := s.Serve(reqR, respW)
		respW.Close()
		ss.done <- err
	}()
	hello, err := ReadResponse(respR)
	if err != nil || hello.Status != StatusHello {
		t.Fatalf("hello: %v %+v", err, hello)
	}
	ss.hello = hello
	return ss
}

func (ss *session) ask(name, profile string, class []byte) *Response {
	ss.t.Helper()
	ss.next++
	if err := WriteRequest(ss.reqW, &Request{ID: ss.next, Name: name, Loader: "app", Profile: profile, Class: class}); err != nil {
		ss.t.Fatal(err)
	}
	resp, err := ReadResponse(ss.respR)
	if err != nil {
		ss.t.Fatal(err)
	}
	return resp
}

func (ss *session) end() {
	ss.t.Helper()
	ss.reqW.Close()
	if err := <-ss.done; err != nil {
		ss.t.Fatal(err)
	}
}

// leaseOf reads the "lease FIRST COUNT" line of messages.
func leaseOf(t *testing.T, messages string) (first, count int) {
	t.Helper()
	for _, l := range strings.Split(messages, "\n") {
		f := strings.Split(l, "\t")
		if len(f) == 3 && f[0] == "lease" {
			first, err1 := strconv.Atoi(f[1])
			count, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("lease line %q", l)
			}
			return first, count
		}
	}
	t.Fatalf("no lease line in %q", messages)
	return 0, 0
}

// siteIDs returns the IDs the site lines of table name.
func siteIDs(table string) []int {
	var ids []int
	for _, l := range strings.Split(table, "\n") {
		if rest, ok := strings.CutPrefix(l, "site\t"); ok {
			id, _ := strconv.Atoi(strings.SplitN(rest, "\t", 2)[0])
			ids = append(ids, id)
		}
	}
	return ids
}

// The hello offers the cache as the agent needs it: the class's CRC-32 and length, its name's
// CRC-32 and the offered salt ID (as LocalCache.key builds them) find the entry the service
// stored, and the entry holds the class it was made from.
// Leases, the hello's and renewed ones, never share an ID with each other or with a class
// the service rewrites; the names the agent sends count as classes loaded.
func TestHelloOffersCacheAndLeases(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 20)
	store := emptyStore(t)
	ss := startSession(t, countServer(t, store, "*"))
	lines := strings.Split(strings.TrimSuffix(ss.hello.Messages, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "cache\t") {
		t.Fatalf("hello messages %q: want a cache line and a lease line", ss.hello.Messages)
	}
	f := strings.Split(lines[0], "\t")
	if len(f) != 3 || f[1] != store.Dir() {
		t.Fatalf("cache line %q: want the directory %s and a salt ID", lines[0], store.Dir())
	}
	id, err := hex.DecodeString(f[2])
	if err != nil || len(id) != 20 {
		t.Fatalf("salt ID %q: %v", f[2], err)
	}
	first, count := leaseOf(t, ss.hello.Messages)
	if count != LeaseIDs {
		t.Errorf("lease of %d IDs, want %d", count, LeaseIDs)
	}
	var used []int
	for _, c := range classes {
		resp := ss.ask(c.name, "", c.data)
		used = append(used, siteIDs(resp.Table)...)
	}
	renewed := ss.ask("", ControlLease, nil)
	first2, count2 := leaseOf(t, renewed.Messages)
	ss.ask("", ControlNames+"a/Loaded\nb/Too\n", nil)
	if resp := ss.ask("", "what", nil); resp.Status != StatusFailed {
		t.Errorf("an unknown control request: status %d", resp.Status)
	}
	ss.end()
	if len(used) == 0 {
		t.Fatal("the classes named no sites")
	}
	for _, id := range used {
		if id >= first && id < first+count || id >= first2 && id < first2+count2 {
			t.Errorf("site %d of a rewritten class lies in a lease [%d,%d) or [%d,%d)", id, first, first+count, first2, first2+count2)
		}
	}
	if first2 < first+count && first < first2+count2 {
		t.Errorf("leases [%d,%d) and [%d,%d) overlap", first, first+count, first2, first2+count2)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		found := 0
		for _, c := range classes {
			var k [32]byte
			binary.BigEndian.PutUint32(k[0:], crc32.ChecksumIEEE(c.data))
			binary.BigEndian.PutUint32(k[4:], uint32(len(c.data)))
			binary.BigEndian.PutUint32(k[8:], crc32.ChecksumIEEE([]byte(c.name)))
			copy(k[12:], id)
			if b, ok := store.Get(k); ok {
				if e, err := decodeCachedClass(b); err != nil || !e.matches(c.name, c.data) {
					t.Fatalf("%s: the entry under its key is not its own (%v)", c.name, err)
				}
				found++
			}
		}
		if found == len(classes) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d entries found under the keys the offered salt ID gives", found, len(classes))
		}
	}
}

// The names the agent sends count among the classes the program loaded. An agent offered
// the cache that never sends them (killed before its exit hooks) leaves the classes unknown;
// without an offer they are always known.
func TestControlNamesAreClassesLoaded(t *testing.T) {
	s := countServer(t, emptyStore(t), "*")
	ss := startSession(t, s)
	ss.ask("", ControlNames+"a/Loaded\nb/Too\n", nil)
	ss.end()
	if got := s.Classes(); !slices.Equal(got, []string{"a/Loaded", "b/Too"}) || !s.ClassesKnown() {
		t.Errorf("Classes() = %v, known %v", got, s.ClassesKnown())
	}
	killed := countServer(t, emptyStore(t), "*")
	startSession(t, killed).end()
	if killed.ClassesKnown() {
		t.Error("offered the cache and told no names, the classes are said to be known")
	}
	plain := countServer(t, nil, "*")
	startSession(t, plain).end()
	if !plain.ClassesKnown() {
		t.Error("without a cache offered, the classes are said to be unknown")
	}
}

// Without a cache, or with --adapt (whose re-instrumentation needs every class's first
// sites, which only the service keeps), nothing is offered and no lease is given.
func TestNoOfferWithoutCacheOrWithAdapt(t *testing.T) {
	plain := startSession(t, countServer(t, nil, "*"))
	if plain.hello.Messages != "" {
		t.Errorf("without a cache, the hello offers %q", plain.hello.Messages)
	}
	if resp := plain.ask("", ControlLease, nil); resp.Status != StatusFailed {
		t.Errorf("a lease without a cache: status %d, messages %q", resp.Status, resp.Messages)
	}
	plain.end()
	s := countServer(t, emptyStore(t), "*")
	s.Adapt = func(*accounts.Table, string) (transform.Class, *paths.Profile, error) { return nil, nil, nil }
	adapt := startSession(t, s)
	if adapt.hello.Messages != "" {
		t.Errorf("with --adapt, the hello offers %q", adapt.hello.Messages)
	}
	adapt.end()
}

// The system loader's classes are rewritten reading the class path: with accounts, methods
// whose callees the jar shows to be neutral lose their switch, so many classes come out smaller
// than another loader's copy of the same bytes (some grow a little: a neutral method's own sites
// take Acct.own, a constant more). The hello offers their keys' salt ID beside the
// others', and the two never share an entry.
func TestClassPathLoaderReadsTheJar(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 60)
	s := classPathServer(t, emptyStore(t))
	ss := startSession(t, s)
	f := strings.Split(strings.SplitN(ss.hello.Messages, "\n", 2)[0], "\t")
	if len(f) != 4 || f[0] != "cache" || f[2] == f[3] {
		t.Fatalf("cache line %q: want the directory and two salt IDs", f)
	}
	sys, other, smaller := 0, 0, 0
	for _, c := range classes {
		a, b := ss.askClass(c, "sys"), ss.askClass(c, "other@1")
		if a.Cached || b.Cached {
			t.Errorf("%s: answered from the cache on its first request by each loader", c.name)
		}
		sys, other = sys+answerSize(a, c), other+answerSize(b, c)
		if answerSize(a, c) < answerSize(b, c) {
			smaller++
		}
	}
	ss.end()
	if smaller == 0 || sys >= other {
		t.Fatalf("no class came out smaller from the class path (%d bytes, %d without)", sys, other)
	}
	t.Logf("%d of %d classes smaller from the class path: %d bytes against %d", smaller, len(classes), sys, other)
}

// A class the system loader defines with other bytes than its jar's was changed by another
// agent's transformer: the jar's copy, which the count pass read, is not the class that runs.
// It is rewritten without the class path, and so is every class after it, each once said.
func TestClassChangedOnTheWayDropsTheClassPath(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 60)
	// Which classes the class path makes smaller, and their size without it.
	ref := startSession(t, classPathServer(t, nil))
	var shown []testClass
	without := map[string]int{}
	for _, c := range classes {
		a, b := ref.askClass(c, "sys"), ref.askClass(c, "other@1")
		if answerSize(a, c) < answerSize(b, c) {
			shown = append(shown, c)
			without[c.name] = answerSize(b, c)
		}
	}
	ref.end()
	if len(shown) < 2 {
		t.Fatalf("%d classes come out smaller from the class path; the test needs 2", len(shown))
	}
	for _, store := range []*filecache.Cache{nil, emptyStore(t)} {
		s := classPathServer(t, store)
		var said strings.Builder
		s.Log = &said
		ss := startSession(t, s)
		changed := testClass{shown[0].name, append([]byte(nil), shown[0].data...)}
		changed.data[5]++ // the minor version: still a valid class, other bytes than the jar's
		if r := ss.askClass(changed, "sys"); answerSize(r, changed) != without[changed.name] {
			t.Errorf("cache %v: the changed class came out at %d bytes, %d without the class path", store != nil, answerSize(r, changed), without[changed.name])
		}
		for _, c := range shown[1:] {
			if r := ss.askClass(c, "sys"); answerSize(r, c) != without[c.name] {
				t.Errorf("cache %v: %s after the changed class: %d bytes, %d without the class path", store != nil, c.name, answerSize(r, c), without[c.name])
			}
		}
		ss.end()
		if n := strings.Count(said.String(), "other bytes than its class path jar's"); n != 1 || !strings.Contains(said.String(), strings.ReplaceAll(changed.name, "/", ".")) {
			t.Errorf("cache %v: said %d times, want once naming the class:\n%s", store != nil, n, said.String())
		}
	}
}

// classPathServer is a count server with accounts on ecj's packages whose system loader,
// "sys", finds ecj.jar on its class path.
func classPathServer(t *testing.T, store *filecache.Cache) *Server {
	t.Helper()
	s := countServer(t, store, "org.eclipse.jdt.internal.compiler.*")
	cp := jar.NewClassPath(testjars.Path(t, "ecj.jar"), ":")
	t.Cleanup(func() { cp.Close() })
	pass, err := passes.Count(passes.CountOptions{Accounts: mustParse(t, "org.eclipse.jdt.internal.compiler.*"), Table: s.Table})
	if err != nil {
		t.Fatal(err)
	}
	pass.SetInputs(cp.Lookup)
	s.ClassPath, s.ClassPathLoader, s.ClassPathPass = cp, "sys", pass
	return s
}

// askClass sends class c as loader's and returns the answer, which must not be a failure.
func (ss *session) askClass(c testClass, loader string) *Response {
	ss.t.Helper()
	ss.next++
	if err := WriteRequest(ss.reqW, &Request{ID: ss.next, Name: c.name, Loader: loader, Class: c.data}); err != nil {
		ss.t.Fatal(err)
	}
	resp, err := ReadResponse(ss.respR)
	if err != nil || resp.Status == StatusFailed {
		ss.t.Fatalf("%s: %v %q", c.name, err, resp.Messages)
	}
	return resp
}

// answerSize is the size of the class an answer gives: the rewritten one, or c unchanged.
func answerSize(r *Response, c testClass) int {
	if r.Status == StatusChanged {
		return len(r.Class)
	}
	return len(c.data)
}

func mustParse(t *testing.T, patterns string) *accounts.Set {
	t.Helper()
	set, err := accounts.Parse(patterns)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
