// Package accounts decides which memory account a class belongs to, and keeps the table that
// names accounts and allocation sites by the integer IDs compiled into rewritten code.
//
// A pattern "a.b" holds the classes directly in package a.b; "a.b.*" holds a.b and all its
// subpackages; "*" holds every class. A class belongs to the most specific pattern that
// matches it: the one naming the longest package, and at equal length the exact package over
// the wildcard. Classes in no account do not switch accounts, so their allocations are charged
// to the nearest accounted caller (definition 3 of "Aggregated accounting of memory usage in
// Java").
package accounts

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Unaccounted is the account of allocations with no accounted method on the stack.
const Unaccounted = 0

// UnaccountedName is its name in tables and reports.
const UnaccountedName = "<unaccounted>"

// Account is a named set of package patterns.
type Account struct {
	Name     string
	Patterns []string
}

// Set is the accounts of one rewrite, in the order the user gave them.
type Set struct {
	Accounts []Account
	exact    map[string]int // package (internal form, "a/b") → index into Accounts
	wild     map[string]int // package prefix for "a.b.*" → index
	all      int            // index for "*", -1 if none
}

// Parse builds a Set from patterns such as "com.acme.*,org.lib"; each pattern is its own
// account named by the pattern.
func Parse(list string) (*Set, error) {
	var accts []Account
	for _, p := range strings.Split(list, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		accts = append(accts, Account{Name: p, Patterns: []string{p}})
	}
	return New(accts)
}

// ReadFile reads an accounts file: one account per line, either a bare pattern (named by
// itself) or "NAME = pattern, pattern, ..." to group several patterns under one name. Blank
// lines and lines starting with # are ignored.
func ReadFile(path string) ([]Account, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var accts []Account
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		name, pats := text, text
		if i := strings.Index(text, "="); i >= 0 {
			name, pats = strings.TrimSpace(text[:i]), text[i+1:]
			if name == "" {
				return nil, fmt.Errorf("%s:%d: account name before '=' is empty", path, line)
			}
		}
		var ps []string
		for _, p := range strings.Split(pats, ",") {
			if p = strings.TrimSpace(p); p != "" {
				ps = append(ps, p)
			}
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("%s:%d: account %q has no patterns", path, line, name)
		}
		accts = append(accts, Account{Name: name, Patterns: ps})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return accts, nil
}

// New checks the accounts and builds the matcher. A pattern given twice, or an account name
// given twice, is an error: it would make the charge ambiguous.
func New(accts []Account) (*Set, error) {
	s := &Set{Accounts: accts, exact: map[string]int{}, wild: map[string]int{}, all: -1}
	names := map[string]bool{}
	for i, a := range accts {
		if names[a.Name] {
			return nil, fmt.Errorf("account %q is named twice", a.Name)
		}
		if a.Name == UnaccountedName {
			return nil, fmt.Errorf("account name %q is reserved", a.Name)
		}
		names[a.Name] = true
		for _, p := range a.Patterns {
			if err := s.add(p, i); err != nil {
				return nil, fmt.Errorf("account %q: %w", a.Name, err)
			}
		}
	}
	return s, nil
}

func (s *Set) add(p string, i int) error {
	if p == "*" {
		if s.all >= 0 {
			return fmt.Errorf("pattern \"*\" given twice")
		}
		s.all = i
		return nil
	}
	wild := strings.HasSuffix(p, ".*")
	pkg := strings.TrimSuffix(p, ".*")
	for _, part := range strings.Split(pkg, ".") {
		if part == "" || !validIdent(part) {
			return fmt.Errorf("pattern %q is not a package name or package.* (e.g. com.acme or com.acme.*)", p)
		}
	}
	internal := classfile.InternalName(pkg)
	m := s.exact
	if wild {
		m = s.wild
	}
	if j, dup := m[internal]; dup {
		return fmt.Errorf("pattern %q is also in account %q", p, s.Accounts[j].Name)
	}
	m[internal] = i
	return nil
}

func validIdent(s string) bool {
	for i, r := range s {
		if r == '$' || r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || r > 127 || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}

// Of returns the account ID (1-based: the position in Accounts plus one) of a class given by
// its internal name ("com/acme/Foo$Bar"), or Unaccounted.
func (s *Set) Of(internalName string) int {
	pkg := ""
	if i := strings.LastIndexByte(internalName, '/'); i >= 0 {
		pkg = internalName[:i]
	}
	if i, ok := s.exact[pkg]; ok {
		return i + 1
	}
	for p := pkg; ; {
		if i, ok := s.wild[p]; ok && p != "" {
			return i + 1
		}
		j := strings.LastIndexByte(p, '/')
		if j < 0 {
			break
		}
		p = p[:j]
	}
	if s.all >= 0 {
		return s.all + 1
	}
	return Unaccounted
}

// CoversAll reports whether every class belongs to some account (the pattern "*" is given).
func (s *Set) CoversAll() bool { return s != nil && s.all >= 0 }

// Name returns the name of an account ID.
func (s *Set) Name(id int) string {
	if id <= 0 || id > len(s.Accounts) {
		return UnaccountedName
	}
	return s.Accounts[id-1].Name
}
