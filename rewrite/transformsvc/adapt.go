package transformsvc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/paths"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// Adaptive path counters (the agent's --adapt, docs/instrumentation.md "Adaptive path counters
// under the agent"). A class is first rewritten as a profiling run (--counters edges); when its
// chord counters have counted enough, the agent retransforms it and sends it again with its
// edge profile, and the service rewrites it with path counters planned from that profile:
//
//  1. Every class rewritten is remembered by name and loader with the IDs of its sites
//     (versions.remember), so that a later version can count into the same rows.
//  2. The new version is rewritten against a scratch table (accounts.Table.Scratch) by the pass
//     Adapt makes for the profile (Server.adapt).
//  3. Its IDs are moved into the JVM's table (relocate): a site the first version had keeps
//     that version's ID, so the rows of both versions are one row; counters and corrections
//     get new IDs, and their sites' offsets are computed again from the moved IDs. Methods of
//     the first version still running (a loop that never returns) keep their own counters.
//  4. The answer names the new counters before the JVM can run the new code, as every answer
//     names its sites.

// AdaptFunc makes the pass that re-instruments a class from profile, a class's edge profile
// as snapshot "edges" lines, numbering its sites in table. It returns the profile read, whose
// Use says what the pass made of it.
type AdaptFunc func(table *accounts.Table, profile string) (transform.Class, *paths.Profile, error)

// versions holds the site IDs of the classes rewritten so far, by name and loader: what a
// re-instrumented version's sites are given (step 1).
type versions struct {
	mu    sync.Mutex
	sites map[string]map[accounts.Site]int
}

func versionKey(req *Request) string { return req.Name + "\x00" + req.Loader }

// remember notes the sites that res, the answer to req, named in table. Counters are left
// out: a new version has counters of its own.
func (v *versions) remember(req *Request, res transform.Result, table *accounts.Table) {
	if res.IDs == nil || !res.Changed() {
		return
	}
	ids := map[accounts.Site]int{}
	for id := res.IDs.First; id < res.IDs.First+res.IDs.Reserved; id++ {
		if s, ok := table.Site(id); ok && !isCounter(s) {
			ids[s] = id
		}
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.sites == nil {
		v.sites = map[string]map[accounts.Site]int{}
	}
	if _, had := v.sites[versionKey(req)]; !had {
		v.sites[versionKey(req)] = ids
	}
}

func (v *versions) of(req *Request) map[accounts.Site]int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.sites[versionKey(req)]
}

// isCounter reports whether s is a path counter or correction (kind path or edge), not a site.
func isCounter(s accounts.Site) bool {
	return s.Kind == accounts.KindPath || s.Kind == accounts.KindEdge
}

// adapt rewrites req's class from its profile (step 2) and moves its IDs into the JVM's table
// (step 3). The message says how many of the class's methods were planned from the profile.
func (s *Server) adapt(req *Request) (transform.Result, string, error) {
	if s.Adapt == nil {
		return transform.Result{}, "", fmt.Errorf("re-instrumentation asked for, but the service was not started with --adapt")
	}
	scratch := s.Table.Scratch()
	pass, profile, err := s.Adapt(scratch, req.Profile)
	if err != nil {
		return transform.Result{}, "", err
	}
	if in, ok := pass.(transform.Inputs); ok && s.fromClassPath(req) {
		in.SetInputs(s.ClassPath.Lookup) // as its first version was rewritten
	}
	res, err := pass.TransformClass(req.Name, req.Class)
	if err != nil {
		return res, "", err
	}
	u := profile.Use()
	msg := fmt.Sprintf("adapted: %s: %d of the profile's %d methods planned from observed edge counts\n", req.Name, u.Planned, profile.Len())
	if !res.Changed() || res.IDs == nil {
		return res, msg, nil
	}
	return res, msg, s.relocate(req, &res, scratch)
}

// relocate gives the IDs res numbered in scratch their IDs in the JVM's table: the first
// version's for its sites, new ones for the rest, written into the class's constants and, for
// counters, into the sites their table lines name.
func (s *Server) relocate(req *Request, res *transform.Result, scratch *accounts.Table) error {
	first, err := s.Table.Reserve(res.IDs.Reserved)
	if err != nil {
		return err
	}
	old := s.versions.of(req)
	moved := map[int]int{}
	for i := range res.IDs.Pool {
		id := res.IDs.First + i
		site, _ := scratch.Site(id)
		if had, ok := old[site]; ok && !isCounter(site) {
			moved[id] = had
		} else {
			moved[id] = first + (id - res.IDs.First)
		}
	}
	offs, err := classfile.ConstantOffsets(res.Data)
	if err != nil {
		return err
	}
	for i, pi := range res.IDs.Pool {
		id := res.IDs.First + i
		if int(pi) >= len(offs) || offs[pi] == 0 || res.Data[offs[pi]] != classfile.TagInteger ||
			int32(binary.BigEndian.Uint32(res.Data[offs[pi]+1:])) != int32(id) {
			return fmt.Errorf("site %d: pool constant %d does not hold its ID", id, pi)
		}
		binary.BigEndian.PutUint32(res.Data[offs[pi]+1:], uint32(int32(moved[id])))
	}
	for id, to := range moved {
		site, _ := scratch.Site(id)
		if !isCounter(site) {
			if _, kept := old[site]; kept {
				continue // named by the first version
			}
		} else if site.Type, err = movedSemantics(site, id, moved); err != nil {
			return err
		}
		s.Table.Name(to, site)
	}
	res.IDs = &transform.IDs{First: first, Reserved: res.IDs.Reserved}
	return nil
}

// movedSemantics is the TYPE of counter site, numbered id in the scratch table, with each
// "OFFSET*MULTIPLICITY" pointing at its site's moved ID from the counter's (docs/formats.md).
func movedSemantics(site accounts.Site, id int, moved map[int]int) (string, error) {
	words := strings.Fields(site.Type)
	for i, w := range words {
		off, mult, ok := strings.Cut(w, "*")
		if !ok {
			continue // an edge counter's tag
		}
		o, err := strconv.Atoi(off)
		to, found := moved[id+o]
		if err != nil || !found {
			return "", fmt.Errorf("counter %d of %s: semantics %q name no site of the class", id, site.Method, w)
		}
		words[i] = strconv.Itoa(to-moved[id]) + "*" + mult
	}
	return strings.Join(words, " "), nil
}
