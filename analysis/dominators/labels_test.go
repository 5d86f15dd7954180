package dominators

import (
	"math"
	"math/rand"
	"testing"

	"github.com/heapledger/heapledger/analysis/heapgraph"
)

// labelsOf makes Labels of one dimension from each node's group (-1: none), at rate 1: label k
// is group k.
func labelsOf(groupOf []int, groups int) *Labels {
	l := &Labels{Count: []int{groups}, Rate: 1, Off: []uint32{0}, Groups: [][]uint32{make([]uint32, groups)}}
	for k := range groups {
		l.Groups[0][k] = uint32(k)
	}
	for v, k := range groupOf {
		if k >= 0 {
			l.Nodes = append(l.Nodes, uint32(v))
			l.Keys = append(l.Keys, uint32(k))
			l.Off = append(l.Off, uint32(len(l.Keys)))
		}
	}
	return l
}

// TestByLabelCountsEachGroupOfANode: a node with two labels is in the groups of both, and in a
// group they share once; a member below another of its group adds to its members, not its bytes.
func TestByLabelCountsEachGroupOfANode(t *testing.T) {
	g := heapgraph.ListWithData(3) // 0 → e1 → e2 → e3 entries (odd nodes), each with data (even)
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	// Both labels are group 0 of dimension 0; in dimension 1, label 0 is group 0 and label 1
	// group 1. Node 1 has both labels, node 3 label 1.
	l := &Labels{Count: []int{1, 2}, Rate: 1,
		Nodes:  []uint32{1, 3},
		Off:    []uint32{0, 2, 3},
		Keys:   []uint32{0, 1, 1},
		Groups: [][]uint32{{0, 0}, {0, 1}},
	}
	got := tr.ByLabel(g, ret, l, 0, nil)
	if o := got[0][0]; o.Members != 2 || o.Shallow != 2 || o.Retained != ret[1] || o.AtLeast != ret[1] {
		t.Errorf("dimension 0: %+v, want nodes 1 (once) and 3, retaining %d", o, ret[1])
	}
	if o := got[1][0]; o.Members != 1 || o.Retained != ret[1] {
		t.Errorf("dimension 1, group 0: %+v", o)
	}
	if o := got[1][1]; o.Members != 2 || o.Retained != ret[1] || o.AtLeast != ret[1] {
		t.Errorf("dimension 1, group 1 (node 1 and node 3 below it): %+v, want retained %d", o, ret[1])
	}
}

// TestByLabelEstimatesFromASample: every 8th member labelled, rate 8. A holder of independent
// elements is estimated as 8 times its labelled elements, exactly when they are alike; a linked
// list of one group as 8 times its labelled nodes, each its own node (an unlabelled node of their
// class below one ends its own part), not 8 times each labelled node's tail.
func TestByLabelEstimatesFromASample(t *testing.T) {
	const n, rate = 16, 8
	// Holder 1 with elements 2..17, each holding a payload (18..33) of size 3; elements size 2.
	b := heapgraph.NewBuilder(2 + 2*n)
	b.AddEdge(0, 1)
	b.SetSize(1, 5)
	classOf := make([]uint32, 2+2*n)
	for i := range uint32(n) {
		e, p := 2+i, 2+n+i
		b.AddEdge(1, e)
		b.AddEdge(e, p)
		b.SetSize(e, 2)
		b.SetSize(p, 3)
		classOf[e], classOf[p] = 1, 2
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	groupOf := make([]int, g.N())
	for v := range groupOf {
		groupOf[v] = -1
	}
	groupOf[2+7], groupOf[2+15] = 0, 0 // the 8th and the 16th
	l := labelsOf(groupOf, 1)
	l.Rate = rate
	o := tr.ByLabel(g, ret, l, 0, classOf)[0][0]
	if o.Retained != n*5 || o.AtLeast != 10 || o.Variance != rate*(rate-1)*(25+25) || o.Members != 2 {
		t.Errorf("elements: %+v, want retained %d, at least 10, variance %d", o, n*5, rate*(rate-1)*50)
	}

	// A list 0 → 1 → ... → 24 of nodes of size 1, nodes 8, 16 and 24 labelled.
	chain := heapgraph.Chain(24)
	tr = Compute(chain, nil)
	ret = tr.Retained(chain)
	groupOf = make([]int, chain.N())
	for v := range groupOf {
		groupOf[v] = -1
		if v > 0 && v%8 == 0 {
			groupOf[v] = 0
		}
	}
	l = labelsOf(groupOf, 1)
	l.Rate = rate
	o = tr.ByLabel(chain, ret, l, 0, make([]uint32, chain.N()))[0][0]
	if o.Retained != 24 || o.AtLeast != ret[8] || o.Variance != rate*(rate-1)*3 {
		t.Errorf("list: %+v, want retained 24 (the list's nodes), at least %d", o, ret[8])
	}
}

// TestByLabelSampledListOfVaryingNodes: a list of nodes each holding an array of its own size,
// both labelled every 8th in one group (the account that made them): each labelled node's own
// part is itself, its array's its array, so the estimate is 8 times what the labelled ones
// weigh, within two standard errors of the whole list, and stable however the sizes vary (an
// estimate that let each node claim what the next labelled one seemed to own swung between
// nothing and a whole stretch of the list, and came out at twice the list).
func TestByLabelSampledListOfVaryingNodes(t *testing.T) {
	const n, rate = 800, 8
	r := rand.New(rand.NewSource(3))
	b := heapgraph.NewBuilder(1 + 2*n)
	node := func(i int) uint32 { return uint32(2*i - 1) } // 1..n, n the list's head
	arr := func(i int) uint32 { return uint32(2 * i) }
	classOf := make([]uint32, 1+2*n)
	b.AddEdge(0, node(n))
	truth, labelled := uint64(0), uint64(0)
	groupOf := make([]int, 1+2*n)
	for v := range groupOf {
		groupOf[v] = -1
	}
	for i := 1; i <= n; i++ {
		size := uint64(8 * (1 + r.Intn(30)))
		b.SetSize(node(i), 24)
		b.SetSize(arr(i), size)
		classOf[node(i)], classOf[arr(i)] = 1, 2
		b.AddEdge(node(i), arr(i))
		if i > 1 {
			b.AddEdge(node(i), node(i-1))
		}
		truth += 24 + size
		if i%rate == 0 {
			groupOf[node(i)], groupOf[arr(i)] = 0, 0
			labelled += 24 + size
		}
	}
	g, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	tr := Compute(g, nil)
	ret := tr.Retained(g)
	l := labelsOf(groupOf, 1)
	l.Rate = rate
	o := tr.ByLabel(g, ret, l, 0, classOf)[0][0]
	if o.Retained != rate*labelled {
		t.Errorf("estimate %d, want 8 times the labelled nodes and arrays, %d", o.Retained, rate*labelled)
	}
	if off := math.Abs(float64(o.Retained) - float64(truth)); off > 2*math.Sqrt(o.Variance) {
		t.Errorf("estimate %d ± %.0f, the list weighs %d", o.Retained, 2*math.Sqrt(o.Variance), truth)
	}
}
