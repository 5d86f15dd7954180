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
		{"com.acmee.*", []string{"com.acmee.*:"}},
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
