package snapshot

import "sort"

// ContextReport is a snapshot's calling-context tree as reports show it (`heapledger report
// --tree`, and --json whenever the snapshot has one).
type ContextReport struct {
	// Mode is the runtime's header line: the mode, its bounds, the nodes the threads' trees
	// held and the calls the depth and node limits kept out of the tree.
	Mode  string        `json:"mode"`
	Nodes []ContextNode `json:"nodes"`
}

// ContextNode is one calling context: its own allocations and, with those of its callees, its
// inclusive totals. Nodes are in preorder, the root first.
type ContextNode struct {
	ID          int            `json:"id"`
	Parent      int            `json:"parent"`
	Method      string         `json:"method"`
	Account     string         `json:"account"`
	Calls       int64          `json:"calls"`
	Self        Totals         `json:"self"`
	Total       Totals         `json:"total"`
	Children    []int          `json:"children,omitempty"`
	Allocations []ContextAlloc `json:"allocations,omitempty"`
}

// ContextAlloc is one allocation row of a context.
type ContextAlloc struct {
	Account  string `json:"account"`
	Site     int    `json:"site"`
	Type     string `json:"type"`
	Count    int64  `json:"count"`
	Elements int64  `json:"elements"`
	Bytes    int64  `json:"bytes"`
}

// ContextTree returns the report of the snapshot's calling contexts, nil when it has none. Each
// node's children are sorted by inclusive bytes, then objects and arrays, largest first.
func (s *Snapshot) ContextTree() *ContextReport {
	if s.Contexts == nil {
		return nil
	}
	rep := &ContextReport{Mode: s.Header["context"], Nodes: make([]ContextNode, len(s.Contexts))}
	for i, c := range s.Contexts {
		n := &rep.Nodes[i]
		*n = ContextNode{ID: c.ID, Parent: c.Parent, Method: s.MethodName(c.Method), Account: s.AccountName(c.Account), Calls: c.Calls,
			Children: append([]int(nil), c.Children...)}
		if c.ID == 0 {
			n.Account = ""
		}
		for _, r := range c.Rows {
			n.Self.add(s.isArray(r), r)
			n.Allocations = append(n.Allocations, ContextAlloc{Account: s.AccountName(r.Account), Site: r.Site, Type: s.TypeOf(r),
				Count: r.Count, Elements: r.Elements, Bytes: r.Bytes})
		}
		n.Total = n.Self
	}
	// Preorder puts every child after its parent: sums go up in reverse.
	for i := len(rep.Nodes) - 1; i > 0; i-- {
		rep.Nodes[rep.Nodes[i].Parent].Total.plus(rep.Nodes[i].Total)
	}
	for i := range rep.Nodes {
		kids := rep.Nodes[i].Children
		sort.SliceStable(kids, func(a, b int) bool { return heavier(rep.Nodes[kids[a]].Total, rep.Nodes[kids[b]].Total) })
	}
	return rep
}

// heavier orders totals by bytes, then objects and arrays.
func heavier(x, y Totals) bool {
	if x.Bytes != y.Bytes {
		return x.Bytes > y.Bytes
	}
	return x.Objects+x.Arrays > y.Objects+y.Arrays
}

// Hottest returns the IDs of the top contexts by their own bytes (then objects and arrays),
// leaving out those that allocated nothing; top 0 means all.
func (r *ContextReport) Hottest(top int) []int {
	var ids []int
	for _, n := range r.Nodes {
		if n.Self.Objects+n.Self.Arrays > 0 {
			ids = append(ids, n.ID)
		}
	}
	sort.SliceStable(ids, func(a, b int) bool { return heavier(r.Nodes[ids[a]].Self, r.Nodes[ids[b]].Self) })
	if top > 0 && len(ids) > top {
		ids = ids[:top]
	}
	return ids
}

// Stack returns the methods from the root's child down to node id, outermost first.
func (r *ContextReport) Stack(id int) []string {
	var out []string
	for n := id; n > 0; n = r.Nodes[n].Parent {
		out = append(out, r.Nodes[n].Method)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
