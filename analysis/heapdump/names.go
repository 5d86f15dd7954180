package heapdump

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/heapledger/heapledger/analysis/hprof"
)

// EdgeNames names each requested edge (see EdgeName). Edges out of the super root and out of
// class objects are named from memory; edges out of instances and arrays need the object's
// record, so the file is read once for all of them.
func (d *Dump) EdgeNames(edges []EdgeRef) ([]string, error) {
	out := make([]string, len(edges))
	want := map[uint64][]int{} // object id → positions in edges
	for i, e := range edges {
		if int(e.From) >= len(d.Kind) || e.Index < 0 || e.Index >= int(d.Graph.Off[e.From+1]-d.Graph.Off[e.From]) {
			return nil, fmt.Errorf("%s: no edge %d out of node %d", d.Path, e.Index, e.From)
		}
		switch d.Kind[e.From] {
		case KindSuperRoot:
			t := d.Graph.Successors(0)[e.Index]
			var kinds []string
			for _, r := range d.RootsOf(t) {
				kinds = append(kinds, r.Kind.String())
			}
			out[i] = "<GC root: " + strings.Join(dedupe(kinds), ", ") + ">"
		case KindClass:
			names := d.classEdgeNames(e.From)
			if e.Index < len(names) {
				out[i] = names[e.Index]
			}
		default:
			want[d.ObjectID(e.From)] = append(want[d.ObjectID(e.From)], i)
		}
	}
	if len(want) == 0 {
		return out, nil
	}
	f, err := os.Open(d.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := hprof.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.Path, err)
	}
	r.SkipPrimitiveData = true
	for len(want) > 0 {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: naming edges: %w", d.Path, err)
		}
		if rec.Dump != d.DumpIndex || (rec.Tag != hprof.TagInstanceDump && rec.Tag != hprof.TagObjArrayDump && rec.Tag != hprof.TagPrimArrayDump) {
			continue
		}
		pos, ok := want[rec.ID]
		if !ok {
			continue
		}
		delete(want, rec.ID)
		var names []string
		add := func(name string, id uint64) {
			if _, ok := d.Node(id); ok && id != 0 {
				names = append(names, name)
			}
		}
		switch rec.Tag {
		case hprof.TagInstanceDump:
			refs, _, _ := d.schema.InstanceRefs(rec.Class)
			for _, fr := range refs {
				if int(fr.Offset)+r.IDSize > len(rec.Data) {
					break
				}
				add(d.schema.FieldName(fr.NameID), r.ReadID(rec.Data[fr.Offset:]))
			}
		case hprof.TagObjArrayDump:
			for p, j := 0, 0; p+r.IDSize <= len(rec.Data); p, j = p+r.IDSize, j+1 {
				if id := r.ReadID(rec.Data[p:]); id != 0 {
					add(fmt.Sprintf("[%d]", j), id)
				}
			}
		}
		names = append(names, "<class>")
		for _, i := range pos {
			if edges[i].Index < len(names) {
				out[i] = names[edges[i].Index]
			}
		}
	}
	for i, s := range out {
		if s == "" {
			return nil, fmt.Errorf("%s: cannot name edge %d of %s: its record was not found again", d.Path, edges[i].Index, d.Describe(edges[i].From))
		}
	}
	return out, nil
}

func (d *Dump) classEdgeNames(n uint32) []string {
	k := d.ClassOfClassObject(n)
	var names []string
	if d.Classes[d.ClassOf[n]].Node != 0 {
		names = append(names, "<class>")
	}
	if k < 0 {
		return names
	}
	sc := d.schema.Classes[d.Classes[k].ID]
	if sc == nil || sc.Dump == nil {
		return names
	}
	classEdges(d.schema, sc.Dump, func(name string, id uint64) {
		if _, ok := d.Node(id); ok {
			names = append(names, name)
		}
	})
	return names
}

func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
