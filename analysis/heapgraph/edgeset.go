package heapgraph

// EdgeSet is a bit set over edge indexes (positions in Graph.Succ). The analyses take one to
// leave out edges that do not keep their target alive, such as the referent field of a
// java.lang.ref.WeakReference; a nil set leaves out nothing. One bit per edge keeps it at an
// eighth of a byte per reference even on dumps with hundreds of millions of references.
type EdgeSet []uint64

// NewEdgeSet returns an empty set able to hold edge indexes below n.
func NewEdgeSet(n int) EdgeSet { return make(EdgeSet, (n+63)/64) }

// Add puts edge e in the set.
func (s EdgeSet) Add(e uint32) { s[e>>6] |= 1 << (e & 63) }

// Has reports whether edge e is in the set; a nil set holds nothing.
func (s EdgeSet) Has(e uint32) bool { return s != nil && s[e>>6]&(1<<(e&63)) != 0 }

// Count returns how many edges the set holds.
func (s EdgeSet) Count() int {
	c := 0
	for _, w := range s {
		for ; w != 0; w &= w - 1 {
			c++
		}
	}
	return c
}
