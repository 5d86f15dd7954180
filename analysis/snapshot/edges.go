package snapshot

import (
	"fmt"
	"strconv"
	"strings"
)

// MethodEdges is one method's line of an edge profile (docs/formats.md, "edges"): the method by
// its class (Java name), name and descriptor, and the hash of its original code, and the counts
// of its chords, each edge by the bytecode offsets where its blocks start (-1: the virtual
// node X, the method's entry and exits).
type MethodEdges struct {
	Class  string      `json:"class"`
	Method string      `json:"method"`
	Hash   string      `json:"hash"`
	Edges  []EdgeCount `json:"edges"`
}

// EdgeCount is how often control took the edge from the block starting at From to the block
// starting at To.
type EdgeCount struct {
	From, To int
	Count    int64
}

// addEdges reads "CLASS METHOD HASH FROM>TO=COUNT ...".
func (s *Snapshot) addEdges(f []string) error {
	if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" {
		return fmt.Errorf("edges needs CLASS, METHOD, HASH and the edges, has %d fields", len(f))
	}
	m := MethodEdges{Class: f[0], Method: f[1], Hash: f[2]}
	for _, w := range strings.Fields(f[3]) {
		var e EdgeCount
		edge, count, ok := strings.Cut(w, "=")
		from, to, ok2 := strings.Cut(edge, ">")
		var err [3]error
		e.From, err[0] = strconv.Atoi(from)
		e.To, err[1] = strconv.Atoi(to)
		e.Count, err[2] = strconv.ParseInt(count, 10, 64)
		if !ok || !ok2 || err[0] != nil || err[1] != nil || err[2] != nil || e.Count < 0 {
			return fmt.Errorf("edge %q of %s.%s: want FROM>TO=COUNT", w, m.Class, m.Method)
		}
		m.Edges = append(m.Edges, e)
	}
	if len(m.Edges) == 0 {
		return fmt.Errorf("edges of %s.%s: none", m.Class, m.Method)
	}
	s.Edges = append(s.Edges, m)
	return nil
}

// jsonEdges is one method of the JSON twin's "edges": edges as [FROM, TO, COUNT].
type jsonEdges struct {
	Class, Method, Hash string
	Edges               [][3]int64
}

func (s *Snapshot) readJSONEdges(in []jsonEdges) error {
	for _, j := range in {
		f := []string{j.Class, j.Method, j.Hash, ""}
		var words []string
		for _, e := range j.Edges {
			words = append(words, fmt.Sprintf("%d>%d=%d", e[0], e[1], e[2]))
		}
		f[3] = strings.Join(words, " ")
		if err := s.addEdges(f); err != nil {
			return fmt.Errorf("JSON snapshot: %w", err)
		}
	}
	return nil
}

// ParseEdges reads edge profile lines as a snapshot has them ("edges\tCLASS\tMETHOD\tHASH\tFROM>TO=COUNT ..."),
// one per line; empty lines are skipped. The agent sends a class's profile in this form when it
// asks for the class to be re-instrumented (--adapt).
func ParseEdges(text string) ([]MethodEdges, error) {
	var s Snapshot
	for n, line := range strings.Split(text, "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if f[0] != "edges" {
			return nil, fmt.Errorf("edge profile line %d: starts with %q, not edges", n+1, f[0])
		}
		if err := s.addEdges(f[1:]); err != nil {
			return nil, fmt.Errorf("edge profile line %d: %w", n+1, err)
		}
	}
	return s.Edges, nil
}
