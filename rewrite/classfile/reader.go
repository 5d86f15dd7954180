package classfile

import (
	"errors"
	"fmt"
)

// FormatError reports a malformed class file: where, the structure being read (for example
// "method 7 (run(I)V) attribute 2") and what was wrong. An offset is either in the class file
// (Parse) or in the contents of one attribute (ParseCode and the other Parse functions of an
// attribute, which see only its bytes); each has its own field, -1 when it does not apply.
type FormatError struct {
	Class      string // internal name once this_class has been read, else ""
	Offset     int    // byte offset in the class file, -1 when not known
	AttrOffset int    // byte offset in the attribute's contents, -1 when not known
	Context    string // what was being read
	Msg        string
	Err        error // the cause, when a lookup failed (Unwrap); Msg is then its text
}

// Unwrap returns the cause, so that errors.Is and errors.As reach it.
func (e *FormatError) Unwrap() error { return e.Err }

func (e *FormatError) Error() string {
	s := "classfile: "
	if e.Class != "" {
		s += e.Class + ": "
	}
	switch {
	case e.Offset >= 0:
		s += fmt.Sprintf("offset %d: ", e.Offset)
	case e.AttrOffset >= 0:
		s += fmt.Sprintf("offset %d within the attribute: ", e.AttrOffset)
	}
	if e.Context != "" {
		s += e.Context + ": "
	}
	return s + e.Msg
}

// UnsupportedVersionError is returned by Parse for a class file whose major version is outside
// MinMajor..MaxMajor. The rest of the file is not examined: callers keep such classes unchanged
// and warn, because a newer format may hold structures that rewriting would damage.
type UnsupportedVersionError struct {
	Major, Minor uint16
}

// ErrUnsupportedVersion matches every *UnsupportedVersionError under errors.Is, for callers that
// only need to know that a class must be passed through.
var ErrUnsupportedVersion = errors.New("unsupported class file version")

// Is makes errors.Is(err, ErrUnsupportedVersion) true.
func (e *UnsupportedVersionError) Is(target error) bool { return target == ErrUnsupportedVersion }

func (e *UnsupportedVersionError) Error() string {
	return fmt.Sprintf("classfile: unsupported class file version %d.%d (this engine reads major versions %d to %d)",
		e.Major, e.Minor, MinMajor, MaxMajor)
}

// Parse reads a class file.
//
// The Class shares memory with data (constant strings and attribute contents are sub-slices of
// it, capped so that appending to them copies): data must not be modified while the Class is in
// use. Attributes stay raw; the Parse* functions give parsed forms on demand.
//
// Parse validates at once everything the writer, the pool accessors and the name helpers rely
// on, so that code after a successful Parse can trust it: every constant's tag and size, the
// tags that constants refer to (a Methodref's class is a Class, ...), this_class, super_class
// and interfaces being Class constants, member names/descriptors and attribute names being Utf8
// constants, every length fitting in the file, and no bytes after the last attribute. It does
// not check modified UTF-8 encoding (decoded on use, with an error) nor the contents of
// attributes, which are parsed and checked when a pass asks for them. Counts are checked
// against the bytes that remain before anything is allocated for them, so a small malformed
// input cannot make Parse allocate much.
func Parse(data []byte) (*Class, error) {
	r := reader{b: data, chunked: true}
	magic := r.u4()
	if r.err == nil && magic != Magic {
		return nil, r.fail(0, "magic", fmt.Sprintf("bad magic 0x%08X, want 0xCAFEBABE", magic))
	}
	c := &Class{}
	c.Minor = r.u2()
	c.Major = r.u2()
	if r.err != nil {
		return nil, r.wrap("header")
	}
	if c.Major < MinMajor || c.Major > MaxMajor {
		return nil, &UnsupportedVersionError{Major: c.Major, Minor: c.Minor}
	}
	pool, err := r.pool()
	if err != nil {
		return nil, err
	}
	c.Pool = pool
	c.AccessFlags = r.u2()
	off := r.off
	c.ThisClass = r.u2()
	if r.err != nil {
		return nil, r.wrap("this_class")
	}
	if err := r.wantTag(off, "this_class", c.ThisClass, TagClass); err != nil {
		return nil, err
	}
	r.this = c.ThisClass
	off = r.off
	c.SuperClass = r.u2()
	if r.err != nil {
		return nil, r.wrap("super_class")
	}
	if c.SuperClass != 0 {
		if err := r.wantTag(off, "super_class", c.SuperClass, TagClass); err != nil {
			return nil, err
		}
	}
	n := r.count(2, owner{}, "interfaces_count")
	if r.err != nil {
		return nil, r.err
	}
	if n > 0 {
		c.Interfaces = make([]uint16, n)
		for i := range c.Interfaces {
			off = r.off
			c.Interfaces[i] = r.u2()
			if r.err != nil {
				return nil, r.wrap("interfaces")
			}
			if !r.pl.has(c.Interfaces[i], TagClass) {
				return nil, r.wantTag(off, fmt.Sprintf("interface %d", i), c.Interfaces[i], TagClass)
			}
		}
	}
	if c.Fields, err = r.members("field"); err != nil {
		return nil, err
	}
	if c.Methods, err = r.members("method"); err != nil {
		return nil, err
	}
	if c.Attributes, err = r.attributes(owner{kind: "class"}); err != nil {
		return nil, err
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "end of class", fmt.Sprintf("%d extra bytes after the last class attribute", len(r.b)-r.off))
	}
	return c, nil
}

// ReadName returns the internal name of the class in data (this_class), reading only the header
// and the constant pool, whatever the class file version: filing a class under its name (a class
// file given where a jar could be) must not depend on understanding the rest of it.
func ReadName(data []byte) (string, error) {
	r := reader{b: data}
	if magic := r.u4(); r.err == nil && magic != Magic {
		return "", r.fail(0, "magic", fmt.Sprintf("bad magic 0x%08X, want 0xCAFEBABE", magic))
	}
	r.u2()
	r.u2()
	if r.err != nil {
		return "", r.wrap("header")
	}
	pool, err := r.pool()
	if err != nil {
		return "", err
	}
	r.u2() // access_flags
	off := r.off
	this := r.u2()
	if r.err != nil {
		return "", r.wrap("this_class")
	}
	if err := r.wantTag(off, "this_class", this, TagClass); err != nil {
		return "", err
	}
	return pool.ClassName(this)
}

// ConstantOffsets returns, for each constant pool index, the offset in data of that constant's
// tag byte (0 for index 0 and for the unusable slot after a Long or Double), reading only the
// header and the pool. A caller patches constants of a class file in place with it, as the
// agent's cache gives a stored class the site IDs of the run at hand, without parsing the rest.
func ConstantOffsets(data []byte) ([]int, error) {
	r := reader{b: data}
	if magic := r.u4(); r.err == nil && magic != Magic {
		return nil, r.fail(0, "magic", fmt.Sprintf("bad magic 0x%08X, want 0xCAFEBABE", magic))
	}
	r.u2()
	r.u2()
	if r.err != nil {
		return nil, r.wrap("header")
	}
	n := int(r.u2())
	if r.err != nil {
		return nil, r.wrap("constant_pool_count")
	}
	offs := make([]int, max(n, 1))
	for i := 1; i < n; i++ {
		offs[i] = r.off
		tag := r.u1()
		switch tag {
		case TagUtf8:
			r.bytes(int(r.u2()), "")
		case TagInteger, TagFloat:
			r.bytes(4, "")
		case TagLong, TagDouble:
			r.bytes(8, "")
			i++
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			r.u2()
		case TagFieldref, TagMethodref, TagInterfaceMethodref, TagNameAndType, TagDynamic, TagInvokeDynamic:
			r.u2()
			r.u2()
		case TagMethodHandle:
			r.u1()
			r.u2()
		default:
			if r.err == nil {
				return nil, r.fail(offs[i], fmt.Sprintf("constant %d", i), fmt.Sprintf("unknown tag %d", tag))
			}
		}
		if r.err != nil {
			return nil, r.wrap(fmt.Sprintf("constant %d (%s)", i, TagName(tag)))
		}
	}
	if len(offs) > n {
		offs = offs[:n]
	}
	return offs, nil
}

// reader is a cursor over a class file. The first failure sticks in err, so a sequence of reads
// can be checked once.
type reader struct {
	b   []byte
	off int
	err error
	// attr says b is one attribute's contents, so offsets are relative to them.
	attr bool
	this uint16 // this_class once read, to name the class in errors
	pl   *Pool

	// Attribute lists are carved from shared chunks when chunked (Parse): a class has a few
	// attributes per member, and two allocations per list would dominate the cost of parsing
	// small classes. ParseCode reads one short list and allocates it exactly: a chunk there
	// would cost more than it saves, once per method.
	chunked   bool
	attrChunk []Attribute
	ptrChunk  []*Attribute
}

// attrChunkSize is the size of a shared chunk; longer lists get their own.
const attrChunkSize = 64

// newAttributes returns n zeroed attributes and pointers to them. The pointer slice is capped
// at n, so appending to one member's list copies instead of overwriting the next member's.
func (r *reader) newAttributes(n int) ([]Attribute, []*Attribute) {
	if !r.chunked || n > attrChunkSize/2 {
		return make([]Attribute, n), make([]*Attribute, n)
	}
	if len(r.attrChunk) < n {
		r.attrChunk = make([]Attribute, attrChunkSize)
		r.ptrChunk = make([]*Attribute, attrChunkSize)
	}
	as, ps := r.attrChunk[:n:n], r.ptrChunk[:n:n]
	r.attrChunk, r.ptrChunk = r.attrChunk[n:], r.ptrChunk[n:]
	return as, ps
}

func (r *reader) fail(off int, ctx, msg string) error { return r.failWith(off, ctx, msg, nil) }

// failCause is fail for a failed lookup, which the error wraps.
func (r *reader) failCause(off int, ctx string, cause error) error {
	return r.failWith(off, ctx, cause.Error(), cause)
}

func (r *reader) failWith(off int, ctx, msg string, cause error) error {
	if r.err == nil {
		var class string
		if r.this != 0 {
			class = r.pl.className(r.this)
		}
		e := &FormatError{Class: class, Offset: off, AttrOffset: -1, Context: ctx, Msg: msg, Err: cause}
		if r.attr {
			e.Offset, e.AttrOffset = -1, off
		}
		r.err = e
	}
	return r.err
}

// wrap names the structure whose read ran off the end of the data.
func (r *reader) wrap(ctx string) error {
	if fe, ok := r.err.(*FormatError); ok && fe.Context == "" {
		fe.Context = ctx
	}
	return r.err
}

func (r *reader) short(n int) {
	r.fail(r.off, "", fmt.Sprintf("need %d bytes, only %d remain (truncated class file)", n, len(r.b)-r.off))
}

func (r *reader) u1() uint8 {
	if r.err != nil || r.off+1 > len(r.b) {
		r.short(1)
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) u2() uint16 {
	if r.err != nil || r.off+2 > len(r.b) {
		r.short(2)
		return 0
	}
	v := uint16(r.b[r.off])<<8 | uint16(r.b[r.off+1])
	r.off += 2
	return v
}

func (r *reader) u4() uint32 {
	if r.err != nil || r.off+4 > len(r.b) {
		r.short(4)
		return 0
	}
	b := r.b[r.off : r.off+4]
	r.off += 4
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// bytes returns the next n bytes as a capped sub-slice of the input.
func (r *reader) bytes(n int, ctx string) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b)-r.off {
		r.fail(r.off, ctx, fmt.Sprintf("length %d exceeds remaining %d bytes", n, len(r.b)-r.off))
		return nil
	}
	s := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return s
}

// count reads a u2 count of items that take at least minSize bytes each, rejecting a count the
// remaining bytes cannot hold before the caller allocates for it.
// The context is o.describe followed by what, built only on failure.
func (r *reader) count(minSize int, o owner, what string) int {
	off := r.off
	n := int(r.u2())
	if r.err != nil {
		r.wrap(o.describe(r.pl) + what)
		return 0
	}
	if n*minSize > len(r.b)-r.off {
		r.fail(off, o.describe(r.pl)+what, fmt.Sprintf("count %d needs at least %d bytes, only %d remain", n, n*minSize, len(r.b)-r.off))
		return 0
	}
	return n
}

// has reports whether index i holds a constant with the given tag.
func (p *Pool) has(i uint16, tag uint8) bool {
	return i != 0 && int(i) < len(p.Entries) && p.Entries[i].Tag == tag
}

func (r *reader) wantTag(off int, ctx string, i uint16, tags ...uint8) error {
	if _, err := r.pl.typed(i, tags...); err != nil {
		return r.failCause(off, ctx, err)
	}
	return nil
}

// poolHeadroom is how many constants a parsed pool can gain before its entries are copied.
const poolHeadroom = 32

func (r *reader) pool() (*Pool, error) {
	off := r.off
	n := int(r.u2())
	if r.err != nil {
		return nil, r.wrap("constant_pool_count")
	}
	if n == 0 {
		return nil, r.fail(off, "constant_pool_count", "count 0, must be at least 1")
	}
	// The smallest constant (a Class, String, ... or an empty Utf8) takes 3 bytes.
	if (n-1)*3 > len(r.b)-r.off {
		return nil, r.fail(off, "constant_pool_count", fmt.Sprintf("count %d needs at least %d bytes, only %d remain", n, (n-1)*3, len(r.b)-r.off))
	}
	// Room for the handful of constants a pass adds, so adding them does not copy the pool.
	p := &Pool{Entries: make([]Constant, n, n+poolHeadroom)}
	r.pl = p
	for i := 1; i < n; i++ {
		start := r.off
		c := &p.Entries[i]
		c.Tag = r.u1()
		switch c.Tag {
		case TagUtf8:
			l := int(r.u2())
			c.Bytes = r.bytes(l, "")
		case TagInteger, TagFloat:
			c.Bytes = r.bytes(4, "")
		case TagLong, TagDouble:
			c.Bytes = r.bytes(8, "")
			if i+1 >= n {
				return nil, r.fail(start, fmt.Sprintf("constant %d", i), fmt.Sprintf("%s takes two slots but is the last entry", TagName(c.Tag)))
			}
			i++ // the next slot is unusable and stays Tag 0
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			c.A = r.u2()
		case TagFieldref, TagMethodref, TagInterfaceMethodref, TagNameAndType, TagDynamic, TagInvokeDynamic:
			c.A = r.u2()
			c.B = r.u2()
		case TagMethodHandle:
			c.A = uint16(r.u1())
			c.B = r.u2()
		default:
			if r.err == nil {
				return nil, r.fail(start, fmt.Sprintf("constant %d", i), fmt.Sprintf("unknown tag %d", c.Tag))
			}
		}
		if r.err != nil {
			return nil, r.wrap(fmt.Sprintf("constant %d (%s)", i, TagName(c.Tag)))
		}
	}
	// Cross-references are checked after reading because constants may refer forward.
	for i := 1; i < n; i++ {
		c := &p.Entries[i]
		var err error
		switch c.Tag {
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			_, err = p.typed(c.A, TagUtf8)
		case TagFieldref, TagMethodref, TagInterfaceMethodref:
			if _, err = p.typed(c.A, TagClass); err == nil {
				_, err = p.typed(c.B, TagNameAndType)
			}
		case TagNameAndType:
			if _, err = p.typed(c.A, TagUtf8); err == nil {
				_, err = p.typed(c.B, TagUtf8)
			}
		case TagDynamic, TagInvokeDynamic:
			_, err = p.typed(c.B, TagNameAndType)
		case TagMethodHandle:
			switch {
			case c.A >= 1 && c.A <= 4:
				_, err = p.typed(c.B, TagFieldref)
			case c.A >= 5 && c.A <= 9:
				_, err = p.typed(c.B, TagMethodref, TagInterfaceMethodref)
			default:
				err = fmt.Errorf("reference kind %d, want 1 to 9", c.A)
			}
		}
		if err != nil {
			return nil, &FormatError{Offset: off, AttrOffset: -1, Context: fmt.Sprintf("constant %d (%s)", i, TagName(c.Tag)), Msg: err.Error(), Err: err}
		}
	}
	return p, nil
}

func (r *reader) members(kind string) ([]*Member, error) {
	// access, name, descriptor, attributes_count: 8 bytes at least.
	n := r.count(8, owner{kind: kind}, "s_count")
	if r.err != nil || n == 0 {
		return nil, r.err
	}
	ms := make([]Member, n)
	ptrs := make([]*Member, n)
	for i := range ms {
		m := &ms[i]
		ptrs[i] = m
		start := r.off
		m.AccessFlags = r.u2()
		m.NameIndex = r.u2()
		m.DescriptorIndex = r.u2()
		if r.err != nil {
			return nil, r.wrap(fmt.Sprintf("%s %d", kind, i))
		}
		if !r.pl.has(m.NameIndex, TagUtf8) {
			return nil, r.wantTag(start+2, fmt.Sprintf("%s %d name", kind, i), m.NameIndex, TagUtf8)
		}
		if !r.pl.has(m.DescriptorIndex, TagUtf8) {
			return nil, r.wantTag(start+4, fmt.Sprintf("%s %d descriptor", kind, i), m.DescriptorIndex, TagUtf8)
		}
		var err error
		if m.Attributes, err = r.attributes(owner{kind, i, m}); err != nil {
			return nil, err
		}
	}
	return ptrs, nil
}

// owner names the holder of an attribute list in messages; it is formatted only on error, to
// keep the successful path free of string building.
type owner struct {
	kind string // "class", "field", "method", "Code", "record component"
	i    int
	m    *Member
}

func (o owner) describe(p *Pool) string {
	if o.m == nil {
		return o.kind
	}
	return fmt.Sprintf("%s %d (%s)", o.kind, o.i, o.m.String(p))
}

func (r *reader) attributes(o owner) ([]*Attribute, error) {
	n := r.count(6, o, " attributes_count")
	if r.err != nil || n == 0 {
		return nil, r.err
	}
	owner := o.describe
	as, ptrs := r.newAttributes(n)
	for i := range as {
		a := &as[i]
		ptrs[i] = a
		start := r.off
		a.NameIndex = r.u2()
		l := r.u4()
		if r.err != nil {
			return nil, r.wrap(fmt.Sprintf("%s attribute %d", owner(r.pl), i))
		}
		// Without a pool (ParseCode) names are checked by the caller that has one.
		if r.pl != nil && !r.pl.has(a.NameIndex, TagUtf8) {
			return nil, r.wantTag(start, fmt.Sprintf("%s attribute %d name", owner(r.pl), i), a.NameIndex, TagUtf8)
		}
		if uint64(l) > uint64(len(r.b)-r.off) {
			name := fmt.Sprintf("name index %d", a.NameIndex)
			if r.pl != nil {
				name = AttributeName(r.pl, a)
			}
			return nil, r.fail(start+2, fmt.Sprintf("%s attribute %d (%s)", owner(r.pl), i, name),
				fmt.Sprintf("length %d exceeds remaining %d bytes", l, len(r.b)-r.off))
		}
		a.Data = r.bytes(int(l), "")
	}
	return ptrs, nil
}
