package paths

// Plan is what the count pass inserts for one method: the counters (steps 4 and 5) and the
// deficit classes of step 6.
type Plan struct {
	Paths []Path
	// Counters are the counter edges whose semantics is not empty, by edge index.
	Counters []Counter
	// Class[b] is the deficit class of block b: 0 when nothing is owed there (D(b) empty),
	// else k, whose correction is Corrections[k-1]. The program's progress local holds the
	// class of the block it is in.
	Class       []int
	Corrections []Vec
}

// Counter is one counter: its edge and the sites, with multiplicity, one increment stands for.
type Counter struct {
	Edge int
	Sem  Vec
}

// MakePlan runs steps 3 to 6 on g with the edge frequencies freq. With keepEmpty every chord
// of the spanning tree keeps its counter, empty semantics included: a profiling run
// (--counters edges) counts every chord, from which flow conservation gives every edge's count
// (ObservedFlow).
func MakePlan(g *Graph, freq []float64, keepEmpty bool) (*Plan, error) {
	ps := BuildPaths(g, freq)
	counters := Place(g, ps, freq)
	d, sem, err := Semantics(g, counters)
	if err != nil {
		return nil, err
	}
	p := &Plan{Paths: ps, Class: make([]int, g.N)}
	for _, e := range counters {
		if len(sem[e]) > 0 || keepEmpty {
			p.Counters = append(p.Counters, Counter{e, sem[e]})
		}
	}
	classes := map[string]int{"": 0}
	for b, v := range d {
		k := v.Key()
		c, ok := classes[k]
		if !ok {
			p.Corrections = append(p.Corrections, v)
			c = len(p.Corrections)
			classes[k] = c
		}
		p.Class[b] = c
	}
	return p, nil
}

// Cost is the increments the plan's counters run per execution of the method when its edges
// are taken freq times (exceptions left out: their corrections run only when one is caught or
// leaves).
func (p *Plan) Cost(freq []float64) float64 {
	c := 0.0
	for _, k := range p.Counters {
		c += freq[k.Edge]
	}
	return c
}

// SiteCost is the increments per-site counting runs per execution of the method when its edges
// are taken freq times: each block's sites, as often as control enters the block.
func SiteCost(g *Graph, freq []float64) float64 {
	c := 0.0
	for i, e := range g.Edges {
		if e.To != g.X() {
			c += freq[i] * float64(len(g.Sites[e.To]))
		}
	}
	return c
}

// AfterCounter returns the deficit class once edge e's counter ran: D of its end block, or none
// at X.
func (p *Plan) AfterCounter(g *Graph, e int) int {
	if to := g.Edges[e].To; to != g.X() {
		return p.Class[to]
	}
	return 0
}

// StaticFreq estimates edge frequencies for a method never profiled (step 2): the entry is run
// once, handlers almost never; a block splits its flow evenly over its successors, except that
// a loop's back edge (found by a depth-first search from the entry), or a block's edge that
// stays in a loop when another leaves it (a loop test at the top), is taken eight times as
// often as each other, and an edge to a block from which no return can be reached (it ends in a throw) gets a
// hundredth of the weight. Block frequencies then follow by propagation, nested loops
// multiplying.
func StaticFreq(g *Graph, entry int, returns []bool) []float64 {
	g.index()
	back := backEdges(g, entry)
	exits := loopExits(g, back)
	live := reachesReturn(g, returns)
	prob := make([]float64, len(g.Edges))
	for n := 0; n <= g.N; n++ {
		total := 0.0
		w := make([]float64, len(g.outOf(n)))
		for i, e := range g.outOf(n) {
			to := g.Edges[e].To
			switch {
			case n == g.X() && to == entry:
				w[i] = 1
			case n == g.X():
				w[i] = 0.001 // an exception handler
			case back[e] || exits[n] && !exits[e+g.N+1]:
				w[i] = 8 // stays in the loop (the back edge, or a test's way into the body)
			case to != g.X() && !live[to] && live[n]:
				w[i] = 0.01
			default:
				w[i] = 1
			}
			total += w[i]
		}
		for i, e := range g.outOf(n) {
			if n == g.X() {
				prob[e] = w[i]
			} else {
				prob[e] = w[i] / total
			}
		}
	}
	f := make([]float64, g.N+1)
	for iter := 0; iter < 60; iter++ {
		next := make([]float64, g.N+1)
		for _, e := range g.outOf(g.X()) {
			next[g.Edges[e].To] += prob[e]
		}
		for i, e := range g.Edges {
			if e.From != g.X() && e.To != g.X() {
				next[e.To] += f[e.From] * prob[i]
			}
		}
		f = next
	}
	f[g.X()] = 1
	freq := make([]float64, len(g.Edges))
	for i, e := range g.Edges {
		freq[i] = f[e.From] * prob[i]
	}
	return freq
}

// backEdges marks the edges that lead to a block on the depth-first search stack from entry.
func backEdges(g *Graph, entry int) []bool {
	back := make([]bool, len(g.Edges))
	state := make([]uint8, g.N+1) // 0 new, 1 on the stack, 2 done
	type frame struct{ n, i int }
	stack := []frame{{entry, 0}}
	state[entry] = 1
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		out := g.outOf(top.n)
		if top.i == len(out) {
			state[top.n] = 2
			stack = stack[:len(stack)-1]
			continue
		}
		e := out[top.i]
		top.i++
		to := g.Edges[e].To
		if to == g.X() {
			continue
		}
		switch state[to] {
		case 1:
			back[e] = true
		case 0:
			state[to] = 1
			stack = append(stack, frame{to, 0})
		}
	}
	return back
}

// loopExits marks, in one slice, the blocks n with an edge that leaves a loop containing n
// (index n) and those edges (index len(nodes) + edge). A loop is the natural loop of a back
// edge s→h: h and the blocks that reach s without passing h.
func loopExits(g *Graph, back []bool) []bool {
	out := make([]bool, g.N+1+len(g.Edges))
	for be, isBack := range back {
		if !isBack {
			continue
		}
		h, s := g.Edges[be].To, g.Edges[be].From
		in := map[int]bool{h: true, s: true}
		work := []int{s}
		for len(work) > 0 {
			n := work[len(work)-1]
			work = work[:len(work)-1]
			for _, e := range g.inOf(n) {
				if from := g.Edges[e].From; from != g.X() && !in[from] {
					in[from] = true
					work = append(work, from)
				}
			}
		}
		for n := range in {
			for _, e := range g.outOf(n) {
				if !in[g.Edges[e].To] {
					out[n] = true
					out[g.N+1+e] = true
				}
			}
		}
	}
	return out
}

// reachesReturn marks the blocks from which a block that returns (returns[b]) is reachable.
func reachesReturn(g *Graph, returns []bool) []bool {
	live := make([]bool, g.N+1)
	var work []int
	for b := 0; b < g.N; b++ {
		if returns[b] {
			live[b] = true
			work = append(work, b)
		}
	}
	for len(work) > 0 {
		n := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range g.inOf(n) {
			if from := g.Edges[e].From; from != g.X() && !live[from] {
				live[from] = true
				work = append(work, from)
			}
		}
	}
	return live
}
