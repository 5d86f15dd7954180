package accounts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMostSpecificPatternWins(t *testing.T) {
	s, err := Parse("com.acme.*, com.acme.db, com.acme.db.*, org.lib")
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"com/acme/App":           "com.acme.*",
		"com/acme/web/Servlet":   "com.acme.*",
		"com/acme/db/Pool":       "com.acme.db",   // exact package beats the wildcard of the same package
		"com/acme/db/jdbc/Conn":  "com.acme.db.*", // longest package wins
		"org/lib/Cache$Entry":    "org.lib",
		"org/lib/sub/Deep":       UnaccountedName, // org.lib has no wildcard
		"Main":                   UnaccountedName, // default package
		"com/acmeX/NotOurs":      UnaccountedName,
		"java/lang/StringBuffer": UnaccountedName,
	}
	for class, want := range cases {
		if got := s.Name(s.Of(class)); got != want {
			t.Errorf("%s: got %q want %q", class, got, want)
		}
	}
}

func TestStarMatchesEverything(t *testing.T) {
	s, err := Parse("*,com.acme")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name(s.Of("Main")) != "*" || s.Name(s.Of("com/acme/A")) != "com.acme" || s.Name(s.Of("x/y/Z")) != "*" {
		t.Error("* must catch what nothing more specific does")
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"com..acme", "com.acme.", "com/acme", "1com.x", "com.acme, com.acme", "a.*.b"} {
		if _, err := Parse(p); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
}

func TestReadFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "accounts")
	os.WriteFile(p, []byte("# the web tier\nweb = com.acme.web.*, com.acme.servlet\norg.lib.*\n\n"), 0o644)
	accts, err := ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(accts)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name(s.Of("com/acme/servlet/S")) != "web" || s.Name(s.Of("org/lib/x/Y")) != "org.lib.*" {
		t.Errorf("%+v", accts)
	}
	os.WriteFile(p, []byte("web = \n"), 0o644)
	if _, err := ReadFile(p); err == nil || !strings.Contains(err.Error(), ":1:") {
		t.Errorf("error should name file and line: %v", err)
	}
}
