package snapshot

import "strings"

// KindInit is the site kind of the Object.<init> hook (the agent's --object-init): one site per
// class, named by the running JVM, whose rows count every object of the class whose
// constructor chain ran. They are a second view of objects that rewritten sites may also have
// counted, so reports keep them out of the totals (docs/agent.md).
const KindInit = "init"

// hookRole says how a row relates to the hook's init rows.
type hookRole int

const (
	notHook hookRole = iota
	// hookInit: an init row, every object of its class that was constructed.
	hookInit
	// hookNamed: a rewritten site whose objects run a constructor of the class it names
	// (object: new + <init>; concat: a String constructor), so the init row of that class
	// counted them too.
	hookNamed
	// hookUnnamed: a rewritten site whose objects run a constructor of a class it does not
	// name (reflect: "(reflective object)"; lambda: the interface, not the spun class), so they
	// are in some init row of the account, which one the snapshot cannot say.
	hookUnnamed
)

// hookIndex knows which classes a snapshot has init sites for.
type hookIndex struct {
	classes map[string]bool
	// overflow is the type of the shared site that counts the classes past the hook's reserved
	// block ("(other classes: more than N)"), "" when there is none.
	overflow string
}

// hookIndex returns nil when the snapshot has no init sites (the hook was not on).
func (s *Snapshot) hookIndex() *hookIndex {
	var h *hookIndex
	for _, site := range s.Sites {
		if site.Kind != KindInit {
			continue
		}
		if h == nil {
			h = &hookIndex{classes: map[string]bool{}}
		}
		if strings.HasPrefix(site.Type, "(other classes") {
			h.overflow = site.Type
		} else {
			h.classes[site.Type] = true
		}
	}
	return h
}

// role classifies a row and names the init class it belongs to: for an init row its own class,
// for a named site's row the init class its objects were counted in — the shared overflow site
// when the class has no site of its own.
func (h *hookIndex) role(s *Snapshot, r Row) (hookRole, string) {
	site, ok := s.Sites[r.Site]
	if h == nil || !ok {
		return notHook, ""
	}
	switch site.Kind {
	case KindInit:
		return hookInit, site.Type
	case "object", "concat":
		if h.classes[site.Type] {
			return hookNamed, site.Type
		}
		if h.overflow != "" {
			return hookNamed, h.overflow
		}
		// No init row for the class: the hook constructed none of them (all made before
		// it was engaged), so there is nothing to take them off.
		return notHook, ""
	case "reflect", "lambda":
		return hookUnnamed, ""
	}
	return notHook, ""
}

func (t *Totals) plus(u Totals) {
	t.Objects += u.Objects
	t.Arrays += u.Arrays
	t.Elements += u.Elements
	t.Bytes += u.Bytes
	t.UnknownRows += u.UnknownRows
	t.Live += u.Live
	t.LiveBytes += u.LiveBytes
	t.Reclaimed += u.Reclaimed
	t.Untracked += u.Untracked
}
