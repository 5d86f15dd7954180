package passes

import (
	"github.com/heapledger/heapledger/rewrite/classfile"
)

// memberRef names a method by owner, name and descriptor.
type memberRef struct{ owner, name, desc string }

// poolRefs finds or adds the constants a pass needs in one class with a single scan of the
// pool. classfile.Pool's own Add functions de-duplicate through an index of the whole pool,
// built on first use; building that map for every class cost the probe pass more than all its
// other preparation, while a pass needs only a handful of constants that are usually absent.
// The scan finds any that are present (so a class rewritten twice gains nothing), and the rest
// are appended to Entries directly. That keeps the pool consistent: the index, when some later
// Add builds it, is built from Entries; were one already built, it would merely not know these
// entries and could add an equal constant again, which the format allows.
type poolRefs struct {
	utf8 map[string]uint16
}

// resolve returns the Methodref index of each method, then the Class index of each class.
func (pr *poolRefs) resolve(p *classfile.Pool, methods []memberRef, classes ...string) ([]uint16, error) {
	want := map[string]uint16{}
	for _, m := range methods {
		want[m.owner], want[m.name], want[m.desc] = 0, 0, 0
	}
	for _, c := range classes {
		want[c] = 0
	}
	found := 0
	for i := 1; i < len(p.Entries) && found < len(want); i++ {
		e := &p.Entries[i]
		if e.Tag != classfile.TagUtf8 {
			continue
		}
		// The wanted strings are ASCII, whose modified UTF-8 is the string itself.
		if v, ok := want[string(e.Bytes)]; ok && v == 0 {
			want[string(e.Bytes)] = uint16(i)
			found++
		}
	}
	pr.utf8 = want
	out := make([]uint16, 0, len(methods)+len(classes))
	for _, m := range methods {
		i, err := pr.method(p, m)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	for _, c := range classes {
		i, err := pr.class(p, c)
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// lookup returns the first entry with the given tag and operands, 0 when there is none. Only
// called when all the Utf8 entries it depends on already existed, which is rare.
func lookup(p *classfile.Pool, tag uint8, a, b uint16) uint16 {
	for i := 1; i < len(p.Entries); i++ {
		e := &p.Entries[i]
		if e.Tag == tag && e.A == a && e.B == b {
			return uint16(i)
		}
	}
	return 0
}

// appendConst adds one single-slot constant at the end of the pool.
func appendConst(p *classfile.Pool, c classfile.Constant) (uint16, error) {
	if len(p.Entries)+1 > 0xFFFF {
		return 0, classfile.ErrPoolOverflow
	}
	p.Entries = append(p.Entries, c)
	return uint16(len(p.Entries) - 1), nil
}

func (pr *poolRefs) str(p *classfile.Pool, s string) (uint16, bool, error) {
	if i := pr.utf8[s]; i != 0 {
		return i, true, nil
	}
	i, err := appendConst(p, classfile.Constant{Tag: classfile.TagUtf8, Bytes: []byte(s)})
	pr.utf8[s] = i
	return i, false, err
}

func (pr *poolRefs) class(p *classfile.Pool, name string) (uint16, error) {
	n, had, err := pr.str(p, name)
	if err != nil {
		return 0, err
	}
	if had {
		if i := lookup(p, classfile.TagClass, n, 0); i != 0 {
			return i, nil
		}
	}
	return appendConst(p, classfile.Constant{Tag: classfile.TagClass, A: n})
}

func (pr *poolRefs) method(p *classfile.Pool, m memberRef) (uint16, error) {
	c, err := pr.class(p, m.owner)
	if err != nil {
		return 0, err
	}
	n, hadN, err := pr.str(p, m.name)
	if err != nil {
		return 0, err
	}
	d, hadD, err := pr.str(p, m.desc)
	if err != nil {
		return 0, err
	}
	var nt uint16
	if hadN && hadD {
		nt = lookup(p, classfile.TagNameAndType, n, d)
	}
	if nt == 0 {
		if nt, err = appendConst(p, classfile.Constant{Tag: classfile.TagNameAndType, A: n, B: d}); err != nil {
			return 0, err
		}
	} else if i := lookup(p, classfile.TagMethodref, c, nt); i != 0 {
		return i, nil
	}
	return appendConst(p, classfile.Constant{Tag: classfile.TagMethodref, A: c, B: nt})
}
