package snapshot

import (
	"reflect"
	"strings"
	"testing"
)

// A version 4 snapshot with calling contexts, in both encodings: the runtime writes methods as
// sites of kind method, nodes in preorder and each node's rows.
const sampleContexts = `# heapledger snapshot 4
reason	exit
program	P
pid	7
context	cct depth=512 nodes=100000 threads_nodes=3 depth_cut_calls=0 node_cut_calls=2
account	1	a
site	10	method	p.M	p.M.main([Ljava/lang/String;)V	0	3
site	11	object	p.X	p.M.main([Ljava/lang/String;)V	4	5
site	12	method	p.M	p.M.f()V	0	9
site	13	array	int[]	p.M.f()V	1	10
alloc	1	11	0	2	0	32	-	-	-	-	-	-	-
alloc	1	13	0	5	50	400	-	-	-	-	-	-	-
node	1	0	10	1	1
node	2	1	12	1	5
node	3	1	-1	1	2
calloc	1	1	11	0	2	0	32
calloc	2	1	13	0	5	50	400
end
`

const sampleContextsJSON = `{"format":"heapledger-snapshot","version":4,"reason":"exit","program":"P","pid":7,
"context":"cct depth=512 nodes=100000 threads_nodes=3 depth_cut_calls=0 node_cut_calls=2",
"accounts":{"1":"a"},
"sites":{"10":["method","p.M","p.M.main([Ljava/lang/String;)V",0,3],"11":["object","p.X","p.M.main([Ljava/lang/String;)V",4,5],
"12":["method","p.M","p.M.f()V",0,9],"13":["array","int[]","p.M.f()V",1,10]},
"allocations":[{"account":1,"site":11,"part":0,"count":2,"elements":0,"bytes":32},{"account":1,"site":13,"part":0,"count":5,"elements":50,"bytes":400}],
"contexts":{"nodes":[[1,0,10,1,1],[2,1,12,1,5],[3,1,-1,1,2]],"allocations":[[1,1,11,0,2,0,32],[2,1,13,0,5,50,400]]}}`

func TestReadContexts(t *testing.T) {
	for name, text := range map[string]string{"text": sampleContexts, "json": sampleContextsJSON} {
		s, err := Read(strings.NewReader(text))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(s.Sites) != 2 || len(s.Methods) != 2 {
			t.Errorf("%s: %d sites and %d methods, want 2 and 2 (methods apart)", name, len(s.Sites), len(s.Methods))
		}
		if len(s.Contexts) != 4 || !reflect.DeepEqual(s.Contexts[1].Children, []int{2, 3}) {
			t.Fatalf("%s: contexts %+v", name, s.Contexts)
		}
		if got := s.Stack(2); !reflect.DeepEqual(got, []string{"p.M.main([Ljava/lang/String;)V", "p.M.f()V"}) {
			t.Errorf("%s: stack %v", name, got)
		}
		if got := s.MethodName(s.Contexts[3].Method); got != "<other contexts>" {
			t.Errorf("%s: overflow node named %q", name, got)
		}
		rep := s.Summarize(5).Contexts
		if rep == nil || rep.Nodes[0].Total.Bytes != 432 || rep.Nodes[1].Self.Objects != 2 || rep.Nodes[2].Total.Arrays != 5 {
			t.Fatalf("%s: report %+v", name, rep)
		}
		if hot := rep.Hottest(1); len(hot) != 1 || hot[0] != 2 {
			t.Errorf("%s: hottest %v, want node 2", name, hot)
		}
	}
}

func TestReadContextsRejectsBadNodes(t *testing.T) {
	for _, bad := range []string{"node\t2\t0\t10\t1\t1\n", "node\t1\t1\t10\t1\t1\n", "calloc\t9\t1\t11\t0\t1\t0\t16\n", "node\t1\t0\tx\t1\t1\n"} {
		text := strings.Replace(sampleContexts, "node\t1\t0\t10\t1\t1\n", bad, 1)
		if _, err := Read(strings.NewReader(text)); err == nil {
			t.Errorf("%q read without an error", bad)
		}
	}
}
