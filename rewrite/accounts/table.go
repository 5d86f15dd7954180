package accounts

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// TableResource is where a rewritten jar carries its table, so the runtime finds the names of
// accounts and sites on the class path with no configuration.
const TableResource = "META-INF/heapledger/table.tsv"

// Site kinds, as written in tables and read by reports.
const (
	KindObject       = "object"        // new + <init>
	KindArray        = "array"         // newarray, anewarray
	KindMulti        = "multi"         // multianewarray
	KindLambda       = "lambda"        // capturing invokedynamic via LambdaMetafactory
	KindConcat       = "concat"        // invokedynamic via StringConcatFactory
	KindClone        = "clone"         // Object.clone() of an object
	KindCloneArray   = "clone-array"   // clone() of an array
	KindReflect      = "reflect"       // Constructor.newInstance
	KindReflectArray = "reflect-array" // Array.newInstance
	// KindPath is a path counter (--counters paths): its TYPE lists the sites one increment
	// stands for, each as ID offset from the counter's own ID and multiplicity ("-3*1 -1*-1"),
	// which the runtime turns back into those sites' rows (docs/formats.md).
	KindPath = "path"
	// KindEdge is a chord counter of a profiling run (--counters edges): a path counter whose
	// TYPE starts with its edge, its place among the method's chords and the hash of the
	// method's code ("FROM>TO I/N HASH"), then lists its sites as KindPath does. Snapshots
	// carry the chords' counts per method (docs/formats.md, "edges" lines).
	KindEdge = "edge"
	// KindMethod names a method of the calling-context tree (the count pass's --context cct),
	// not an allocation site: it takes an ID from the same sequence, so that jars rewritten
	// apart cannot give two methods one ID either (docs/formats.md, "Site IDs"). TYPE is the
	// method's class, METHOD the method, OFFSET 0 and LINE its first line.
	KindMethod = "method"
)

// Site describes one allocation site compiled into rewritten code.
type Site struct {
	Kind   string
	Type   string // Java type name of what is allocated: "java.lang.String", "int[][]"
	Method string // "com.acme.A.run(I)V"
	Offset int    // bytecode offset in the original method
	Line   int    // source line, -1 when the class has no line numbers
}

// Table numbers accounts and sites. It is safe for concurrent use: classes are rewritten in
// parallel, and each takes the IDs of its sites in one go (Reserve), in its turn when the
// output must not depend on scheduling (transform.Turn).
type Table struct {
	// Config holds rewrite-time settings for the runtime (e.g. "liveness" → "sample:64"),
	// written as "config" lines at the top of the table; launch-time settings override them.
	Config map[string]string

	mu       sync.Mutex
	accounts []string // index = ID; [0] = UnaccountedName
	sites    map[int]Site
	next     int
	named    []int // the IDs in the order they were named, for NamedSince
}

// Site IDs of separately rewritten jars must not clash: the runtime reads every table on the
// class path, and an ID two tables give different sites would name the counts of one by the
// other. A fresh table of an offline rewrite is therefore placed (Place) at a base chosen from
// its input, anywhere in [FirstPlacedID, FirstPlacedID+placedSpan), and numbers its sites
// upwards from there; the agent's table, which is one per JVM, keeps the IDs from 1 up, below
// every placed base. Two separate rewrites then clash only when their ranges overlap, about
// (n1+n2)/2^31 for tables of n1 and n2 sites, and the runtime detects that and names neither
// site rather than a wrong one (docs/formats.md, "Site IDs").
const (
	FirstPlacedID = 1 << 24
	placedSpan    = 1<<31 - 2<<24 // the highest base leaves 2^24 IDs below MaxInt32
	placeAlign    = 64            // whole pages of the runtime's per-thread counters (Acct)
)

// NewTable starts a table for the accounts of s (nil for none); site IDs start at 1 unless
// the table is placed.
func NewTable(s *Set) *Table {
	t := &Table{accounts: []string{UnaccountedName}, sites: map[int]Site{}, next: 1}
	if s != nil {
		for _, a := range s.Accounts {
			t.accounts = append(t.accounts, a.Name)
		}
	}
	return t
}

// Place makes a table without sites number them from a base that fingerprint, a digest of
// what is rewritten, chooses: the same input gets the same IDs, and different inputs rewritten
// apart get ranges that are unlikely to meet. A table that has sites (it continues an earlier
// rewrite) keeps numbering after them, which cannot clash with that rewrite.
func (t *Table) Place(fingerprint []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.sites) > 0 {
		return
	}
	h := sha256.Sum256(fingerprint)
	slot := binary.BigEndian.Uint64(h[:8]) % (placedSpan / placeAlign)
	t.next = FirstPlacedID + int(slot)*placeAlign
}

// NextID returns the ID the next site will get.
func (t *Table) NextID() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.next
}

// AddSite assigns the next site ID.
func (t *Table) AddSite(s Site) int {
	id, _ := t.AddSites([]Site{s})
	return id
}

// AddSites assigns consecutive IDs to sites and returns the first.
func (t *Table) AddSites(sites []Site) (int, error) {
	first, err := t.Reserve(len(sites))
	if err != nil {
		return 0, err
	}
	for i, s := range sites {
		t.Name(first+i, s)
	}
	return first, nil
}

// Reserve takes n consecutive IDs and returns the first; Name says what each one used is (an
// ID reserved and never named is in no table, and no code counts at it). It fails when the IDs
// would pass the largest int32, the type rewritten code passes them as.
func (t *Table) Reserve(n int) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	first := t.next
	if first+n-1 > math.MaxInt32 {
		return 0, fmt.Errorf("site IDs would pass %d (%d sites from %d)", math.MaxInt32, n, first)
	}
	t.next += n
	return first, nil
}

// Name records the site of an ID taken by Reserve.
func (t *Table) Name(id int, s Site) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, again := t.sites[id]; !again {
		t.named = append(t.named, id)
	}
	t.sites[id] = s
}

// NamedSince returns the IDs named after the first k namings (0 for all, in the order they
// were named: IDs reserved together may be named apart, by classes still being rewritten) and
// the k to ask with next time. The agent's service sends each site's name once with it.
func (t *Table) NamedSince(k int) ([]int, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k >= len(t.named) {
		return nil, k
	}
	return slices.Clone(t.named[k:]), len(t.named)
}

// Accounts returns the account names, indexed by ID (0 is UnaccountedName).
func (t *Table) Accounts() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.accounts)
}

// Sites returns the number of allocation sites (methods of kind KindMethod are not).
func (t *Table) Sites() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sites) - t.methodsLocked()
}

// Methods returns the number of methods the table names for calling contexts (KindMethod).
func (t *Table) Methods() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.methodsLocked()
}

func (t *Table) methodsLocked() int {
	n := 0
	for _, s := range t.sites {
		if s.Kind == KindMethod {
			n++
		}
	}
	return n
}

// SiteIDs returns the IDs of the sites, in order.
func (t *Table) SiteIDs() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]int, 0, len(t.sites))
	for id := range t.sites {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	return ids
}

// Site returns a site by ID.
func (t *Table) Site(id int) (Site, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.sites[id]
	return s, ok
}

// Write writes the table in its text format (docs/formats.md).
func (t *Table) Write(w io.Writer) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# heapledger table 1")
	keys := make([]string, 0, len(t.Config))
	for k := range t.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(bw, "config\t%s\t%s\n", clean(k), clean(t.Config[k]))
	}
	for id, name := range t.accounts {
		fmt.Fprintf(bw, "account\t%d\t%s\n", id, clean(name))
	}
	ids := make([]int, 0, len(t.sites))
	for id := range t.sites {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		s := t.sites[id]
		fmt.Fprintf(bw, "site\t%d\t%s\t%s\t%s\t%d\t%d\n", id, s.Kind, clean(s.Type), clean(s.Method), s.Offset, s.Line)
	}
	return bw.Flush()
}

// ReadTable reads a table written by Write. Continuing an existing table keeps the IDs of
// earlier rewrites valid, so separately rewritten jars can run together.
func ReadTable(r io.Reader) (*Table, error) {
	t := &Table{sites: map[int]Site{}, next: 1, Config: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			if text != "# heapledger table 1" {
				return nil, fmt.Errorf("line 1: not a heapledger table version 1")
			}
			continue
		}
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		switch {
		case f[0] == "config" && len(f) == 3:
			t.Config[f[1]] = f[2]
		case f[0] == "account" && len(f) == 3:
			id, err := strconv.Atoi(f[1])
			if err != nil || id != len(t.accounts) {
				return nil, fmt.Errorf("line %d: account IDs must count up from 0", line)
			}
			t.accounts = append(t.accounts, f[2])
		case f[0] == "site" && len(f) == 7:
			id, err1 := strconv.Atoi(f[1])
			off, err2 := strconv.Atoi(f[5])
			ln, err3 := strconv.Atoi(f[6])
			if err1 != nil || err2 != nil || err3 != nil || id <= 0 {
				return nil, fmt.Errorf("line %d: bad site line", line)
			}
			if _, dup := t.sites[id]; dup {
				return nil, fmt.Errorf("line %d: site %d defined twice", line, id)
			}
			t.sites[id] = Site{Kind: f[2], Type: f[3], Method: f[4], Offset: off, Line: ln}
			if id >= t.next {
				t.next = id + 1
			}
		default:
			return nil, fmt.Errorf("line %d: unknown table line %q", line, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(t.accounts) == 0 || t.accounts[0] != UnaccountedName {
		return nil, fmt.Errorf("table has no account 0 %s", UnaccountedName)
	}
	return t, nil
}

// Merge makes the table's accounts agree with s: accounts already in the table keep their
// IDs, new ones are appended. It returns the ID in this table of each account of s, by the
// 1-based position in s (index 0 unused), so a rewrite continuing an old table compiles the
// old IDs.
func (t *Table) Merge(s *Set) []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	ids := make([]int, len(s.Accounts)+1)
	for i, a := range s.Accounts {
		found := -1
		for id, name := range t.accounts {
			if name == a.Name {
				found = id
			}
		}
		if found < 0 {
			found = len(t.accounts)
			t.accounts = append(t.accounts, a.Name)
		}
		ids[i+1] = found
	}
	return ids
}

// Include adds the accounts and sites of o, the table of classes rewritten before, so that a
// rewrite continuing t keeps o's IDs valid: its classes run with them compiled in. An ID that o
// and t give different accounts or sites cannot be kept valid for both, and is an error; one
// that they give the same (t continues o, or o continues t) is taken once. o's settings fill in
// those t has not got.
func (t *Table) Include(o *Table) error {
	if o == t {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, name := range o.accounts {
		if id < len(t.accounts) && t.accounts[id] != name {
			return fmt.Errorf("account %d is %q there and %q here", id, name, t.accounts[id])
		}
	}
	for id, s := range o.sites {
		if have, ok := t.sites[id]; ok && have != s {
			return fmt.Errorf("site %d is %s there and %s here", id, s, have)
		}
	}
	// Checked first, so that a table that cannot take o is left as it was.
	t.accounts = append(t.accounts, o.accounts[min(len(t.accounts), len(o.accounts)):]...)
	for _, id := range slices.Sorted(maps.Keys(o.sites)) {
		if _, had := t.sites[id]; !had {
			t.named = append(t.named, id)
		}
		t.sites[id] = o.sites[id]
		if id >= t.next {
			t.next = id + 1
		}
	}
	if len(o.Config) > 0 && t.Config == nil {
		t.Config = map[string]string{}
	}
	for k, v := range o.Config {
		if _, ok := t.Config[k]; !ok {
			t.Config[k] = v
		}
	}
	return nil
}

// String describes a site as messages name it: "object java.lang.String in a.B.c()V @4".
func (s Site) String() string {
	return fmt.Sprintf("%s %s in %s @%d", s.Kind, s.Type, s.Method, s.Offset)
}

func clean(s string) string {
	return strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s)
}

// Scratch returns an empty table with t's accounts and settings: a rewrite done against it
// numbers its sites apart from t, and the caller moves them into t with IDs of its choosing
// (the agent's service, re-instrumenting a class with the IDs its first version had).
func (t *Table) Scratch() *Table {
	t.mu.Lock()
	defer t.mu.Unlock()
	return &Table{Config: maps.Clone(t.Config), accounts: slices.Clone(t.accounts), sites: map[int]Site{}, next: 1}
}
