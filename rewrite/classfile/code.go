package classfile

import (
	"fmt"
	"math"
)

// MaxCodeLength is the largest code_length a method may have (JVMS 4.7.3: less than 65536).
const MaxCodeLength = 65535

// ParseCode parses a Code attribute. Bytecode and the nested attributes share memory with
// a.Data (capped sub-slices). Errors are FormatErrors whose AttrOffset is relative to the start of
// the attribute's contents; MethodCode adds the class and method to them.
//
// ParseCode checks the layout and the exception table ranges (start < end <= code_length,
// handler < code_length), which every editor of the code relies on; the instructions
// themselves are decoded by package code.
func ParseCode(a *Attribute) (*Code, error) {
	r := reader{b: a.Data, attr: true}
	c := &Code{}
	c.MaxStack = r.u2()
	c.MaxLocals = r.u2()
	lenOff := r.off
	n := r.u4()
	if r.err != nil {
		return nil, r.wrap("Code header")
	}
	if n == 0 || n > MaxCodeLength {
		return nil, r.fail(lenOff, "code_length", fmt.Sprintf("%d, must be 1 to %d", n, MaxCodeLength))
	}
	c.Bytecode = r.bytes(int(n), "code")
	if r.err != nil {
		return nil, r.err
	}
	ne := r.count(8, owner{}, "exception_table_length")
	if r.err != nil {
		return nil, r.err
	}
	if ne > 0 {
		c.Exceptions = make([]ExceptionEntry, ne)
		for i := range c.Exceptions {
			off := r.off
			e := &c.Exceptions[i]
			e.StartPC, e.EndPC, e.HandlerPC, e.CatchType = r.u2(), r.u2(), r.u2(), r.u2()
			if e.StartPC >= e.EndPC || uint32(e.EndPC) > n || uint32(e.HandlerPC) >= n {
				return nil, r.fail(off, fmt.Sprintf("exception table entry %d", i),
					fmt.Sprintf("range [%d, %d) handler %d invalid for code length %d", e.StartPC, e.EndPC, e.HandlerPC, n))
			}
		}
	}
	var err error
	if c.Attributes, err = r.attributes(owner{kind: "Code"}); err != nil {
		return nil, err
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "end of Code", fmt.Sprintf("%d extra bytes after the last attribute", len(r.b)-r.off))
	}
	return c, nil
}

// MethodCode returns the parsed Code attribute of method m and the raw attribute, or nil, nil,
// nil for an abstract or native method. Errors name the class and the method, and check what
// ParseCode cannot without the pool: catch types and nested attribute names.
func (c *Class) MethodCode(m *Member) (*Code, *Attribute, error) {
	a := FindAttribute(m.Attributes, "Code", c.Pool)
	if a == nil {
		return nil, nil, nil
	}
	code, err := ParseCode(a)
	if err != nil {
		if fe, ok := err.(*FormatError); ok {
			fe.Class = c.Name()
			fe.Context = "method " + m.String(c.Pool) + " Code attribute: " + fe.Context
		}
		return nil, nil, err
	}
	for i, e := range code.Exceptions {
		if e.CatchType != 0 && !c.Pool.has(e.CatchType, TagClass) {
			return nil, nil, &FormatError{Class: c.Name(), Offset: -1, AttrOffset: -1, Context: fmt.Sprintf("method %s exception table entry %d", m.String(c.Pool), i),
				Msg: fmt.Sprintf("catch type %d is not a Class constant", e.CatchType)}
		}
	}
	for i, na := range code.Attributes {
		if !c.Pool.has(na.NameIndex, TagUtf8) {
			return nil, nil, &FormatError{Class: c.Name(), Offset: -1, AttrOffset: -1, Context: fmt.Sprintf("method %s Code attribute %d", m.String(c.Pool), i),
				Msg: fmt.Sprintf("name index %d is not a Utf8 constant", na.NameIndex)}
		}
	}
	return code, a, nil
}

// Encode builds a Code attribute named by nameIndex (a Utf8 "Code"). It fails when the code or
// a table is too large for the format; "method too big" is reported this way.
func (c *Code) Encode(nameIndex uint16) (*Attribute, error) {
	if len(c.Bytecode) == 0 || len(c.Bytecode) > MaxCodeLength {
		return nil, fmt.Errorf("code length %d exceeds the limit of %d bytes", len(c.Bytecode), MaxCodeLength)
	}
	if len(c.Exceptions) > math.MaxUint16 {
		return nil, fmt.Errorf("%d exception table entries, at most 65535 allowed", len(c.Exceptions))
	}
	as, err := attributesSize(c.Attributes)
	if err != nil {
		return nil, err
	}
	n := 8 + len(c.Bytecode) + 2 + 8*len(c.Exceptions) + as
	if uint64(n) > math.MaxUint32 {
		return nil, fmt.Errorf("Code attribute of %d bytes does not fit a u4 length", n)
	}
	w := writer{b: make([]byte, 0, n)}
	w.u2(c.MaxStack)
	w.u2(c.MaxLocals)
	w.u4(uint32(len(c.Bytecode)))
	w.b = append(w.b, c.Bytecode...)
	w.u2(uint16(len(c.Exceptions)))
	for _, e := range c.Exceptions {
		w.u2(e.StartPC)
		w.u2(e.EndPC)
		w.u2(e.HandlerPC)
		w.u2(e.CatchType)
	}
	w.attributes(c.Attributes)
	return &Attribute{NameIndex: nameIndex, Data: w.b}, nil
}

// Attribute encodes the Code back into an attribute named by nameIndex, or returns nil when it
// exceeds the format's limits (Encode says which).
func (c *Code) Attribute(nameIndex uint16) *Attribute {
	a, err := c.Encode(nameIndex)
	if err != nil {
		return nil
	}
	return a
}
