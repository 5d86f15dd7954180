package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

func TestHeapHisto(t *testing.T) {
	dump := heapdumps.Dump(t)
	out, errOut, err := runCLI(t, "heap", "histo", dump, "--top", "50")
	if err != nil {
		t.Fatal(err)
	}
	if errOut != "" {
		t.Errorf("stderr not empty when it is not a terminal and --progress is not given: %q", errOut)
	}
	if !regexp.MustCompile(`\s2000\s+48000\s+heapfixture\.HeapFixture\$LeakedItem`).MatchString(out) {
		t.Errorf("LeakedItem line missing or wrong:\n%s", out)
	}
	var h struct {
		Classes []struct {
			Class     string
			Instances uint64
		}
	}
	cliJSON(t, &h, "heap", "histo", "--json", dump)
	found := false
	for _, c := range h.Classes {
		found = found || (c.Class == heapdumps.LeakClass && c.Instances == 2000)
	}
	if !found {
		t.Error("--json lacks the leak class with 2000 instances")
	}
	if _, _, err := runCLI(t, "heap", "histo"); err == nil {
		t.Error("histo without a file should fail")
	}
}

func TestHeapTrend(t *testing.T) {
	dump := heapdumps.Dump(t)
	// The jcmd histogram was taken after the dump by the same VM, so JMX classes "grow".
	out, _, err := runCLI(t, "heap", "trend", dump, dump+".histo", "--top", "3")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "100%"); n != 3 {
		t.Errorf("want 3 growers that grew in every interval:\n%s", out)
	}
	if _, _, err := runCLI(t, "heap", "trend", dump); err == nil {
		t.Error("trend of one input should fail")
	}
}
