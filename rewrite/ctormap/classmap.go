package ctormap

import (
	"fmt"
	"io"
	"sort"

	"github.com/heapledger/heapledger/rewrite/classfile"
	"github.com/heapledger/heapledger/rewrite/code"
)

// DecodeMethod decodes the code of one method of a parsed class, or returns nil for a method
// without code (abstract, native).
func DecodeMethod(c *classfile.Class, m *classfile.Member) (*code.Body, error) {
	cd, _, err := c.MethodCode(m)
	if err != nil || cd == nil {
		return nil, err
	}
	meth := code.Method{Class: c.Name(), Name: m.Name(c.Pool), Desc: m.Descriptor(c.Pool), Access: m.AccessFlags, Major: c.Major}
	return code.Decode(cd, c.Pool, meth)
}

// Entry is one constructor of the constructor map: the constructor, identified by its class
// and descriptor, and the alternate or superclass constructor(s) it invokes.
type Entry struct {
	Class, Desc string
	Targets     []Target
	Warning     string // see Analysis.Warning
}

// ForClass analyses every constructor of a class. java/lang/Object's constructor invokes none
// and is left out, as are constructors without code.
func ForClass(c *classfile.Class) ([]Entry, error) {
	var out []Entry
	for _, m := range c.Methods {
		if m.Name(c.Pool) != "<init>" {
			continue
		}
		b, err := DecodeMethod(c, m)
		if err != nil {
			return nil, err
		}
		if b == nil {
			continue
		}
		a, err := Analyze(b)
		b.Release() // the entry keeps names only, no instructions
		if err != nil {
			return nil, err
		}
		if !a.IsConstructor {
			continue
		}
		out = append(out, Entry{Class: b.Method.Class, Desc: b.Method.Desc, Targets: a.Targets, Warning: a.Warning})
	}
	return out, nil
}

// Write prints entries as the text constructor map, one line per invoked constructor, sorted:
//
//	CLASS.<init>DESC -> TARGETCLASS.<init>TARGETDESC alternate|superclass
//
// followed by a line "# warning: ..." for every entry that has a warning. A constructor that
// invokes different constructors on different paths has one line per constructor.
func Write(w io.Writer, entries []Entry) error {
	var lines, warnings []string
	for _, e := range entries {
		for _, t := range e.Targets {
			kind := "superclass"
			if t.Alternate {
				kind = "alternate"
			}
			lines = append(lines, fmt.Sprintf("%s.<init>%s -> %s.<init>%s %s", e.Class, e.Desc, t.Owner, t.Desc, kind))
		}
		if e.Warning != "" {
			warnings = append(warnings, "# warning: "+e.Warning)
		}
	}
	sort.Strings(lines)
	sort.Strings(warnings)
	for _, l := range append(lines, warnings...) {
		if _, err := fmt.Fprintln(w, l); err != nil {
			return err
		}
	}
	return nil
}
