package transformsvc

import (
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/passes"
	"github.com/heapledger/heapledger/rewrite/paths"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// siteLines parses an answer's site lines: ID → kind, TYPE, METHOD, OFFSET and LINE.
func siteLines(t *testing.T, table string) map[int][]string {
	t.Helper()
	out := map[int][]string{}
	for _, l := range strings.Split(table, "\n") {
		f := strings.Split(l, "\t")
		if f[0] != "site" {
			continue
		}
		id, err := strconv.Atoi(f[1])
		if err != nil {
			t.Fatalf("site line %q", l)
		}
		out[id] = f[2:]
	}
	return out
}

// A class sent again with a profile (--adapt) is planned by the pass Adapt makes, and its IDs
// are moved into the JVM's table: its sites count at the IDs the first version's sites have,
// so the answer names none of them again; its counters have new IDs, and their semantics point
// at the first version's sites.
func TestAdaptKeepsTheFirstVersionsSites(t *testing.T) {
	classes := realClasses(t, "ecj.jar", 40)
	set, err := accounts.Parse("org.eclipse.*")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(set)
	opts := passes.CountOptions{Accounts: set, Table: table, Paths: true, Edges: true}
	pass, err := passes.Count(opts)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Pass: pass, Table: table, Workers: 2}
	s.Adapt = func(tb *accounts.Table, profile string) (transform.Class, *paths.Profile, error) {
		if profile != "edges\tX\tm()V\th\t-1>0=1\n" {
			t.Errorf("profile %q", profile)
		}
		p := paths.NewProfile()
		o := opts
		o.Table, o.Edges, o.Profile = tb, false, p
		pc, err := passes.Count(o)
		return pc, p, err
	}
	first := serveInTurn(t, s, classes)
	// The same classes again, with a profile, in the same service: serving starts anew over
	// the same table and versions.
	again := classes
	second := serveInTurnWith(t, s, again, "edges\tX\tm()V\th\t-1>0=1\n")
	moved := 0
	for i := range classes {
		old := siteLines(t, first[i].Table)
		sites := map[string]bool{}
		for id, f := range old {
			if f[0] != accounts.KindEdge && f[0] != accounts.KindPath {
				sites[strconv.Itoa(id)] = true
			}
		}
		for id, f := range siteLines(t, second[i].Table) {
			if _, had := old[id]; had {
				t.Errorf("%s: ID %d named by both versions", classes[i].name, id)
			}
			if f[0] != accounts.KindPath {
				t.Errorf("%s: site %d %v named again", classes[i].name, id, f)
				continue
			}
			for _, w := range strings.Fields(f[1]) {
				off, _, _ := strings.Cut(w, "*")
				o, err := strconv.Atoi(off)
				if err != nil || !sites[strconv.Itoa(id+o)] {
					t.Errorf("%s: counter %d's %q names no site of the first version", classes[i].name, id, w)
				}
				moved++
			}
		}
	}
	if moved == 0 {
		t.Fatal("no class got path counters")
	}
}
