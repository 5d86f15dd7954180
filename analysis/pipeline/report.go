package pipeline

import (
	"fmt"

	"github.com/heapledger/heapledger/analysis/heapdump"
	"github.com/heapledger/heapledger/analysis/leaks"
)

// Report is the analysis of a dump with every node named, as `heap analyze` prints it and writes
// it as JSON.
type Report struct {
	Dump      string  `json:"dump"`
	DumpIndex int     `json:"dump_index"`
	Dumps     int     `json:"dumps"`
	Model     string  `json:"size_model"`
	Partial   bool    `json:"partial,omitempty"`
	Threshold float64 `json:"threshold_percent"`
	Top       int     `json:"-"` // how many rows each ranking was asked for (Options.Top)

	Objects          int    `json:"objects"`
	References       int    `json:"references"`
	Bytes            uint64 `json:"bytes"`
	WeakOnlyObjects  uint64 `json:"weakly_held_objects"`
	WeakOnlyBytes    uint64 `json:"weakly_held_bytes"`
	UnreachableObjs  uint64 `json:"unreachable_objects"`
	UnreachableBytes uint64 `json:"unreachable_bytes"`
	// KeptUnreachable says the unreachable objects were analysed rather than left out
	// (Options.KeepUnreachable, or a dump without GC roots); UnreachableRoots of them were taken
	// as roots by the thesis's rule, the rest being reached from those.
	KeptUnreachable  bool `json:"unreachable_kept"`
	UnreachableRoots int  `json:"unreachable_roots"`

	// Heapledger is what the dump holds of heapledger's runtime, when it ran the program.
	Heapledger *Ledger `json:"heapledger,omitempty"`

	Suspects    []Suspect     `json:"suspects"`
	TopRetained []NamedObject `json:"top_retained"`
	TopDynamic  []Component   `json:"top_dynamic"`
	ByClass     []Class       `json:"retained_by_class"`
	Graph       leaks.Stats   `json:"graph"`
}

// NamedObject is one object, named for people, with its sizes.
type NamedObject struct {
	Object   string `json:"object"`
	Class    string `json:"class"`
	ID       string `json:"id"`
	Shallow  uint64 `json:"shallow"`
	Retained uint64 `json:"retained"`
	Dynamic  uint64 `json:"dynamic"`
}

// Step is one reference on a path: the field (array index, root kind) and the object it leads to.
type Step struct {
	Reference string `json:"reference"`
	Object    string `json:"object"`
}

// Suspect is an object that retains more than the threshold share of the heap.
type Suspect struct {
	NamedObject
	Percent          float64     `json:"percent"`
	Accumulation     NamedObject `json:"accumulation_point"`
	Path             []Step      `json:"path"`
	AccumulationPath []Step      `json:"accumulation_path"`
	// AllocatedBy says which accounts and sites allocated the objects heapledger tracked that
	// the accumulation point holds (with a dump of a run with liveness).
	AllocatedBy *Allocated `json:"allocated_by,omitempty"`
}

// Component is a strongly connected component ranked by dynamic size, named by its lowest node.
type Component struct {
	Object  string `json:"object"`
	Class   string `json:"class"`
	Members uint32 `json:"objects_in_component"`
	Dynamic uint64 `json:"dynamic"`
}

// Class is one class's retained size.
type Class struct {
	Class     string `json:"class"`
	Instances uint64 `json:"instances"`
	Shallow   uint64 `json:"shallow"`
	Retained  uint64 `json:"retained"`
}

// name names every node of rep from d, reading the dump once for the references on the paths.
func name(d *heapdump.Dump, rep *leaks.Report, threshold float64, top int, ledger *ledgerInDump) (*Report, error) {
	v := &Report{
		Dump: d.Path, DumpIndex: d.DumpIndex, Dumps: d.Dumps, Model: d.Model.String() + ", " + d.ModelFrom, Partial: d.Partial,
		Threshold: 100 * threshold, Top: top,
		Objects: rep.Stats.Objects, References: rep.Stats.Edges, Bytes: rep.Stats.TotalBytes,
		WeakOnlyObjects: rep.OnlyWeak.Objects, WeakOnlyBytes: rep.OnlyWeak.Bytes,
		UnreachableObjs: d.Unreachable.Objects, UnreachableBytes: d.Unreachable.Bytes,
		KeptUnreachable: d.UnreachableKept, UnreachableRoots: d.UnreachableRoots,
		Graph: rep.Stats,
	}
	obj := func(o leaks.Object) NamedObject {
		return NamedObject{Object: d.Describe(o.Node), Class: d.ClassName(o.Node), ID: fmt.Sprintf("0x%x", d.ObjectID(o.Node)),
			Shallow: o.Shallow, Retained: o.Retained, Dynamic: o.Dynamic}
	}
	// Name every reference on every path with one read of the dump.
	var refs []heapdump.EdgeRef
	addPath := func(path []leaks.Step) {
		from := uint32(0)
		for _, s := range path {
			refs = append(refs, heapdump.EdgeRef{From: from, Index: int(s.Edge - d.Graph.Off[from])})
			from = s.Node
		}
	}
	for _, s := range rep.Suspects {
		addPath(s.Path)
		addPath(s.AccumulationPath)
	}
	names, err := d.EdgeNames(refs)
	if err != nil {
		return nil, err
	}
	steps := func(path []leaks.Step) []Step {
		out := make([]Step, len(path))
		for i, s := range path {
			out[i] = Step{Reference: names[0], Object: d.Describe(s.Node)}
			names = names[1:]
		}
		return out
	}
	for _, s := range rep.Suspects {
		v.Suspects = append(v.Suspects, Suspect{
			NamedObject: obj(s.Object), Percent: 100 * s.Share, Accumulation: obj(s.Accumulation),
			Path: steps(s.Path), AccumulationPath: steps(s.AccumulationPath), AllocatedBy: ledger.allocated(s),
		})
	}
	if ledger != nil {
		v.Heapledger = ledger.view(rep)
	}
	for _, o := range rep.TopRetained {
		v.TopRetained = append(v.TopRetained, obj(o))
	}
	for _, c := range rep.TopDynamic {
		v.TopDynamic = append(v.TopDynamic, Component{Object: d.Describe(c.Node), Class: d.ClassName(c.Node), Members: c.Members, Dynamic: c.Dynamic})
	}
	for _, c := range rep.ByClass {
		v.ByClass = append(v.ByClass, Class{Class: d.Classes[c.Class].Name, Instances: c.Instances, Shallow: c.Shallow, Retained: c.Retained})
	}
	return v, nil
}
