// Package heapdump loads an extended heap dump (an HPROF file with the whole object graph) into
// a heapgraph.Graph plus the metadata an analysis reports with: object ids, classes, node kinds,
// GC roots and weak-reference edges.
//
// Graph shape, as Eclipse MAT builds it:
//   - node 0 is the super root; its successors are the GC roots (each object once, whatever
//     its root kinds);
//   - one node per instance, object array, primitive array and class object of the chosen dump,
//     numbered 1..N in increasing HPROF object id;
//   - edges: an instance's reference fields (its own class's first, then each superclass's, as the
//     dump stores them), an object array's elements in index order, then for every object an edge
//     to its class object ("<class>"); a class object points to java.lang.Class's class object,
//     its superclass, class loader, signers, protection domain, then its static reference fields
//     and object constants. Null references and references to ids absent from the dump are
//     dropped (and counted in Warnings).
//
// Unreachable objects (not reachable from any GC root) are by default removed from the graph and
// counted in Unreachable; with Options.KeepUnreachable they stay and are attached to the super
// root by the thesis's rule: every unreached object without referrers becomes a root, and of each
// remaining unreached cycle the object with the lowest id. Either way every node of the Graph is
// reachable from node 0. A dump without any GC-root records gets its roots by the same rule.
//
// Memory: per node the Dump holds 4 (id, see objectIDs) + 4 (class) + 1 (kind) + 4 (size) + 4
// (offset) bytes and 4 bytes per edge, plus a lookup index of ~1 byte per node; there is no
// per-object map or pointer.
package heapdump

import (
	"fmt"

	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/hprof"
)

// Kind says what a node is.
type Kind uint8

const (
	KindSuperRoot Kind = iota
	KindInstance
	KindObjArray
	KindPrimArray
	KindClass // a class object (java.lang.Class mirror, from a CLASS DUMP)
)

func (k Kind) String() string {
	return [...]string{"super root", "instance", "object array", "primitive array", "class"}[k]
}

// RootKind is the kind of a GC root, from the HPROF root sub-record (or Unreachable for a pseudo
// root chosen by the thesis's rule).
type RootKind uint8

const (
	RootUnknown RootKind = iota
	RootJNIGlobal
	RootJNILocal
	RootJavaFrame
	RootNativeStack
	RootStickyClass
	RootThreadBlock
	RootMonitorUsed
	RootThreadObject
	RootUnreachable // not a GC root: an object kept by Options.KeepUnreachable (thesis rule)
)

func (k RootKind) String() string {
	return [...]string{"unknown", "JNI global", "JNI local", "Java frame", "native stack", "sticky class",
		"thread block", "monitor used", "thread object", "unreachable"}[k]
}

// RefKind classifies subclasses of java.lang.ref.Reference.
type RefKind uint8

const (
	RefNone RefKind = iota
	RefWeak
	RefSoft
	RefPhantom
	RefFinal
	RefOther // java.lang.ref.Reference itself or an unrecognised direct subclass
)

func (k RefKind) String() string {
	return [...]string{"", "weak", "soft", "phantom", "final", "reference"}[k]
}

// Root is one GC-root record. An object may be several roots (e.g. a Java-frame local of two
// threads); Dump.Roots lists them all, sorted by Node.
type Root struct {
	Node   uint32
	Kind   RootKind
	Thread uint32 // thread serial number, when the kind has one
	Frame  uint32 // frame depth (JNI local, Java frame) or stack trace serial (thread object)
}

// Class describes one class; Dump.ClassOf indexes this list.
type Class struct {
	Name string // Java form: "java.util.HashMap", "byte[]", "java.lang.Object[]"
	ID   uint64 // class object id; 0 for primitive-array classes the dump does not name
	Node uint32 // node of the class object; 0 if the dump has no CLASS DUMP for it
	// Super is the index of the superclass in Dump.Classes, or -1.
	Super int32
	// InstanceSize is the shallow size of each instance (0 for array classes).
	InstanceSize uint64
	// Instances and Bytes total the nodes of this class in the graph (class objects are counted
	// under java.lang.Class).
	Instances, Bytes uint64
	Ref              RefKind // what kind of java.lang.ref.Reference its instances are, if any
}

// Options control Load.
type Options struct {
	// Dump picks the heap dump of a file holding several (1-based); 0 means the last.
	Dump int
	// Compressed overrides the compressed-reference inference: "" or "auto" infers it (see
	// hprof.InferCompressed), "on" or "off" force it.
	Compressed string
	// KeepUnreachable keeps objects no GC root reaches, attached to the super root by the
	// thesis's rule, instead of removing them.
	KeepUnreachable bool
	// AllowPartial makes a truncated file load as far as it goes, with Dump.Partial set, instead
	// of failing.
	AllowPartial bool
	// Progress, if set, is called now and then with the phase and bytes done of total (total is
	// -1 when unknown, e.g. for gzip input).
	Progress func(phase string, done, total int64)
	// Phase, if set, is called as each step of loading begins: "reading objects", "reading
	// references", "building the graph".
	Phase func(name string)
	// Building, if set, is called as building the graph begins, with its number of nodes so
	// far (the super root and any unreachable objects included, so no fewer than the graph
	// will have). That step runs mostly on one core: a caller can use the others meanwhile
	// (see leaks.MakeAhead).
	Building func(nodes int)
	// Watch names instance fields whose values the load keeps, in Dump.Watched (see Watch).
	Watch []Watch
}

// Dump is a loaded heap dump. All per-node slices are indexed by node (0 = super root).
type Dump struct {
	Path  string
	Graph *heapgraph.Graph

	ClassOf []uint32 // index into Classes of each node's class (java.lang.Class for class objects; heapgraph.NoNode for the super root)
	Kind    []Kind
	Classes []Class

	// Roots lists every GC-root record that names an object in the graph, sorted by node.
	Roots []Root
	// Weak is a bitset over edge indices (positions in Graph.Succ): bit e is set when edge e is
	// the referent field of a java.lang.ref.Reference instance (weak, soft, phantom or final).
	// Paths that explain why an object is kept alive skip these edges.
	Weak heapgraph.EdgeSet

	// Unreachable totals the objects that no GC root reaches: removed from the graph, unless
	// UnreachableKept.
	Unreachable struct{ Objects, Bytes uint64 }
	// UnreachableKept says the unreachable objects stayed in the graph, attached to the super
	// root by the thesis's rule: Options.KeepUnreachable asked for it, or the dump has no GC-root
	// records, where every object is unreachable. UnreachableRoots of them became roots
	// (RootUnreachable); the rest hang off those.
	UnreachableKept  bool
	UnreachableRoots int

	Model     hprof.Model // the shallow-size model used for Graph.Size
	ModelFrom string      // how Model was chosen (see hprof.InferModel; "layout set by --compressed" when forced)
	IDSize    int
	Dumps     int // heap dumps in the file (as far as it was read)
	DumpIndex int // which of them this is (1-based)
	Partial   bool
	Warnings  []string
	// Bytes is the size of the HPROF data: the file's, or what it inflates to when it is
	// gzip-compressed (as far as it was read).
	Bytes int64
	// Watched holds, per Options.Watch, the instances found and their fields' values.
	Watched []Watched

	ids       objectIDs        // HPROF object id of each node: see ObjectID
	parked    *parkedCols      // what Park moved out, nil when nothing is
	classObjs bitset           // the class objects, so that IsClassObject works while Kind is parked
	classNode map[uint32]int32 // class-object node → index in Classes
	// rootEdges is a copy of the super root's successors (the GC roots, in edge order), so
	// that EdgeNames can name an edge out of it without the graph's edges, which a caller
	// short of memory may have dropped by then.
	rootEdges []uint32
	schema    *hprof.Schema
	gzip      bool

	// With an indexed file: the chosen dump's segments, each with the smallest and largest object
	// id it holds, so that naming a few objects' references reads only the segments that may
	// hold them (EdgeNames) instead of the file up to them. hdr is the file's header for their
	// readers.
	segIDs []segmentIDs
	hdr    *hprof.Index
}

// IsWeak reports whether edge e (an index into Graph.Succ) is a Reference's referent.
func (d *Dump) IsWeak(e uint32) bool {
	return int(e>>6) < len(d.Weak) && d.Weak.Has(e)
}

// IsClassObject reports whether node n is a class object (Kind KindClass). It needs a bit per
// node, where Kind needs a byte, and works while the Dump is parked.
func (d *Dump) IsClassObject(n uint32) bool {
	return int(n>>6) < len(d.classObjs) && d.classObjs.has(n)
}

// ClassObjects returns the class objects as a bit per node, as IsClassObject asks them, for a
// caller that asks for millions of nodes. It is the Dump's own set, to be read, not changed.
func (d *Dump) ClassObjects() heapgraph.EdgeSet { return heapgraph.EdgeSet(d.classObjs) }

// Node returns the node of the object with HPROF id id.
func (d *Dump) Node(id uint64) (uint32, bool) { return d.ids.find(id) }

// ObjectID returns the HPROF object id of node n (0 for the super root). Ids ascend with node
// numbers.
func (d *Dump) ObjectID(n uint32) uint64 { return d.ids.at(n) }

// ObjectIDs returns every node's object id, indexed by node, in a new slice.
func (d *Dump) ObjectIDs() []uint64 {
	out := make([]uint64, d.ids.n)
	for n := range out {
		out[n] = d.ids.at(uint32(n))
	}
	return out
}

// ClassName returns the class name of node n ("java.lang.Class" for class objects).
func (d *Dump) ClassName(n uint32) string {
	if n == 0 {
		return "<super root>"
	}
	return d.Classes[d.ClassOf[n]].Name
}

// ClassOfClassObject returns the index in Classes of the class that class-object node n
// represents, or -1 if n is not a class object.
func (d *Dump) ClassOfClassObject(n uint32) int {
	if k, ok := d.classNode[n]; ok {
		return int(k)
	}
	return -1
}

// Describe names node n for people: "java.util.HashMap @ 0x7f0012345678", "class java.lang.String
// @ 0x…", or "<super root>".
func (d *Dump) Describe(n uint32) string {
	if n == 0 {
		return "<super root>"
	}
	if d.Kind[n] == KindClass {
		if k := d.ClassOfClassObject(n); k >= 0 {
			return fmt.Sprintf("class %s @ 0x%x", d.Classes[k].Name, d.ObjectID(n))
		}
	}
	return fmt.Sprintf("%s @ 0x%x", d.ClassName(n), d.ObjectID(n))
}

// RootsOf returns the GC-root records of node n (empty if it is not a root).
func (d *Dump) RootsOf(n uint32) []Root {
	lo, hi := 0, len(d.Roots)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if d.Roots[m].Node < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	end := lo
	for end < len(d.Roots) && d.Roots[end].Node == n {
		end++
	}
	return d.Roots[lo:end]
}

// EdgeRef names the i-th successor of node From.
type EdgeRef struct {
	From  uint32
	Index int
}

// RuleRootEdge names the super root's edge to an unreachable object that the thesis's rule made
// a root (Options.KeepUnreachable, or a dump without GC-root records).
const RuleRootEdge = "<unreachable: a root by the thesis's rule>"

// EdgeName returns the name of the i-th successor edge of node from: a field name ("next"), an
// array index ("[42]"), "<class>", "<super>", "<classloader>", a static field name, or for the
// super root the root kinds of the target ("<GC root: Java frame>"; for an unreachable object
// that the thesis's rule made a root, "<unreachable: a root by the thesis's rule>"). Names are not stored per edge: for
// instances and arrays this re-reads the object's record from the file. To name many edges,
// call EdgeNames once, which reads the file at most once.
func (d *Dump) EdgeName(from uint32, i int) (string, error) {
	names, err := d.EdgeNames([]EdgeRef{{from, i}})
	if err != nil {
		return "", err
	}
	return names[0], nil
}
