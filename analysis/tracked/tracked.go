// Package tracked reads what heapledger's Java runtime holds in a heap dump of a program it ran:
// its liveness tracking references, each a weak reference to an object the runtime counted that
// carries the account and allocation site the object was charged to (heapledger.rt.Live); the
// names of those accounts and sites, when the runtime wrote the dump itself (Snapshots'
// heapDumpTable); and its own objects, which a dump of a run with liveness is full of and which
// Runtime.SetApart keeps out of the application's figures. With the tracking references a heap
// dump says who made the memory, which no dump of an unprofiled JVM can.
package tracked

import (
	"fmt"
	"slices"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/hprof"
)

// The runtime's classes and fields this package reads (runtime-java/rt: Live.java, Snapshots.java).
const (
	// TrackedClass is the tracking reference: a WeakReference whose long field key packs the
	// account, site and part (Counts.key). Arrays' references are of a subclass.
	TrackedClass = "heapledger.rt.Live$Tracked"
	// LiveClass holds the liveness mode (static MODE: 0 off, 1 all, 2 sample) and the sampling
	// rate (static RATE: every RATE-th allocation per site is tracked; 1 for all).
	LiveClass = "heapledger.rt.Live"
	// TableClass holds, in its static TableField, the table text (docs/formats.md) as UTF-8
	// bytes while the runtime writes a heap dump itself, and null otherwise.
	TableClass = "heapledger.rt.Snapshots"
	TableField = "heapDumpTable"
)

// ownPackages are the packages of heapledger's classes that run inside a program: the runtime,
// the agent and the probe.
var ownPackages = []string{"heapledger.rt.", "heapledger.agent.", "heapledger.probe."}

// Watch is what heapdump.Load must be asked to keep for Find (Options.Watch).
var Watch = heapdump.Watch{Class: TrackedClass, Fields: []string{"key"}}

// Refs are the tracking references, in node order: each one's node, the node of the object it
// tracks (0 when the collector has cleared the reference and the runtime has not refunded it
// yet), and its key.
type Refs struct {
	Nodes   []uint32
	Objects []uint32
	Keys    []uint64
}

// Account, Site and Part unpack a key as Counts.key packs it: account << 32 | site << 1 | part.
func Account(key uint64) int { return int(int32(key >> 32)) }
func Site(key uint64) int    { return int(uint32(key) >> 1) }
func Part(key uint64) int    { return int(key & 1) }

// Runtime is what the dump holds of heapledger's runtime.
type Runtime struct {
	// Present says the dump holds classes of heapledger's runtime, agent or probe.
	Present bool
	// Liveness is the runtime's liveness setting: "off", "all" or "sample:N" ("" when the
	// dump holds the liveness class without its settings), and Rate the N of sample:N (1 for
	// all).
	Liveness string
	Rate     uint64
	// Refs are the tracking references; Cleared counts those whose object is gone, and RefBytes
	// their shallow bytes, all of them.
	Refs     Refs
	Cleared  int
	RefBytes uint64
	// Table is the table text the runtime held while it wrote the dump, nil when it held none
	// (a dump taken by jmap or jcmd, or by a runtime older than the field).
	Table []byte

	// Own marks the runtime's own objects, a bit per node, once SetApart has found them;
	// OwnObjects and OwnBytes total them (the tracking references among them), and OwnEdges
	// counts the edges into or out of them that SetApart skipped.
	Own                  heapgraph.EdgeSet
	OwnObjects, OwnBytes uint64
	OwnEdges             int
}

// Find reads the runtime's state from d, loaded with Watch among its Options.Watch (watched is
// what Load kept for it). It must run before SetApart, which skips the edges it follows.
func Find(d *heapdump.Dump, watched heapdump.Watched) (*Runtime, error) {
	r := &Runtime{}
	for _, c := range d.Classes {
		if ownClass(c.Name) {
			r.Present = true
			break
		}
	}
	if !r.Present {
		return r, nil
	}
	r.liveness(d)
	if len(watched.Values) != len(Watch.Fields) {
		return nil, fmt.Errorf("%s: the tracking references' fields were not kept (heapdump.Options.Watch lacks tracked.Watch)", d.Path)
	}
	// The nodes and keys are Load's, not copies: a dump of a run with liveness holds millions.
	g := d.Graph
	r.Refs = Refs{Nodes: watched.Nodes, Keys: watched.Values[0], Objects: make([]uint32, len(watched.Nodes))}
	for i, n := range watched.Nodes {
		// The referent is the reference's one weak edge (heapdump marks Reference.referent).
		for e := g.Off[n]; e < g.Off[n+1]; e++ {
			if d.IsWeak(e) {
				r.Refs.Objects[i] = g.Succ[e]
				break
			}
		}
		if r.Refs.Objects[i] == 0 {
			r.Cleared++
		}
		r.RefBytes += g.SizeOf(n)
	}
	table, err := readTable(d)
	if err != nil {
		return nil, err
	}
	r.Table = table
	return r, nil
}

// liveness reads the mode and the sampling rate from Live's statics.
func (r *Runtime) liveness(d *heapdump.Dump) {
	mode, ok1 := d.Static(LiveClass, "MODE")
	rate, ok2 := d.Static(LiveClass, "RATE")
	if !ok1 && !ok2 && !slices.ContainsFunc(d.Classes, func(c heapdump.Class) bool { return c.Name == LiveClass }) {
		// The runtime never loaded its liveness class: liveness was off.
		r.Liveness, r.Rate = "off", 1
		return
	}
	if !ok1 || !ok2 {
		return
	}
	r.Rate = max(uint64(uint32(rate.Bits)), 1)
	switch mode.Bits {
	case 0:
		r.Liveness = "off"
	case 1:
		r.Liveness, r.Rate = "all", 1
	default:
		r.Liveness = fmt.Sprintf("sample:%d", r.Rate)
	}
}

// readTable reads the bytes of the table the runtime holds while it writes a dump.
func readTable(d *heapdump.Dump) ([]byte, error) {
	v, ok := d.Static(TableClass, TableField)
	if !ok || v.Type != hprof.TypeObject || v.Bits == 0 {
		return nil, nil
	}
	n, ok := d.Node(v.Bits)
	if !ok {
		return nil, fmt.Errorf("%s: %s.%s refers to 0x%x, which is not in the dump", d.Path, TableClass, TableField, v.Bits)
	}
	data, elem, err := d.ArrayData(n)
	if err != nil {
		return nil, err
	}
	if elem != hprof.TypeByte {
		return nil, fmt.Errorf("%s: %s.%s is a %s, not the byte[] of a table", d.Path, TableClass, TableField, elem.ArrayName())
	}
	return data, nil
}

// ownClass reports whether a class (or an array of one) is one of heapledger's.
func ownClass(name string) bool {
	for _, p := range ownPackages {
		if len(name) > len(p) && name[:len(p)] == p {
			return true
		}
	}
	return false
}
