package accounts

import (
	"fmt"
	"sort"
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
// takes it; "*" matches any. Three slips get a hint (inputPackages.hint): a class named as a
// package (com.acme.Main, whose package is com.acme), a package that holds no classes of its
// own, only subpackages (com.acme for com.acme.*), and a near miss of a package that is there
// (com.acmee for com.acme). A pattern with no hint may just be meant for other classes, such
// as another jar's when one list serves several jars rewritten apart.
func (s *Set) Unmatched(classes []string) []Unmatched {
	in := newInputPackages(classes)
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
			if in.pkgs[pkg] || wild && hasSubpackage(in.pkgs, pkg) {
				continue
			}
			out = append(out, Unmatched{Account: a.Name, Pattern: p, Hint: in.hint(p, pkg, wild)})
		}
	}
	return out
}

// inputPackages are the packages of the classes a rewrite saw.
type inputPackages struct {
	pkgs    map[string]bool // the packages that hold classes, internal names
	isClass map[string]bool // the classes
	names   []string        // the packages and their ancestors, sorted, for near misses
}

func newInputPackages(classes []string) *inputPackages {
	in := &inputPackages{pkgs: map[string]bool{}, isClass: map[string]bool{}}
	for _, c := range classes {
		in.isClass[c] = true
		if i := strings.LastIndexByte(c, '/'); i >= 0 {
			in.pkgs[c[:i]] = true
		} else {
			in.pkgs[""] = true
		}
	}
	all := map[string]bool{}
	for p := range in.pkgs {
		for ; p != "" && !all[p]; p = p[:max(strings.LastIndexByte(p, '/'), 0)] {
			all[p] = true
		}
	}
	for p := range all {
		in.names = append(in.names, p)
	}
	sort.Strings(in.names)
	return in
}

// hint says what the unmatched pattern p (package pkg, internal name; wild when it ends in
// ".*") was probably meant to be, or "" when the classes suggest nothing.
func (in *inputPackages) hint(p, pkg string, wild bool) string {
	switch {
	case in.isClass[pkg]:
		owner := "the default package"
		if i := strings.LastIndexByte(pkg, '/'); i >= 0 {
			owner = classfile.JavaName(pkg[:i])
		}
		return fmt.Sprintf("%s is a class, and patterns name packages: its package is %s", strings.TrimSuffix(p, ".*"), owner)
	case !wild && hasSubpackage(in.pkgs, pkg):
		return fmt.Sprintf("%s holds no classes of its own, only subpackages: %s.* takes them in", p, p)
	}
	near, d := in.nearest(pkg)
	if near == "" {
		return ""
	}
	meant := classfile.JavaName(near)
	if wild || !in.pkgs[near] {
		meant += ".*"
	}
	letters := "one letter"
	if d > 1 {
		letters = fmt.Sprintf("%d letters", d)
	}
	return fmt.Sprintf("%s is %s away: did you mean %s?", classfile.JavaName(near), letters, meant)
}

// nearest returns the package (or ancestor of one) of the input closest to pkg and how many
// edits away it is, or "" when none is close enough to be a typo of it: at most two edits,
// and at most one for every four characters, so that short names of other libraries are not
// taken for slips. Ties go to the first in order, so the hint is the same on every run.
func (in *inputPackages) nearest(pkg string) (string, int) {
	limit := min(2, len(pkg)/4)
	best, bestD := "", limit+1
	for _, q := range in.names {
		if abs(len(q)-len(pkg)) >= bestD {
			continue
		}
		if d := editDistance(pkg, q); d > 0 && d < bestD {
			best, bestD = q, d
		}
	}
	return best, bestD
}

// editDistance counts the insertions, deletions, substitutions and swaps of neighbours that
// turn a into b (the optimal string alignment distance: each character is edited once).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
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
