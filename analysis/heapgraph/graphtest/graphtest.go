// Package graphtest builds heap graphs of known shape for tests and benchmarks: the synthetic
// graphs of the dynaTrace thesis (section 5.1), shapes that stress deep traversals, seeded random
// graphs, and small hand-drawn graphs from edge lists.
package graphtest

import (
	"math/rand"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// The generators below build the synthetic graphs of the dynaTrace thesis (section 5.1) and a
// few shapes that stress deep traversals. Every node has shallow size 1 unless said otherwise, so
// that retained and dynamic sizes are node counts with closed forms; node 0 is the super root.

// BalancedTree returns a complete binary tree of n objects: object i (1-based, under the super
// root) has children 2i and 2i+1 when they exist.
func BalancedTree(n int) *heapgraph.Graph {
	b := heapgraph.NewBuilder(n + 1)
	b.AddEdge(0, 1)
	for i := 1; i <= n; i++ {
		b.SetSize(uint32(i), 1)
		for _, c := range []int{2 * i, 2*i + 1} {
			if c <= n {
				b.AddEdge(uint32(i), uint32(c))
			}
		}
	}
	return mustBuild(b)
}

// ListWithData is the thesis's "unbalanced tree": a singly linked list of entries, each holding a
// data object. Odd nodes are entries, even nodes data: entry i points to data i+1 and entry i+2.
// entries is the number of list entries, so the graph has 2*entries objects.
func ListWithData(entries int) *heapgraph.Graph {
	n := 2 * entries
	b := heapgraph.NewBuilder(n + 1)
	b.AddEdge(0, 1)
	for i := 1; i <= n; i += 2 {
		b.SetSize(uint32(i), 1)
		b.SetSize(uint32(i+1), 1)
		b.AddEdge(uint32(i), uint32(i+1))
		if i+2 <= n {
			b.AddEdge(uint32(i), uint32(i+2))
		}
	}
	return mustBuild(b)
}

// Chain is the deepest graph of n objects: the super root → 1 → 2 → … → n, each object its own
// component and the only one it dominates directly; a search keeps a frame per object on its path.
func Chain(n int) *heapgraph.Graph {
	b := heapgraph.NewBuilder(n + 1)
	for i := 0; i < n; i++ {
		b.SetSize(uint32(i+1), 1)
		b.AddEdge(uint32(i), uint32(i+1))
	}
	return mustBuild(b)
}

// DoublyLinkedList is java.util.LinkedList in miniature: a list head (node 1) pointing to the first
// and last entry, entries 2..n+1 linked both ways, and each entry holding its own data object
// (n+2..2n+1). It is one big strongly connected component and the shape that makes
// VisualVM's dominator iteration quadratic.
func DoublyLinkedList(n int) *heapgraph.Graph {
	b := heapgraph.NewBuilder(2*n + 2)
	b.AddEdge(0, 1)
	b.SetSize(1, 1)
	if n > 0 {
		b.AddEdge(1, 2)
		b.AddEdge(1, uint32(n+1))
	}
	for i := 0; i < n; i++ {
		e, d := uint32(2+i), uint32(n+2+i)
		b.SetSize(e, 1)
		b.SetSize(d, 1)
		if i > 0 {
			b.AddEdge(e, e-1)
		}
		if i < n-1 {
			b.AddEdge(e, e+1)
		}
		b.AddEdge(e, d)
	}
	return mustBuild(b)
}

// Ladder is a DAG in which object i points to objects i+1 and i+2 (1-based, n objects). No object
// but the last two dominates what it reaches, so it has no useful dominating articulation points
// and the dynamic size of object i is n-i+1.
func Ladder(n int) *heapgraph.Graph {
	b := heapgraph.NewBuilder(n + 1)
	b.AddEdge(0, 1)
	for i := 1; i <= n; i++ {
		b.SetSize(uint32(i), 1)
		for _, c := range []int{i + 1, i + 2} {
			if c <= n {
				b.AddEdge(uint32(i), uint32(c))
			}
		}
	}
	return mustBuild(b)
}

// TriangleID numbers the objects of Triangle: row r (0-based) holds r+1 objects, column c.
func TriangleID(r, c int) uint32 { return uint32(1 + r*(r+1)/2 + c) }

// Triangle is a DAG shaped like Pascal's triangle with the given number of rows: object (r,c)
// points to (r+1,c) and (r+1,c+1). Every interior object is reached along two independent paths,
// so its immediate dominator is the apex and its dynamic size is the sub-triangle below it.
func Triangle(rows int) *heapgraph.Graph {
	n := rows * (rows + 1) / 2
	b := heapgraph.NewBuilder(n + 1)
	b.AddEdge(0, TriangleID(0, 0))
	for r := 0; r < rows; r++ {
		for c := 0; c <= r; c++ {
			b.SetSize(TriangleID(r, c), 1)
			if r+1 < rows {
				b.AddEdge(TriangleID(r, c), TriangleID(r+1, c))
				b.AddEdge(TriangleID(r, c), TriangleID(r+1, c+1))
			}
		}
	}
	return mustBuild(b)
}

// Random returns a graph of n nodes and about m random edges, with sizes 1..maxSize, seeded so
// that a failure reproduces. The super root points to a few random nodes, as a heap has a few
// GC roots, so some nodes are unreachable.
func Random(seed int64, n, m, maxSize int) *heapgraph.Graph {
	r := rand.New(rand.NewSource(seed))
	b := heapgraph.NewBuilder(n)
	for i := 1; i < n; i++ {
		b.SetSize(uint32(i), uint64(1+r.Intn(maxSize)))
	}
	if n > 1 {
		roots := 1 + r.Intn(3)
		for i := 0; i < roots; i++ {
			b.AddEdge(0, uint32(1+r.Intn(n-1)))
		}
		for i := 0; i < m; i++ {
			b.AddEdge(uint32(1+r.Intn(n-1)), uint32(1+r.Intn(n-1)))
		}
	}
	return mustBuild(b)
}

// mustBuild is for generators, whose edges are in range by construction.
func mustBuild(b *heapgraph.Builder) *heapgraph.Graph {
	g, err := b.Build()
	if err != nil {
		panic(err)
	}
	return g
}

// FromEdges builds a graph of n nodes from an edge list, every node but the super root with
// shallow size 1 — the form of the small hand-drawn graphs of the thesis used in tests.
func FromEdges(n int, edges ...[2]uint32) (*heapgraph.Graph, error) {
	b := heapgraph.NewBuilder(n)
	for i := 1; i < n; i++ {
		b.SetSize(uint32(i), 1)
	}
	for _, e := range edges {
		b.AddEdge(e[0], e[1])
	}
	return b.Build()
}

// MustFromEdges is FromEdges for a test, which fails when the edges make no graph.
func MustFromEdges(t testing.TB, n int, edges ...[2]uint32) *heapgraph.Graph {
	t.Helper()
	g, err := FromEdges(n, edges...)
	if err != nil {
		t.Fatal(err)
	}
	return g
}
