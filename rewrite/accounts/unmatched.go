package accounts

import (
	"fmt"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Unmatched is a pattern that matched none of the classes a rewrite saw: its account stays
// empty, and what its classes allocate lands in another account or in <unaccounted>.
type Unmatched struct {
	Account, Pattern string
	// Hint says what the user may have meant, when the classes suggest it ("" otherwise).
	Hint string
}

// String names the pattern and its account: "account pattern com.acmee.*", or "pattern
// com.acmee of account acme" when the account has another name.
func (u Unmatched) String() string {
	if u.Account != u.Pattern {
		return fmt.Sprintf("pattern %s of account %s", u.Pattern, u.Account)
	}
	return "account pattern " + u.Pattern
}

// Unmatched returns the patterns of s that match none of classes (internal names), in the
// order the accounts were given. A pattern matches a class whether or not a more specific one
// takes it; "*" matches any. Two slips get a hint: a class named as a package (com.acme.Main,
// whose package is com.acme), and a package that holds no classes of its own, only subpackages
// (com.acme for com.acme.*).
func (s *Set) Unmatched(classes []string) []Unmatched {
	pkgs := map[string]bool{}
	isClass := map[string]bool{}
	for _, c := range classes {
		isClass[c] = true
		if i := strings.LastIndexByte(c, '/'); i >= 0 {
			pkgs[c[:i]] = true
		} else {
			pkgs[""] = true
		}
	}
	var out []Unmatched
	for _, a := range s.Accounts {
		for _, p := range a.Patterns {
			if p == "*" {
				if len(classes) == 0 {
					out = append(out, Unmatched{Account: a.Name, Pattern: p})
				}
				continue
			}
			wild := strings.HasSuffix(p, ".*")
			pkg := classfile.InternalName(strings.TrimSuffix(p, ".*"))
			if pkgs[pkg] || wild && hasSubpackage(pkgs, pkg) {
				continue
			}
			u := Unmatched{Account: a.Name, Pattern: p}
			switch {
			case isClass[pkg]:
				owner := "the default package"
				if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
					owner = classfile.JavaName(pkg[:i])
				}
				u.Hint = fmt.Sprintf("%s is a class, and patterns name packages: its package is %s", strings.TrimSuffix(p, ".*"), owner)
			case !wild && hasSubpackage(pkgs, pkg):
				u.Hint = fmt.Sprintf("%s holds no classes of its own, only subpackages: %s.* takes them in", p, p)
			}
			out = append(out, u)
		}
	}
	return out
}

// hasSubpackage reports whether pkgs holds pkg's subpackages (pkg itself aside).
func hasSubpackage(pkgs map[string]bool, pkg string) bool {
	prefix := pkg + "/"
	for k := range pkgs {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}
