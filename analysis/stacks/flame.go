package stacks

import (
	"cmp"
	"fmt"
	"slices"
)

// Node kinds of a flame graph tree.
const (
	NodeRoot    = "r"
	NodeAccount = "a"
	NodeMethod  = "m"
	NodeType    = "t"
)

// RootName names the root of a flame graph, as flamegraph.pl does.
const RootName = "all"

// Node is a frame of a flame graph: the samples whose stacks pass through it, merged. Its JSON
// is d3-flame-graph's input, short keys as that library reads them ("n", "c"), with the value
// of every sample type in "vs" (the page picks one into "v") so that one tree serves the
// allocated and the live graph, in bytes and in objects.
type Node struct {
	Name     string  `json:"n"`
	Kind     string  `json:"k"`           // NodeRoot, NodeAccount, NodeMethod or NodeType
	File     string  `json:"f,omitempty"` // a method's derived source file
	Values   []int64 `json:"vs"`          // one per Profile.Types, this frame and all above it
	Children []*Node `json:"c,omitempty"`
}

// Flame merges p's stacks into a tree rooted at RootName, children widest first by opt.Type
// (the default type when empty), then by name. Each node's values are the sums over the
// samples through it, so the root's are the profile's totals. A difference profile is
// refused: a flame graph of net changes would hide what rose under what fell.
func (p *Profile) Flame(opt StackOptions) (*Node, error) {
	if err := p.CheckValid(); err != nil {
		return nil, err
	}
	if p.HasBase() {
		return nil, fmt.Errorf("a difference profile has no flame graph here; write collapsed stacks (two columns) for flamegraph.pl's differential graph")
	}
	idx, err := p.valueIndex(opt)
	if err != nil {
		return nil, err
	}
	type key struct{ name, kind string }
	type building struct {
		*Node
		kids map[key]*building
	}
	newNode := func(name, kind, file string) *building {
		return &building{Node: &Node{Name: name, Kind: kind, File: file, Values: make([]int64, len(p.Types))}, kids: map[key]*building{}}
	}
	root := newNode(RootName, NodeRoot, "")
	add := func(b *building, v []int64) {
		for i, x := range v {
			b.Values[i] += x
		}
	}
	for _, s := range p.Samples {
		at := root
		add(at, s.Values)
		step := func(name, kind, file string) {
			k := key{name, kind}
			next := at.kids[k]
			if next == nil {
				next = newNode(name, kind, file)
				at.kids[k] = next
			}
			at = next
			add(at, s.Values)
		}
		if opt.Accounts {
			step(AccountFrame(s.Account), NodeAccount, "")
		}
		for i := len(s.Stack) - 1; i >= 0; i-- {
			f := s.Stack[i]
			kind := NodeMethod
			if f.Kind == TypeFrame {
				kind = NodeType
			}
			step(frameText(f, opt.Lines), kind, f.File)
		}
	}
	var finish func(b *building) *Node
	finish = func(b *building) *Node {
		for _, k := range b.kids {
			b.Children = append(b.Children, finish(k))
		}
		slices.SortFunc(b.Children, func(x, y *Node) int {
			return cmp.Or(cmp.Compare(y.Values[idx], x.Values[idx]), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Kind, y.Kind))
		})
		return b.Node
	}
	return finish(root), nil
}
