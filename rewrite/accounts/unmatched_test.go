package accounts

import (
	"strings"
	"testing"
)

func TestUnmatched(t *testing.T) {
	classes := []string{"com/acme/Main", "com/acme/util/Strings", "org/lib/core/Node", "Top"}
	for _, c := range []struct {
		list string
		want []string // pattern: hint fragment ("" for none)
	}{
		{"com.acme.*,org.lib.*", nil},
		{"com.acme,com.acme.util", nil},
		{"com.acmee.*", []string{"com.acmee.*:com.acme is one letter away: did you mean com.acme.*?"}},
		{"com.amce.util", []string{"com.amce.util:com.acme.util is one letter away: did you mean com.acme.util?"}},
		{"com.acme.utl.*", []string{"com.acme.utl.*:com.acme.util is one letter away: did you mean com.acme.util.*?"}},
		{"org.lb.cor", []string{"org.lb.cor:org.lib.core is 2 letters away: did you mean org.lib.core?"}},
		{"org.lob", []string{"org.lob:org.lib is one letter away: did you mean org.lib.*?"}},
		{"com.acme.*,net.other.*,org.xyz.*", []string{"net.other.*:", "org.xyz.*:"}},
		{"com.acme.Main", []string{"com.acme.Main:com.acme.Main is a class, and patterns name packages: its package is com.acme"}},
		{"com.acme.Main.*", []string{"com.acme.Main.*:com.acme.Main is a class"}},
		{"org.lib", []string{"org.lib:org.lib holds no classes of its own, only subpackages: org.lib.* takes them in"}},
		{"org.lib.*,Top.*", []string{"Top.*:Top is a class, and patterns name packages: its package is the default package"}},
		{"*", nil},
	} {
		s, err := Parse(c.list)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Unmatched(classes)
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.list, got, c.want)
			continue
		}
		for i, w := range c.want {
			pat, hint, _ := strings.Cut(w, ":")
			if got[i].Pattern != pat || !strings.HasPrefix(got[i].Hint, hint) || (hint == "" && got[i].Hint != "") {
				t.Errorf("%s: got %+v, want pattern %s hint %q", c.list, got[i], pat, hint)
			}
		}
	}
	if s, _ := Parse("*"); len(s.Unmatched(nil)) != 1 {
		t.Error(`"*" over no classes at all is unmatched`)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "abc", 0}, {"", "abc", 3}, {"com/acmee", "com/acme", 1},
		{"com/amce", "com/acme", 1}, {"kitten", "sitting", 3}, {"org/lb", "org/lib", 1}, {"ca", "abc", 3},
	} {
		if got := editDistance(c.a, c.b); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := editDistance(c.b, c.a); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.b, c.a, got, c.want)
		}
	}
}
