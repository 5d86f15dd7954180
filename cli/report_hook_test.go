package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestReportKeepsInitRowsApart: with the Object.<init> hook's rows (fixtures/snapshots/
// objinit.snapshot, figures derived in its README), the totals count rewritten sites only and
// the hook's view is printed apart, in text and JSON.
func TestReportKeepsInitRowsApart(t *testing.T) {
	p := filepath.Join("..", "fixtures", "snapshots", "objinit.snapshot")
	out, _, err := runCLI(t, "report", p)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"214       5       500  4424 B  100.0%    97      1736 B        122               (total)",
		"not in the figures above: constructed 268 objects, 5024 B, 118 live; not seen at any rewritten site 54 objects, 1200 B, 21 live",
		"  constructed (Object.<init> hook; not in the totals above): 261 objects, 4856 B, 111 live\n" +
			"    not seen at any rewritten site: 47 objects, 1032 B, 14 live\n" +
			"    (60 objects of reflect and lambda sites",
		"40                      20              20           480 B             10  agentfix.objinit.Main$Point\n",
		"7                       0               7           168 B              7  java.util.ArrayList\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "<Object.<init>>") {
		t.Errorf("an init site among the top lists:\n%s", out)
	}
	type figures struct{ Objects, Bytes, Live int64 }
	var v struct {
		Total    figures
		Accounts []struct {
			Name   string
			Totals figures
			Hook   *struct {
				Constructed figures
				Unnamed     figures `json:"unnamed_sites"`
				NotSeen     figures `json:"not_seen"`
				Classes     []struct {
					Name    string
					AtSites figures `json:"at_sites"`
					NotSeen figures `json:"not_seen"`
				}
			} `json:"object_init_hook"`
		}
		Hook *struct {
			Constructed figures
			NotSeen     figures `json:"not_seen"`
		} `json:"object_init_hook"`
	}
	js := cliJSON(t, &v, "report", "--json", "--top", "0", p)
	if v.Total != (figures{214, 4424, 97}) || v.Hook == nil || v.Hook.Constructed != (figures{268, 5024, 118}) || v.Hook.NotSeen != (figures{54, 1200, 21}) {
		t.Fatalf("json totals and hook view: %s", js)
	}
	a := v.Accounts[0]
	if a.Name != "agentfix.objinit.*" || a.Hook == nil || a.Hook.NotSeen != (figures{47, 1032, 14}) || a.Hook.Unnamed != (figures{60, 960, 60}) || len(a.Hook.Classes) != 7 {
		t.Fatalf("json account hook view: %s", js)
	}
	if c := a.Hook.Classes[1]; c.Name != "agentfix.objinit.Main$Point" || c.AtSites != (figures{20, 480, 20}) || c.NotSeen != (figures{20, 480, 10}) {
		t.Errorf("json Point: %+v", c)
	}
}
