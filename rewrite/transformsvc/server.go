package transformsvc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heapledger/heapledger/internal/filecache"
	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/jar"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// The Object.<init> hook's sites: kind, method and the config key of the reserved range.
const (
	HookSiteKind    = "init"
	HookSiteMethod  = "<Object.<init>>"
	HookSitesConfig = "object.init.sites"
)

// Server rewrites the classes of one JVM. It holds the JVM's single site table, so site IDs are
// unique across every class and every class loader the JVM has.
type Server struct {
	Pass  transform.Class
	Table *accounts.Table
	// Workers bounds the classes rewritten at once; 0 means the number of CPUs.
	Workers int
	// HookSites, when positive, reserves that many consecutive site IDs at start for the
	// runtime's java.lang.Object.<init> hook (the agent's --object-init), one per class it
	// sees. The hook learns the range from the hello's line `config object.init.sites FIRST:N`
	// and names each site itself (Ledger.defineTable) when it first meets a class, since only
	// the running JVM knows which classes it constructs; the service never sends the
	// placeholders, and the IDs are never given to a rewritten site.
	HookSites int

	// Cache, when set, keeps transformed classes across runs (docs/agent.md, "The cache of
	// transformed classes"): a class met before under the same salt is answered from it, with
	// this run's site IDs, instead of being rewritten.
	Cache *filecache.Cache
	// CacheSalt is what decides a rewrite besides the class and the table's hello (which Serve
	// adds): the binary's identity and the pass's options.
	CacheSalt string
	// Log receives the service's own warnings (a cache it cannot write); nil discards them.
	Log io.Writer
	// AfterLast, when set, runs once the input has ended cleanly and the last request is answered,
	// before the cache entries still queued are written: `heapledger serve` closes its output
	// and lets go of the JVM's standard error there, so the agent's reader and a pipeline
	// reading that stream end with the JVM, not with the service's writing.
	AfterLast func()

	// Adapt, when set, serves the requests that carry an edge profile (the agent's --adapt,
	// adapt.go): it makes the pass that re-instruments a class from its profile.
	Adapt AdaptFunc

	// ClassPath, when set, is the JVM's class path as its application class loader finds it
	// (the agent sends it at start): the classes that loader defines, named ClassPathLoader in
	// requests, are rewritten by ClassPathPass, which reads the other classes of the class path
	// as offline rewriting reads its input (docs/agent.md, "The class path as the input").
	// Other loaders' classes go to Pass, which reads none.
	ClassPath       *jar.ClassPath
	ClassPathLoader string
	ClassPathPass   transform.Class

	hookFirst, hookLast int      // the reserved range, inclusive; 0, 0 for none
	versions            versions // the sites of each class rewritten, with Adapt (adapt.go)

	salt        saltID        // of CacheSalt and the hello's table lines
	pathSalt    *saltID       // of those and the class path's identity, for ClassPathPass's classes; nil without
	pending     *writeBehind  // entries to store, when Cache is set
	writeWait   time.Duration // idleBeforeWrite, unless a test sets it
	cacheWarned atomic.Bool
	pathDropped atomic.Bool // changedOnTheWay: ClassPathPass is no longer used

	mu   sync.Mutex // guards sent, and orders table lines before the responses that need them
	sent int        // the sites named so far that were sent, or left out (Table.NamedSince)

	namesMu sync.Mutex
	names   []string // the classes asked for, rewritten or answered from the cache (Classes)
	// offered: the hello offered the agent the cache; namesTold: the agent then said at exit
	// which classes it answered itself (ClassesKnown).
	offered   bool
	namesTold atomic.Bool

	toldRewritten atomic.Bool // the agent was warned about a class rewritten before it loaded
}

// Serve answers requests from r on w until r ends, then waits for the requests in flight.
// A clean end of r (the JVM exited, closing the pipe) returns nil.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	if s.Pass == nil || s.Table == nil {
		return errors.New("transform service needs a pass and its table")
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var wmu sync.Mutex
	var werr error
	bw := bufio.NewWriterSize(w, 64<<10)
	send := func(resp *Response) {
		wmu.Lock()
		defer wmu.Unlock()
		if werr != nil {
			return
		}
		if werr = WriteResponse(bw, resp); werr == nil {
			werr = bw.Flush()
		}
	}
	if s.HookSites > 0 {
		for i := 0; i < s.HookSites; i++ {
			id := s.Table.AddSite(accounts.Site{Kind: HookSiteKind, Type: "(reserved)", Method: HookSiteMethod, Offset: -1, Line: -1})
			if i == 0 {
				s.hookFirst = id
			} else if id != s.hookLast+1 {
				return fmt.Errorf("reserving sites for the Object.<init> hook: got site %d after %d", id, s.hookLast)
			}
			s.hookLast = id
		}
		if s.Table.Config == nil {
			s.Table.Config = map[string]string{}
		}
		s.Table.Config[HookSitesConfig] = fmt.Sprintf("%d:%d", s.hookFirst, s.HookSites)
	}
	// The hello carries what the table holds so far (the hook's placeholders aside); the
	// responses carry what is named after it.
	_, s.sent = s.Table.NamedSince(0)
	var hello bytes.Buffer
	if err := s.Table.Write(&hello); err != nil {
		return err
	}
	_, accountLines, _ := strings.Cut(hello.String(), "\n") // drop the version line
	if s.hookFirst > 0 {
		accountLines = s.withoutHookSites(accountLines)
	}
	// The hello's lines number the accounts and carry the config (the hook's range too), which
	// the rewritten code depends on.
	salt := s.CacheSalt + "\n" + accountLines
	s.salt = newSaltID([]byte(salt))
	if s.ClassPath != nil && s.ClassPathPass != nil {
		id := newSaltID([]byte(salt + "\nclass path\n" + s.ClassPath.Identity()))
		s.pathSalt = &id
	}
	offer, err := s.offerCache()
	if err != nil {
		return err
	}
	s.offered = offer != ""
	send(&Response{ID: 0, Status: StatusHello, Table: accountLines, Messages: offer})
	if s.Cache != nil {
		if s.writeWait == 0 {
			s.writeWait = idleBeforeWrite
		}
		s.pending = newWriteBehind(s.Cache, s.writeWait, func(err error) { s.cacheWarning(err.Error()) })
	}

	br := bufio.NewReaderSize(r, 64<<10)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	var rerr error
	for {
		req, err := ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		if s.pending != nil {
			s.pending.received()
		}
		go func() {
			defer func() { <-sem; wg.Done() }()
			send(s.handle(req))
		}()
	}
	wg.Wait()
	// A broken input is not the JVM's end: what the caller says of it must still reach the
	// JVM's standard error, which AfterLast lets go of.
	if rerr == nil && s.AfterLast != nil {
		s.AfterLast()
	}
	if s.pending != nil {
		s.pending.close()
	}
	if rerr != nil {
		return fmt.Errorf("reading requests: %w", rerr)
	}
	if werr != nil {
		return fmt.Errorf("writing responses: %w", werr)
	}
	return nil
}

// ClassesKnown says whether Classes holds every class the program loaded: not when the agent
// was offered the cache and never said which classes it answered itself (a JVM killed before
// its exit hooks ran). Call it after Serve returned.
func (s *Server) ClassesKnown() bool {
	return !s.offered || s.namesTold.Load()
}

// Classes returns the internal names of the classes the service was asked for, sorted: those
// the pass rewrote, those answered from the cache, which the pass never saw, and those the
// agent answered itself and named at exit (ControlNames).
func (s *Server) Classes() []string {
	s.namesMu.Lock()
	defer s.namesMu.Unlock()
	out := slices.Clone(s.names)
	slices.Sort(out)
	return out
}

// handle rewrites one class, or answers a control request (an empty class name). A panic in
// a pass is a bug, but it must cost one class, not the whole JVM's instrumentation: it becomes
// a failure answer.
func (s *Server) handle(req *Request) (resp *Response) {
	if req.Name == "" {
		return s.control(req)
	}
	resp = &Response{ID: req.ID}
	who := req.Name
	if req.Loader != "" {
		who += " (loader " + req.Loader + ")"
	}
	defer func() {
		if p := recover(); p != nil {
			resp = &Response{ID: req.ID, Status: StatusFailed, Messages: fmt.Sprintf("%s: internal error: %v", who, p)}
		}
	}()
	s.namesMu.Lock()
	s.names = append(s.names, req.Name)
	s.namesMu.Unlock()
	var msgs strings.Builder
	var res transform.Result
	var err error
	if req.Profile != "" {
		var said string
		res, said, err = s.adapt(req)
		msgs.WriteString(said)
	} else {
		res, resp.Cached, err = s.rewrite(req)
		if err == nil && s.Adapt != nil {
			s.versions.remember(req, res, s.Table)
		}
	}
	if err != nil {
		resp.Status = StatusFailed
		resp.Messages = fmt.Sprintf("%s: %v", who, err)
		return resp
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(&msgs, "warning: %s: %s\n", who, oneLine(w))
	}
	for _, sk := range res.Skipped {
		m := sk.Method
		if m == "" {
			m = "(class)"
		}
		what := "skipped"
		if sk.Code.Fallback() {
			what = "fallback" // rewritten, as the agent does not count among skipped methods
		}
		fmt.Fprintf(&msgs, "%s: %s.%s: %s\n", what, req.Name, oneLine(m), oneLine(sk.Reason()))
		// Said once, unasked: counted by the class's own code, with IDs of the table of the
		// rewrite that made it. Those lie apart from this run's (docs/formats.md, "Site IDs"),
		// but the runtime names them only if it finds that table.
		if sk.Method == "" && sk.Code == transform.SkipRewritten && s.toldRewritten.CompareAndSwap(false, true) {
			fmt.Fprintf(&msgs, "warning: %s: %s before it loaded (heapledger rewrite): it and any others such are left as they are and count with the site IDs of their own table, which the runtime reads from the class path (or -Dheapledger.table); sites of a table it does not find are reported as site#ID\n", who, transform.RewrittenBefore)
		}
	}
	resp.Messages = msgs.String()
	if res.Changed() {
		resp.Status = StatusChanged
		resp.Class = res.Data
	}
	resp.Table = s.newSites()
	return resp
}

// rewrite answers from the cache when it can, else runs the pass and queues the result to be
// stored. A damaged entry is a miss, and the stored result replaces it. A failure is not
// stored: it is rare, and its message names this run's loader.
func (s *Server) rewrite(req *Request) (res transform.Result, cached bool, err error) {
	fromPath := s.fromClassPath(req)
	if s.Cache == nil {
		if fromPath && s.changedOnTheWay(req) {
			fromPath = false
		}
		pass := s.Pass
		if fromPath {
			pass = s.ClassPathPass
		}
		res, err = pass.TransformClass(req.Name, req.Class)
		return res, false, err
	}
	// An entry made by ClassPathPass was made from the jar's very bytes (the check below comes
	// first), and an entry is replayed only for the class it was made from: a hit needs no
	// check against the jar.
	if res, ok, err := s.cached(req, fromPath); ok {
		return res, true, err
	}
	if fromPath && s.changedOnTheWay(req) {
		fromPath = false
		if res, ok, err := s.cached(req, false); ok {
			return res, true, err
		}
	}
	pass, salt := s.Pass, s.salt
	if fromPath {
		pass, salt = s.ClassPathPass, *s.pathSalt
	}
	key := cacheKey(salt, req.Name, req.Class)
	res, err = pass.TransformClass(req.Name, req.Class)
	if err != nil {
		return res, false, err
	}
	c, cerr := newCachedClass(req.Name, req.Class, res, s.Table)
	if cerr != nil {
		s.cacheWarning(fmt.Sprintf("%s is not cached: %v", req.Name, cerr))
		return res, false, nil
	}
	s.pending.add(key, c.encode())
	return res, false, nil
}

// cached answers req from the cache entry of the pass it would be rewritten by (ClassPathPass
// when fromPath): ok when there is one, made from this very class.
func (s *Server) cached(req *Request, fromPath bool) (res transform.Result, ok bool, err error) {
	salt := s.salt
	if fromPath {
		salt = *s.pathSalt
	}
	b, hit := s.Cache.Get(cacheKey(salt, req.Name, req.Class))
	if !hit {
		return res, false, nil
	}
	c, derr := decodeCachedClass(b)
	if derr != nil || !c.matches(req.Name, req.Class) {
		return res, false, nil
	}
	res, err = c.replay(s.Table)
	return res, true, err
}

// fromClassPath reports whether ClassPathPass rewrites the class of req: one the class path's
// loader defines, while no class has come with other bytes than its jar's.
func (s *Server) fromClassPath(req *Request) bool {
	return s.pathSalt != nil && req.Loader == s.ClassPathLoader && !s.pathDropped.Load()
}

// changedOnTheWay reports whether req's class is on the class path with other bytes than
// those the JVM defines it with: another agent's transformer changed it before this one (one
// the agent could not see on the command line, or one attached later). The count pass read
// the jar's copy of it, for this class and for every class that calls it, so from here on the
// class path is not read for any class (ClassPathPass is no longer used); classes rewritten
// before keep what it made of them, and this is said once.
func (s *Server) changedOnTheWay(req *Request) bool {
	found, same := s.ClassPath.Holds(req.Name, req.Class)
	if !found || same {
		return false
	}
	if s.pathDropped.CompareAndSwap(false, true) && s.Log != nil {
		fmt.Fprintf(s.Log, "heapledger serve: %s is defined with other bytes than its class path jar's (another agent changed it?): "+
			"the class path is no longer read for the classes loaded from here on, and classes rewritten before may count differently from offline rewriting\n", strings.ReplaceAll(req.Name, "/", "."))
	}
	return true
}

// cacheWarning says the first thing that went wrong with the cache: the classes are rewritten
// all the same, so one line is enough, and thousands would drown the program's output.
func (s *Server) cacheWarning(msg string) {
	if s.Log != nil && s.cacheWarned.CompareAndSwap(false, true) {
		fmt.Fprintf(s.Log, "heapledger serve: transform cache %s: %s (further cache errors are not shown)\n", s.Cache.Dir(), msg)
	}
}

// withoutHookSites drops the reserved placeholders from table lines: the hook names the sites
// it uses, and thousands of unused placeholders would only grow every snapshot's table.
func (s *Server) withoutHookSites(lines string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(lines, "\n") {
		if rest, ok := strings.CutPrefix(l, "site\t"); ok {
			idText, _, _ := strings.Cut(rest, "\t")
			if id, err := strconv.Atoi(idText); err == nil && id >= s.hookFirst && id <= s.hookLast {
				continue
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// newSites returns the table lines of the sites named since the last call. A response may carry
// sites of another class still being rewritten; that only names them early. Every site of this
// class is named before this call, so it is sent with this response or an earlier one, never
// after the class is defined. IDs a class reserved and did not use are never named, so the IDs
// sent need not follow each other.
func (s *Server) newSites() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	ids, next := s.Table.NamedSince(s.sent)
	for _, id := range ids {
		site, _ := s.Table.Site(id)
		fmt.Fprintf(&b, "site\t%d\t%s\t%s\t%s\t%d\t%d\n", id, site.Kind, oneLine(site.Type), oneLine(site.Method), site.Offset, site.Line)
	}
	s.sent = next
	return b.String()
}

var flatten = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// oneLine keeps a field from breaking the line-and-tab formats.
func oneLine(s string) string { return flatten.Replace(s) }
