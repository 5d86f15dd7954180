package classfile

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// WriteError reports a class that cannot be written: a count or length beyond what the format
// can hold (ErrTooLarge), or a constant pool that a pass left inconsistent. Err is the cause.
type WriteError struct {
	Class   string
	Context string
	Err     error
}

func (e *WriteError) Error() string {
	s := "classfile: writing"
	if e.Class != "" {
		s += " " + e.Class
	}
	if e.Context != "" {
		s += ": " + e.Context
	}
	return s + ": " + e.Err.Error()
}

// Unwrap lets callers test the cause, such as ErrTooLarge.
func (e *WriteError) Unwrap() error { return e.Err }

// ErrTooLarge is the cause of a WriteError for a count or length the class file format cannot
// hold (65535 constants, members, interfaces or attributes; a Utf8 of 65535 bytes).
var ErrTooLarge = errors.New("too large for a class file")

// writeError is the error of class c that cannot be written, ctx saying where; format and args
// (%w wraps a cause) say why.
func writeError(c *Class, ctx, format string, args ...any) *WriteError {
	return &WriteError{Class: c.Name(), Context: ctx, Err: fmt.Errorf(format, args...)}
}

// Bytes encodes the class. An unmodified result of Parse encodes to exactly the bytes it was
// parsed from. The output is sized first and written into a single allocation.
func (c *Class) Bytes() ([]byte, error) {
	n, err := c.size()
	if err != nil {
		return nil, err
	}
	w := writer{b: make([]byte, 0, n)}
	w.u4(Magic)
	w.u2(c.Minor)
	w.u2(c.Major)
	w.u2(uint16(len(c.Pool.Entries)))
	for i := 1; i < len(c.Pool.Entries); i++ {
		k := &c.Pool.Entries[i]
		w.u1(k.Tag)
		switch k.Tag {
		case TagUtf8:
			w.u2(uint16(len(k.Bytes)))
			w.b = append(w.b, k.Bytes...)
		case TagInteger, TagFloat, TagLong, TagDouble:
			w.b = append(w.b, k.Bytes...)
			if k.Tag == TagLong || k.Tag == TagDouble {
				i++
			}
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			w.u2(k.A)
		case TagMethodHandle:
			w.u1(uint8(k.A))
			w.u2(k.B)
		default:
			w.u2(k.A)
			w.u2(k.B)
		}
	}
	w.u2(c.AccessFlags)
	w.u2(c.ThisClass)
	w.u2(c.SuperClass)
	w.u2(uint16(len(c.Interfaces)))
	for _, x := range c.Interfaces {
		w.u2(x)
	}
	w.members(c.Fields)
	w.members(c.Methods)
	w.attributes(c.Attributes)
	if len(w.b) != n {
		// size and the writing above must agree; a mismatch is a bug here, not bad input.
		return nil, writeError(c, "", "internal error: sized %d bytes, wrote %d", n, len(w.b))
	}
	return w.b, nil
}

// Write writes the encoded class to w.
func (c *Class) Write(w io.Writer) error {
	b, err := c.Bytes()
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// size returns the encoded length, checking every count and length against the format's limits
// and the pool's consistency, so that writing itself cannot fail.
func (c *Class) size() (int, error) {
	fail := func(ctx, format string, args ...any) (int, error) {
		return 0, writeError(c, ctx, format, args...)
	}
	if c.Pool == nil || len(c.Pool.Entries) == 0 {
		return fail("constant pool", "no constant pool")
	}
	if len(c.Pool.Entries) > math.MaxUint16 {
		return fail("constant pool", "%w: %d entries, at most 65535", ErrTooLarge, len(c.Pool.Entries))
	}
	n := 10
	es := c.Pool.Entries
	for i := 1; i < len(es); i++ {
		k := &es[i]
		want := -1 // expected len(Bytes); -1 when Bytes is unused
		switch k.Tag {
		case TagUtf8:
			if len(k.Bytes) > math.MaxUint16 {
				return fail(fmt.Sprintf("constant %d (Utf8)", i), "%w: %d bytes, at most 65535", ErrTooLarge, len(k.Bytes))
			}
			n += 3 + len(k.Bytes)
			continue
		case TagInteger, TagFloat:
			want = 4
			n += 5
		case TagLong, TagDouble:
			want = 8
			n += 9
			if i+1 >= len(es) || es[i+1].Tag != 0 {
				return fail(fmt.Sprintf("constant %d (%s)", i, TagName(k.Tag)), "must be followed by an unused slot")
			}
			i++
		case TagClass, TagString, TagMethodType, TagModule, TagPackage:
			n += 3
		case TagMethodHandle:
			if k.A > math.MaxUint8 {
				return fail(fmt.Sprintf("constant %d (MethodHandle)", i), "reference kind %d does not fit a byte", k.A)
			}
			n += 4
		case TagFieldref, TagMethodref, TagInterfaceMethodref, TagNameAndType, TagDynamic, TagInvokeDynamic:
			n += 5
		case 0:
			return fail(fmt.Sprintf("constant %d", i), "empty slot that does not follow a Long or Double")
		default:
			return fail(fmt.Sprintf("constant %d", i), "unknown tag %d", k.Tag)
		}
		if want >= 0 && len(k.Bytes) != want {
			return fail(fmt.Sprintf("constant %d (%s)", i, TagName(k.Tag)), "%d value bytes, want %d", len(k.Bytes), want)
		}
	}
	if len(c.Interfaces) > math.MaxUint16 {
		return fail("interfaces", "%w: %d interfaces, at most 65535", ErrTooLarge, len(c.Interfaces))
	}
	n += 8 + 2*len(c.Interfaces)
	for _, kind := range [...]struct {
		name string
		ms   []*Member
	}{{"field", c.Fields}, {"method", c.Methods}} {
		if len(kind.ms) > math.MaxUint16 {
			return fail(kind.name+"s", "%w: %d %ss, at most 65535", ErrTooLarge, len(kind.ms), kind.name)
		}
		n += 2
		for i, m := range kind.ms {
			s, err := attributesSize(m.Attributes)
			if err != nil {
				return fail(fmt.Sprintf("%s %d (%s)", kind.name, i, m.String(c.Pool)), "%w", err)
			}
			n += 6 + s
		}
	}
	s, err := attributesSize(c.Attributes)
	if err != nil {
		return fail("class attributes", "%w", err)
	}
	return n + s, nil
}

// attributesSize is the encoded size of an attribute list including its count.
func attributesSize(as []*Attribute) (int, error) {
	if len(as) > math.MaxUint16 {
		return 0, fmt.Errorf("%w: %d attributes, at most 65535", ErrTooLarge, len(as))
	}
	n := 2
	for i, a := range as {
		if uint64(len(a.Data)) > math.MaxUint32 {
			return 0, fmt.Errorf("attribute %d: %w: %d bytes do not fit a u4 length", i, ErrTooLarge, len(a.Data))
		}
		n += 6 + len(a.Data)
	}
	return n, nil
}

// writer appends big-endian values to a buffer whose capacity was sized in advance.
type writer struct{ b []byte }

func (w *writer) u1(v uint8)  { w.b = append(w.b, v) }
func (w *writer) u2(v uint16) { w.b = append(w.b, byte(v>>8), byte(v)) }
func (w *writer) u4(v uint32) {
	w.b = append(w.b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func (w *writer) members(ms []*Member) {
	w.u2(uint16(len(ms)))
	for _, m := range ms {
		w.u2(m.AccessFlags)
		w.u2(m.NameIndex)
		w.u2(m.DescriptorIndex)
		w.attributes(m.Attributes)
	}
}

func (w *writer) attributes(as []*Attribute) {
	w.u2(uint16(len(as)))
	for _, a := range as {
		w.u2(a.NameIndex)
		w.u4(uint32(len(a.Data)))
		w.b = append(w.b, a.Data...)
	}
}
