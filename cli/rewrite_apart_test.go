package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/internal/testjars"
)

// xalanJars are a real program of three jars nobody here wrote (Debian's libxalan2-java).
var xalanJars = []string{"xalan2.jar", "serializer.jar", "xercesImpl.jar"}

const xalanAccounts = "org.apache.xalan.*,org.apache.xml.*,org.apache.xpath.*,org.apache.xerces.*"

// writeXalanInput writes a small document and a stylesheet that groups and sorts it.
func writeXalanInput(t *testing.T, dir string) (in, xsl string) {
	t.Helper()
	var doc strings.Builder
	doc.WriteString("<catalogue>\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&doc, "<item id=\"%d\" category=\"c%d\"><name>item %d</name><price>%d.%02d</price></item>\n", i, i%7, i, i%90, i%100)
	}
	doc.WriteString("</catalogue>\n")
	in, xsl = filepath.Join(dir, "in.xml"), filepath.Join(dir, "s.xsl")
	style := `<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
<xsl:key name="cat" match="item" use="@category"/>
<xsl:template match="/"><report><xsl:for-each select="//item[generate-id() = generate-id(key('cat', @category)[1])]">
<xsl:sort select="@category"/><category name="{@category}" n="{count(key('cat', @category))}">
<xsl:for-each select="key('cat', @category)"><xsl:sort select="price" data-type="number"/><i><xsl:value-of select="concat(name, ':', price)"/></i></xsl:for-each>
</category></xsl:for-each></report></xsl:template></xsl:stylesheet>`
	if err := os.WriteFile(in, []byte(doc.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(xsl, []byte(style), 0o644); err != nil {
		t.Fatal(err)
	}
	return in, xsl
}

// runXalan runs the transform on the class path cp and returns its snapshot and output.
func runXalan(t *testing.T, cp []string, in, xsl string) (*snapshot.Snapshot, []byte) {
	t.Helper()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.xml")
	cmd := exec.Command("java", "-Dheapledger.snapshot.dir="+dir, "-cp", strings.Join(append(cp, os.Getenv("HEAPLEDGER_RUNTIME")), string(os.PathListSeparator)),
		"org.apache.xalan.xslt.Process", "-IN", in, "-XSL", xsl, "-OUT", out)
	if b, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(b), "heapledger:") {
		t.Fatalf("xalan: %v\n%s", err, b)
	}
	found, _ := filepath.Glob(filepath.Join(dir, "*.snapshot"))
	if len(found) != 1 {
		t.Fatalf("snapshots: %v", found)
	}
	s, err := snapshot.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	result, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return s, result
}

// bySiteName sums a snapshot's objects by account and site as the table names them, so two
// runs whose IDs differ can be compared.
func bySiteName(s *snapshot.Snapshot) map[string]int64 {
	m := map[string]int64{}
	for _, r := range s.Rows {
		site := s.Sites[r.Site]
		m[fmt.Sprintf("%s|%s|%s|%s@%d|%d", s.AccountName(r.Account), site.Kind, site.Type, site.Method, site.Offset, r.Part)] += r.Count
	}
	return m
}

// xalanOthers are, for each jar of xalanJars, the patterns of xalanAccounts meant for the
// others: those that match none of its classes.
var xalanOthers = map[string]string{
	"xalan2.jar":     "pattern org.apache.xerces.*",
	"serializer.jar": "patterns org.apache.xalan.*, org.apache.xpath.*, org.apache.xerces.*",
	"xercesImpl.jar": "patterns org.apache.xalan.*, org.apache.xpath.*",
}

// TestRealJarsRewrittenApart: the three jars of Xalan, each rewritten on its own with default
// options, run together exactly as when rewritten at once (issue 37: both tables numbered
// their sites from 1, and a library's site was charged what the application allocated). As
// docs/formats.md says, each is rewritten with the whole program's --accounts: no rewrite
// warns of the patterns meant for the other jars, one note names them (issue 37 item 7).
func TestRealJarsRewrittenApart(t *testing.T) {
	needJDK(t)
	dir := t.TempDir()
	var jars, apart []string
	for _, j := range xalanJars {
		p := testjars.Path(t, j)
		jars = append(jars, p)
		out := filepath.Join(dir, "apart-"+j)
		_, stderr, err := runCLI(t, "rewrite", "--pass", "count", "--accounts", xalanAccounts, p, "-o", out)
		if err != nil {
			t.Fatalf("rewrite %s: %v\n%s", j, err, stderr)
		}
		checkOthersNoted(t, j, stderr)
		apart = append(apart, out)
	}
	together := filepath.Join(dir, "together.jar")
	if _, stderr, err := runCLI(t, append([]string{"rewrite", "--pass", "count", "--accounts", xalanAccounts, "-o", together}, jars...)...); err != nil {
		t.Fatalf("rewrite together: %v\n%s", err, stderr)
	}
	in, xsl := writeXalanInput(t, dir)
	sApart, outApart := runXalan(t, apart, in, xsl)
	sTogether, outTogether := runXalan(t, []string{together}, in, xsl)
	if !bytes.Equal(outApart, outTogether) {
		t.Fatal("the program's output differs between the two rewrites")
	}
	if c := sApart.Header["clashes"]; c != "" {
		t.Fatalf("the jars rewritten apart clashed: %s", c)
	}
	a, b := bySiteName(sApart), bySiteName(sTogether)
	var diff []string
	for k, v := range b {
		if a[k] != v {
			diff = append(diff, fmt.Sprintf("%s: apart %d, together %d", k, a[k], v))
		}
	}
	for k, v := range a {
		if _, ok := b[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s: apart %d, together none", k, v))
		}
	}
	if len(diff) > 0 {
		t.Errorf("%d of %d sites differ, e.g.:\n%s", len(diff), len(b), strings.Join(diff[:min(len(diff), 10)], "\n"))
	}
	if len(b) < 100 {
		t.Errorf("only %d sites counted: the run did not exercise the jars", len(b))
	}
}

// checkOthersNoted fails t unless the stderr of jar's rewrite with xalanAccounts has no
// warning and one note naming the patterns meant for the other jars.
func checkOthersNoted(t *testing.T, jar, stderr string) {
	t.Helper()
	want := "note: account " + xalanOthers[jar] + " matched no class of the input (as expected when one --accounts list serves several jars rewritten apart; "
	notes := 0
	for _, line := range strings.Split(stderr, "\n") {
		switch {
		case strings.HasPrefix(line, "warning:"):
			t.Errorf("rewrite %s warns on the documented workflow: %s", jar, line)
		case strings.HasPrefix(line, "note:"):
			notes++
			if !strings.HasPrefix(line, want) {
				t.Errorf("rewrite %s: note\n%s\nwant it to start\n%s", jar, line, want)
			}
		}
	}
	if notes != 1 {
		t.Errorf("rewrite %s: %d notes, want 1:\n%s", jar, notes, stderr)
	}
}

// TestRewriteIsReproducible: the same input and options give byte-identical output, whatever
// the number of workers and however they are scheduled (issue 37: site IDs followed the order in
// which workers finished). Build caches and reproducible builds depend on it. It holds for one
// jar and for the three jars of a program rewritten together in one run, where entries of
// several inputs are merged and share one table.
func TestRewriteIsReproducible(t *testing.T) {
	cases := []struct {
		name, accounts string
		jars, jobs     []string
	}{
		{"xalan2", "*", []string{"xalan2.jar"}, []string{"4", "3", "8", "1"}},
		{"xalan-program", xalanAccounts, xalanJars, []string{"8", "3", "1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var in []string
			for _, j := range c.jars {
				in = append(in, testjars.Path(t, j))
			}
			dir := t.TempDir()
			var first, firstTable []byte
			for i, jobs := range c.jobs {
				out := filepath.Join(dir, fmt.Sprintf("out%d.jar", i))
				args := append([]string{"rewrite", "--pass", "count", "--accounts", c.accounts, "-j", jobs, "-o", out}, in...)
				if _, stderr, err := runCLI(t, args...); err != nil {
					t.Fatalf("rewrite -j %s: %v\n%s", jobs, err, stderr)
				}
				data, table := readOutput(t, out)
				if i == 0 {
					first, firstTable = data, table
					continue
				}
				if !bytes.Equal(table, firstTable) {
					t.Errorf("-j %s: the table differs from -j %s's", jobs, c.jobs[0])
				}
				if !bytes.Equal(data, first) {
					t.Errorf("-j %s: the jar differs from -j %s's", jobs, c.jobs[0])
				}
			}
		})
	}
}

// readOutput returns the jar a count-pass rewrite wrote to out and the table beside it.
func readOutput(t *testing.T, out string) (data, table []byte) {
	t.Helper()
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	table, err = os.ReadFile(out + ".table.tsv")
	if err != nil {
		t.Fatal(err)
	}
	return data, table
}
