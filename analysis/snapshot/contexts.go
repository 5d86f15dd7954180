package snapshot

import (
	"fmt"
	"strconv"
)

// KindMethod is the site kind that names a method of the calling contexts, not an allocation.
const KindMethod = "method"

// Context is one node of a snapshot's calling-context tree: a method in one calling context,
// the account its own code charges, its invocations and what was allocated while it ran (its
// own code, and callees that are not rewritten, such as the JDK's).
type Context struct {
	ID, Parent int
	// Method is the method's ID (Snapshot.Methods); 0 for the root, -1 for a node that holds the
	// contexts a thread's node limit kept out of the tree below its parent.
	Method  int
	Account int
	Calls   int64
	// Rows are the allocations of the node itself, per (account, site, part), as the snapshot's
	// rows; no liveness.
	Rows     []Row
	Children []int
}

// addSite files a site line: methods of the calling contexts apart from allocation sites.
func (s *Snapshot) addSite(site Site) {
	if site.Kind == KindMethod {
		s.Methods[site.ID] = site
		return
	}
	s.Sites[site.ID] = site
}

// ensureRoot starts the tree at its first node.
func (s *Snapshot) ensureRoot() {
	if s.Contexts == nil {
		s.Contexts = []Context{{ID: 0, Parent: -1}}
	}
}

// addNode reads "ID PARENT METHOD ACCOUNT CALLS": IDs count up from 1 in preorder.
func (s *Snapshot) addNode(f []string) error {
	v, err := ints(f, 5)
	if err != nil {
		return fmt.Errorf("node: %w", err)
	}
	return s.node(v)
}

func (s *Snapshot) node(v []int64) error {
	s.ensureRoot()
	id, parent := int(v[0]), int(v[1])
	if id != len(s.Contexts) || parent < 0 || parent >= id {
		return fmt.Errorf("node %d with parent %d: nodes must count up from 1, each after its parent", id, parent)
	}
	s.Contexts = append(s.Contexts, Context{ID: id, Parent: parent, Method: int(v[2]), Account: int(v[3]), Calls: v[4]})
	s.Contexts[parent].Children = append(s.Contexts[parent].Children, id)
	return nil
}

// addContextRow reads "NODE ACCOUNT SITE PART COUNT ELEMENTS BYTES".
func (s *Snapshot) addContextRow(f []string) error {
	v, err := ints(f, 7)
	if err != nil {
		return fmt.Errorf("calloc: %w", err)
	}
	return s.contextRow(v)
}

func (s *Snapshot) contextRow(v []int64) error {
	s.ensureRoot()
	n := int(v[0])
	if n < 0 || n >= len(s.Contexts) {
		return fmt.Errorf("calloc of node %d, which no node line names", n)
	}
	c := &s.Contexts[n]
	c.Rows = append(c.Rows, Row{Account: int(v[1]), Site: int(v[2]), Part: int(v[3]), Count: v[4], Elements: v[5], Bytes: v[6]})
	return nil
}

// ints parses exactly n integer fields.
func ints(f []string, n int) ([]int64, error) {
	if len(f) != n {
		return nil, fmt.Errorf("needs %d fields, has %d", n, len(f))
	}
	out := make([]int64, n)
	for i, x := range f {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// jsonContexts is the JSON twin's "contexts": nodes as [ID, PARENT, METHOD, ACCOUNT, CALLS],
// allocations as [NODE, ACCOUNT, SITE, PART, COUNT, ELEMENTS, BYTES].
type jsonContexts struct {
	Nodes       [][]int64 `json:"nodes"`
	Allocations [][]int64 `json:"allocations"`
}

func (s *Snapshot) readJSONContexts(j *jsonContexts) error {
	if j == nil {
		return nil
	}
	s.ensureRoot()
	for _, v := range j.Nodes {
		if len(v) != 5 {
			return fmt.Errorf("contexts: a node needs 5 numbers, has %d", len(v))
		}
		if err := s.node(v); err != nil {
			return fmt.Errorf("contexts: %w", err)
		}
	}
	for _, v := range j.Allocations {
		if len(v) != 7 {
			return fmt.Errorf("contexts: an allocation needs 7 numbers, has %d", len(v))
		}
		if err := s.contextRow(v); err != nil {
			return fmt.Errorf("contexts: %w", err)
		}
	}
	return nil
}

// MethodName names a context's method for people: "com.acme.A.run()V", "<root>", or
// "<other contexts>" for the node a thread's node limit filled.
func (s *Snapshot) MethodName(id int) string {
	switch {
	case id == 0:
		return "<root>"
	case id < 0:
		return "<other contexts>"
	}
	if m, ok := s.Methods[id]; ok && m.Method != "" {
		return m.Method
	}
	return "method#" + itoa(id)
}

// Stack returns the methods from the root's child down to node id, outermost first.
func (s *Snapshot) Stack(id int) []string {
	var out []string
	for n := id; n > 0; n = s.Contexts[n].Parent {
		out = append(out, s.MethodName(s.Contexts[n].Method))
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
