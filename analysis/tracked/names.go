package tracked

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"

	"github.com/heapledger/heapledger/analysis/snapshot"
	"github.com/heapledger/heapledger/rewrite/accounts"
)

// Names names accounts and sites by ID: from the table the runtime held in the dump, a table
// file, or a snapshot of the same run (which names the sites that counted).
type Names struct {
	Accounts map[int]string
	Sites    map[int]snapshot.Site
	// From says where the names came from, each source once, in the order they were added.
	From []string
}

// NewNames returns names that name nothing yet.
func NewNames() *Names {
	return &Names{Accounts: map[int]string{}, Sites: map[int]snapshot.Site{}}
}

// TableNames reads a table (docs/formats.md) from r; source names it in From and in errors.
func TableNames(r io.Reader, source string) (*Names, error) {
	t, err := accounts.ReadTable(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	n := NewNames()
	n.From = []string{source}
	for id, name := range t.Accounts() {
		n.Accounts[id] = name
	}
	for _, id := range t.SiteIDs() {
		s, _ := t.Site(id)
		n.Sites[id] = snapshot.Site{ID: id, Kind: s.Kind, Type: s.Type, Method: s.Method, Offset: s.Offset, Line: s.Line}
	}
	return n, nil
}

// TableFile reads the table file at path.
func TableFile(path string) (*Names, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return TableNames(bytes.NewReader(data), path)
}

// SnapshotNames reads the names a snapshot (text or JSON) gives.
func SnapshotNames(path string) (*Names, error) {
	s, err := snapshot.ReadFile(path)
	if err != nil {
		return nil, err
	}
	n := NewNames()
	n.From = []string{path}
	maps.Copy(n.Accounts, s.Accounts)
	maps.Copy(n.Sites, s.Sites)
	return n, nil
}

// Add takes the names o gives that n lacks, and returns how many IDs o names otherwise than n
// does (a table of another build, say): those keep n's names.
func (n *Names) Add(o *Names) (differ int) {
	for id, name := range o.Accounts {
		if had, ok := n.Accounts[id]; !ok {
			n.Accounts[id] = name
		} else if had != name {
			differ++
		}
	}
	for id, s := range o.Sites {
		if had, ok := n.Sites[id]; !ok {
			n.Sites[id] = s
		} else if had != s {
			differ++
		}
	}
	for _, f := range o.From {
		if !slices.Contains(n.From, f) {
			n.From = append(n.From, f)
		}
	}
	return differ
}

// Account names account id, or says it is not named.
func (n *Names) Account(id int) string {
	return (&snapshot.Snapshot{Accounts: n.Accounts}).AccountName(id)
}

// Site names site id as reports do (its method, line, offset and type), or by its ID.
func (n *Names) Site(id int) string {
	if s, ok := n.Sites[id]; ok && s.Method != "" {
		return s.Where(s.Type)
	}
	return "site#" + strconv.Itoa(id)
}
