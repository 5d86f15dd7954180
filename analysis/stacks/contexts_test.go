package stacks

import (
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
)

// A version 4 snapshot with calling contexts: main → f → g, an overflow node below main, and
// liveness on (contexts carry none).
const contextsSnapshot = `# heapledger snapshot 4
reason	exit
program	P
pid	7
liveness	all
context	cct depth=512 nodes=3 threads_nodes=3 depth_cut_calls=0 node_cut_calls=4
account	1	a
site	10	method	p.M	p.M.main([Ljava/lang/String;)V	0	3
site	11	object	p.X	p.M.main([Ljava/lang/String;)V	4	5
site	12	method	p.M	p.M.f()V	0	9
site	13	method	p.M	p.M.g(I)V	0	12
site	14	array	int[]	p.M.g(I)V	1	13
alloc	1	11	0	3	0	48	1	16	2	32	0	1	1
alloc	1	14	0	5	50	400	5	400	0	0	0	1	5
node	1	0	10	1	1
node	2	1	12	1	5
node	3	2	13	1	5
node	4	1	-1	1	4
calloc	1	1	11	0	2	0	32
calloc	3	1	14	0	5	50	400
calloc	4	1	11	0	1	0	16
end
`

func TestFullStacksFromContexts(t *testing.T) {
	s, err := snapshot.Read(strings.NewReader(contextsSnapshot))
	if err != nil {
		t.Fatal(err)
	}
	p := FromSnapshot(s)
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	var stacks []string
	for _, smp := range p.Samples {
		if smp.Values[0] == 0 {
			continue // the per-site inuse samples
		}
		var names []string
		for _, f := range smp.Stack {
			names = append(names, f.Name)
		}
		stacks = append(stacks, strings.Join(names, ";"))
	}
	want := []string{
		"p.X;p.M.main(String[])",
		"int[];p.M.g(int);p.M.f();p.M.main(String[])",
		"p.X;p.M.main(String[]);<other contexts>;p.M.main(String[])",
	}
	if strings.Join(stacks, "\n") != strings.Join(want, "\n") {
		t.Errorf("stacks:\n%s\nwant:\n%s", strings.Join(stacks, "\n"), strings.Join(want, "\n"))
	}
	// The totals are the report's: allocations from the contexts, live figures per site.
	for typ, want := range map[string]int64{AllocObjects: 8, AllocSpace: 448, InuseObjects: 6, InuseSpace: 416} {
		if got := p.Total(p.Index(typ)); got != want {
			t.Errorf("%s: %d, want %d", typ, got, want)
		}
	}
	if !strings.Contains(strings.Join(p.Comments, "\n"), "calling contexts") {
		t.Errorf("comments do not say the stacks are calling contexts: %v", p.Comments)
	}
}
