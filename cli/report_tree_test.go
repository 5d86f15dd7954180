package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// treeSnapshot has main → f → g (g allocates 5 int[]) and main allocating 2 p.X, with a node
// limit that cut 4 calls.
const treeSnapshot = "# heapledger snapshot 4\nreason\texit\nprogram\tP\npid\t7\n" +
	"context\tcct depth=512 nodes=3 threads_nodes=3 depth_cut_calls=0 node_cut_calls=4\n" +
	"account\t1\ta\n" +
	"site\t10\tmethod\tp.M\tp.M.main([Ljava/lang/String;)V\t0\t3\n" +
	"site\t11\tobject\tp.X\tp.M.main([Ljava/lang/String;)V\t4\t5\n" +
	"site\t12\tmethod\tp.M\tp.M.f()V\t0\t9\n" +
	"site\t13\tmethod\tp.M\tp.M.g(I)V\t0\t12\n" +
	"site\t14\tarray\tint[]\tp.M.g(I)V\t1\t13\n" +
	"alloc\t1\t11\t0\t2\t0\t32\t-\t-\t-\t-\t-\t-\t-\nalloc\t1\t14\t0\t5\t50\t400\t-\t-\t-\t-\t-\t-\t-\n" +
	"node\t1\t0\t10\t1\t1\nnode\t2\t1\t12\t1\t5\nnode\t3\t2\t13\t1\t5\n" +
	"calloc\t1\t1\t11\t0\t2\t0\t32\ncalloc\t3\t1\t14\t0\t5\t50\t400\nend\n"

func TestReportTree(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.snapshot")
	if err := os.WriteFile(p, []byte(treeSnapshot), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI(t, "report", "--tree", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"4 calls past a thread's node limit",
		"400 B, 0 objects, 5 arrays, 5 calls [a]\n      p.M.main([Ljava/lang/String;)V\n      p.M.f()V\n      p.M.g(I)V\n",
		"     432 B 100.0%         2        5         1    p.M.main([Ljava/lang/String;)V [a]\n",
		"     400 B  92.6%         0        5         5        p.M.g(I)V [a]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report --tree lacks %q:\n%s", want, out)
		}
	}
	// A threshold above g's share and a depth of one level leave f and g out.
	for _, args := range [][]string{{"--tree-threshold", "95"}, {"--tree-depth", "1"}} {
		out, _, err := runCLI(t, append(append([]string{"report", "--tree"}, args...), p)...)
		if err != nil {
			t.Fatal(err)
		}
		if tree := out[strings.Index(out, "\ntree"):]; strings.Contains(tree, "p.M.f()V") {
			t.Errorf("%v: f is in the tree:\n%s", args, out)
		}
	}
	out, _, err = runCLI(t, "report", "--json", p)
	if err != nil || !strings.Contains(out, `"contexts"`) || !strings.Contains(out, `"method": "p.M.g(I)V"`) {
		t.Errorf("--json lacks the tree (%v):\n%s", err, out)
	}
	if _, _, err := runCLI(t, "report", "--tree-depth", "3", p); err == nil {
		t.Errorf("--tree-depth without --tree was accepted")
	}
}

// --context takes what the runtime reads (Context.java) and nothing else.
func TestCheckContext(t *testing.T) {
	for _, ok := range []string{"cct", "cct:fold", "cct:depth=64", "cct:depth=64,nodes=1000,fold"} {
		if err := checkContext(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"tree", "cct:", "cct:depth=0", "cct:depth=x", "cct:nodes=-1", "cct:fold,width=3", "cctfold", "cct:depth=010"} {
		if err := checkContext(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
