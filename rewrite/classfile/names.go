package classfile

import "fmt"

// text returns the string of Utf8 constant i for names and messages. Parse has checked that the
// indices these helpers follow are Utf8 constants; the modified UTF-8 itself is decoded here, and
// bytes that do not decode are shown as they are rather than lost, so a message about a
// malformed class can still name it.
func (p *Pool) text(i uint16) string {
	c, err := p.typed(i, TagUtf8)
	if err != nil {
		return fmt.Sprintf("<bad constant %d>", i)
	}
	s, err := p.decoded(i, c)
	if err != nil {
		return string(c.Bytes)
	}
	return s
}

// utf8Equals compares the stored bytes of Utf8 constant i with s (already modified UTF-8)
// without decoding.
func (p *Pool) utf8Equals(i uint16, s string) bool {
	if i == 0 || int(i) >= len(p.Entries) {
		return false
	}
	c := &p.Entries[i]
	return c.Tag == TagUtf8 && string(c.Bytes) == s
}

// className returns the internal name behind Class constant i, or a marker for a bad index.
func (p *Pool) className(i uint16) string {
	c, err := p.typed(i, TagClass)
	if err != nil {
		return fmt.Sprintf("<bad class constant %d>", i)
	}
	return p.text(c.A)
}

// Name returns the internal name of the class, e.g. "java/util/ArrayList".
func (c *Class) Name() string { return c.Pool.className(c.ThisClass) }

// SuperName returns the internal name of the superclass, or "" for java/lang/Object and
// module-info.
func (c *Class) SuperName() string {
	if c.SuperClass == 0 {
		return ""
	}
	return c.Pool.className(c.SuperClass)
}

// InterfaceNames returns the internal names of the direct superinterfaces.
func (c *Class) InterfaceNames() []string {
	out := make([]string, len(c.Interfaces))
	for i, x := range c.Interfaces {
		out[i] = c.Pool.className(x)
	}
	return out
}

// Name returns the member's name.
func (m *Member) Name(p *Pool) string { return p.text(m.NameIndex) }

// Descriptor returns the member's descriptor.
func (m *Member) Descriptor(p *Pool) string { return p.text(m.DescriptorIndex) }

// Is reports whether the member is named name with descriptor desc.
func (m *Member) Is(p *Pool, name, desc string) bool {
	return p.utf8Equals(m.NameIndex, string(EncodeModifiedUTF8(name))) &&
		p.utf8Equals(m.DescriptorIndex, string(EncodeModifiedUTF8(desc)))
}

// Method returns the method with the given name and descriptor, or nil.
func (c *Class) Method(name, desc string) *Member { return findMember(c.Methods, c.Pool, name, desc) }

// Field returns the field with the given name and descriptor, or nil.
func (c *Class) Field(name, desc string) *Member { return findMember(c.Fields, c.Pool, name, desc) }

// findMember compares the stored modified UTF-8 bytes, encoding the wanted strings once; the
// encoding is canonical, so equal bytes and equal strings are the same thing.
func findMember(ms []*Member, p *Pool, name, desc string) *Member {
	n, d := string(EncodeModifiedUTF8(name)), string(EncodeModifiedUTF8(desc))
	for _, m := range ms {
		if p.utf8Equals(m.NameIndex, n) && p.utf8Equals(m.DescriptorIndex, d) {
			return m
		}
	}
	return nil
}

// AttributeName returns the name of an attribute ("Code", "StackMapTable", ...).
func AttributeName(p *Pool, a *Attribute) string { return p.text(a.NameIndex) }

// FindAttribute returns the first attribute in attrs with the given name, or nil.
func FindAttribute(attrs []*Attribute, name string, p *Pool) *Attribute {
	for _, a := range attrs {
		if p.utf8Equals(a.NameIndex, name) {
			return a
		}
	}
	return nil
}

// String names a member for messages: "run(I)V" for a method, "count:I" for a field.
func (m *Member) String(p *Pool) string {
	d := m.Descriptor(p)
	if len(d) > 0 && d[0] == '(' {
		return m.Name(p) + d
	}
	return m.Name(p) + ":" + d
}
