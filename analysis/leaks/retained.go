package leaks

// RetainedSizes is the second step: every node's retained size, the heap's totals, and the
// objects only weak references hold.
//
//  1. The shallow sizes come back; of the arrays the tree's computation left, the two the child
//     lists take stay and the others go back to the system, rather than sit idle, resident,
//     through the retained-size phases, where memory would then peak.
//  2. The retained sizes, bottom-up over the tree's preorder, on one core; the tree's child
//     lists on the other.
//  3. The immediate dominators and the preorder go: grouping by class and the suspects need only
//     the child lists and the retained sizes.
func (a *Analysis) RetainedSizes() error {
	if err := a.cols.In(colSizes); err != nil {
		return err
	}
	a.sc.Trim(2)
	if err := a.begin("retained sizes", "retained sizes"); err != nil {
		return err
	}
	tree, g, in, rep := a.tree, a.g, a.in, a.rep
	// Nothing else touches the tree's scratch arrays until the child lists are done.
	childrenDone := make(chan struct{})
	go func() { tree.Children(); close(childrenDone) }()
	ret := tree.Retained(g)
	rep.Stats = Stats{Objects: len(tree.Order) - 1, Edges: a.m - in.ApartEdges, TotalBytes: ret[0]}
	for v := 1; v < a.n; v++ {
		if !tree.Reachable(uint32(v)) && !in.Apart.Has(uint32(v)) {
			rep.OnlyWeak.Objects++
			rep.OnlyWeak.Bytes += g.SizeOf(uint32(v))
		}
	}
	<-childrenDone
	tree.ReleaseNodes()
	a.sc.Trim(0)
	a.ret = ret
	return nil
}
