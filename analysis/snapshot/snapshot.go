// Package snapshot reads the snapshots that the heapledger Java runtime writes (text format
// versions 1 to 5, or its JSON twin, versions 1 to 5, see docs/formats.md) and aggregates them
// into per-account reports and, when a snapshot has them, calling-context trees.
package snapshot

// Snapshot is one snapshot file.
type Snapshot struct {
	Path    string
	Version int
	Header  Header
	// Accounts maps account ID to name; 0 is "<unaccounted>".
	Accounts map[int]string
	Sites    map[int]Site
	Rows     []Row
	// Liveness is false when the runtime did not track liveness (version 1 snapshots, or
	// liveness off); the Live fields of rows are then meaningless.
	Liveness bool
	// Ages counts live tracked objects by age in collections: 0, 1, 2–3, 4–7, 8–15, ...
	Ages []int64
	// Methods names the methods of the calling contexts (sites of kind method), by ID.
	Methods map[int]Site
	// Contexts is the calling-context tree (version 4, --context cct), indexed by node ID:
	// [0] is the root, every other node's parent comes before it. Nil without contexts.
	Contexts []Context
	// Edges is the edge profile of a profiling run (version 5, --counters edges): per method,
	// the counts of its path counters' chords. Nil without one.
	Edges []MethodEdges
}

// MaxVersion is the newest snapshot format version, text and JSON, this package reads.
const MaxVersion = 5

// Site is an allocation site as the rewriter described it in its table.
type Site struct {
	ID     int
	Kind   string // object, array, multi, lambda, concat, clone, reflect, ... ("" when unknown)
	Type   string // Java type name of what the site allocates, e.g. "java.lang.String", "int[][]"
	Method string // allocating method, e.g. "com.acme.Cache.put(Ljava/lang/Object;)V"
	Offset int    // bytecode offset, -1 when unknown
	Line   int    // source line, -1 when unknown
}

// Where names the site for people, as reports list it: its method, line and bytecode offset, then
// typ, what it allocates ("com.acme.A.run()V line 12 @7 java.lang.String").
func (s Site) Where(typ string) string {
	w := s.Method
	if s.Line >= 0 {
		w += " line " + itoa(s.Line)
	}
	if s.Offset >= 0 {
		w += " @" + itoa(s.Offset)
	}
	return w + " " + typ
}

// Row is the count of one (account, site, part). Part 1 of a multianewarray site holds the
// arrays of its primitive base type; part 0 everything else.
type Row struct {
	Account, Site, Part int
	Count               int64 // objects or arrays
	Elements            int64 // array elements; 0 for objects
	Bytes               int64 // shallow bytes; -1 when the size of the type was unknown

	// Liveness (version 2, liveness on): objects still alive, their bytes, objects reclaimed
	// (refunded) and their bytes — scaled by the sampling rate in sample mode —, objects
	// allocated past the tracking bound whose fate is unknown, and the number of distinct GC
	// epochs the live objects were born in (surviving generations).
	Live, LiveBytes, Reclaimed, ReclaimedBytes, Untracked int64
	Generations                                           int64
	// Survived (version 3) are the live objects already tracked when the process's snapshot
	// before this one was taken: garbage in flight at this snapshot's collection is not, so leak
	// detection ranks by it (SettledLive).
	Survived int64
}

// SettledLive is the live figure leak detection compares: the objects that were there at the
// snapshot before too (Survived) where the snapshot says so (version 3), else all live ones. Young garbage in flight at a snapshot's
// collection is live then, and at a high allocation rate its number rises and falls from one
// snapshot to the next, which read as a leak (issue 32).
func (s *Snapshot) SettledLive(r Row) int64 {
	if s.Version >= 3 {
		return r.Survived
	}
	return r.Live
}

// TypeOf returns the type name a row counts, from its site and part.
func (s *Snapshot) TypeOf(r Row) string {
	site, ok := s.Sites[r.Site]
	if !ok || site.Type == "" {
		return "site#" + itoa(r.Site)
	}
	if site.Kind == "multi" {
		if r.Part == 1 {
			return leafArray(site.Type)
		}
		return site.Type + " (reference levels)"
	}
	return site.Type
}

// AccountName returns the account's name, or a stable placeholder.
func (s *Snapshot) AccountName(id int) string {
	if n, ok := s.Accounts[id]; ok {
		return n
	}
	if id == 0 {
		return "<unaccounted>"
	}
	return "account-" + itoa(id)
}

// leafArray turns "int[][][]" into "int[]".
func leafArray(t string) string {
	for len(t) > 4 && t[len(t)-4:] == "[][]" {
		t = t[:len(t)-2]
	}
	return t
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}
