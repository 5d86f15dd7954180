package classfile

import (
	"fmt"
	"math"
)

// Parsed forms of the class- and member-level attributes that passes and the inspector read.
// Each Parse* checks the layout against the attribute's length; offsets in errors are relative
// to the attribute's contents. Attributes not listed here stay raw bytes.

// ParseIndex reads an attribute whose whole content is one constant pool index: Signature,
// SourceFile, NestHost, ConstantValue, ModuleMainClass.
func ParseIndex(a *Attribute) (uint16, error) {
	if len(a.Data) != 2 {
		return 0, &FormatError{Offset: -1, AttrOffset: -1, Context: "single-index attribute", Msg: fmt.Sprintf("length %d, want 2", len(a.Data))}
	}
	return uint16(a.Data[0])<<8 | uint16(a.Data[1]), nil
}

// EncodeIndex builds a single-index attribute such as Signature or NestHost.
func EncodeIndex(nameIndex, index uint16) *Attribute {
	return &Attribute{NameIndex: nameIndex, Data: []byte{byte(index >> 8), byte(index)}}
}

// ParseIndexList reads an attribute that is a u2 count followed by that many u2 pool indices:
// Exceptions, NestMembers, PermittedSubclasses, ModulePackages.
func ParseIndexList(a *Attribute) ([]uint16, error) {
	r := reader{b: a.Data, attr: true}
	n := r.count(2, owner{}, "index count")
	if r.err != nil {
		return nil, r.err
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = r.u2()
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "index list", fmt.Sprintf("%d extra bytes", len(r.b)-r.off))
	}
	return out, nil
}

// EncodeIndexList is the inverse of ParseIndexList.
func EncodeIndexList(nameIndex uint16, list []uint16) (*Attribute, error) {
	if len(list) > math.MaxUint16 {
		return nil, fmt.Errorf("%d entries, at most 65535 allowed", len(list))
	}
	w := writer{b: make([]byte, 0, 2+2*len(list))}
	w.u2(uint16(len(list)))
	for _, x := range list {
		w.u2(x)
	}
	return &Attribute{NameIndex: nameIndex, Data: w.b}, nil
}

// InnerClass is one entry of InnerClasses (JVMS 4.7.6). Outer and Name are 0 for local and
// anonymous classes.
type InnerClass struct {
	Inner, Outer, Name, AccessFlags uint16
}

// ParseInnerClasses reads an InnerClasses attribute.
func ParseInnerClasses(a *Attribute) ([]InnerClass, error) {
	r := reader{b: a.Data, attr: true}
	n := r.count(8, owner{}, "number_of_classes")
	if r.err != nil {
		return nil, r.err
	}
	out := make([]InnerClass, n)
	for i := range out {
		out[i] = InnerClass{r.u2(), r.u2(), r.u2(), r.u2()}
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "InnerClasses", fmt.Sprintf("%d extra bytes", len(r.b)-r.off))
	}
	return out, nil
}

// EnclosingMethod is the parsed EnclosingMethod attribute; Method is 0 when the class is not
// enclosed by a method (e.g. in an initializer).
type EnclosingMethod struct{ Class, Method uint16 }

// ParseEnclosingMethod reads an EnclosingMethod attribute.
func ParseEnclosingMethod(a *Attribute) (EnclosingMethod, error) {
	if len(a.Data) != 4 {
		return EnclosingMethod{}, &FormatError{Offset: -1, AttrOffset: -1, Context: "EnclosingMethod", Msg: fmt.Sprintf("length %d, want 4", len(a.Data))}
	}
	d := a.Data
	return EnclosingMethod{uint16(d[0])<<8 | uint16(d[1]), uint16(d[2])<<8 | uint16(d[3])}, nil
}

// RecordComponent is one component of a Record attribute; its attributes (Signature,
// annotations) stay raw.
type RecordComponent struct {
	NameIndex, DescriptorIndex uint16
	Attributes                 []*Attribute
}

// ParseRecord reads a Record attribute.
func ParseRecord(a *Attribute) ([]RecordComponent, error) {
	r := reader{b: a.Data, attr: true}
	n := r.count(6, owner{}, "components_count")
	if r.err != nil {
		return nil, r.err
	}
	out := make([]RecordComponent, n)
	for i := range out {
		rc := &out[i]
		rc.NameIndex = r.u2()
		rc.DescriptorIndex = r.u2()
		var err error
		if rc.Attributes, err = r.attributes(owner{kind: fmt.Sprintf("record component %d", i)}); err != nil {
			return nil, err
		}
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "Record", fmt.Sprintf("%d extra bytes", len(r.b)-r.off))
	}
	return out, nil
}

// BootstrapMethod is one entry of BootstrapMethods: a MethodHandle constant and its static
// arguments (loadable constants).
type BootstrapMethod struct {
	MethodRef uint16
	Args      []uint16
}

// ParseBootstrapMethods reads a BootstrapMethods attribute.
func ParseBootstrapMethods(a *Attribute) ([]BootstrapMethod, error) {
	r := reader{b: a.Data, attr: true}
	n := r.count(4, owner{}, "num_bootstrap_methods")
	if r.err != nil {
		return nil, r.err
	}
	out := make([]BootstrapMethod, n)
	for i := range out {
		out[i].MethodRef = r.u2()
		na := r.count(2, owner{kind: fmt.Sprintf("bootstrap method %d", i)}, " num_bootstrap_arguments")
		if r.err != nil {
			return nil, r.err
		}
		if na > 0 {
			out[i].Args = make([]uint16, na)
			for j := range out[i].Args {
				out[i].Args[j] = r.u2()
			}
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(r.b) {
		return nil, r.fail(r.off, "BootstrapMethods", fmt.Sprintf("%d extra bytes", len(r.b)-r.off))
	}
	return out, nil
}

// EncodeBootstrapMethods is the inverse of ParseBootstrapMethods.
func EncodeBootstrapMethods(nameIndex uint16, bms []BootstrapMethod) (*Attribute, error) {
	if len(bms) > math.MaxUint16 {
		return nil, fmt.Errorf("%d bootstrap methods, at most 65535 allowed", len(bms))
	}
	n := 2
	for i, b := range bms {
		if len(b.Args) > math.MaxUint16 {
			return nil, fmt.Errorf("bootstrap method %d: %d arguments, at most 65535 allowed", i, len(b.Args))
		}
		n += 4 + 2*len(b.Args)
	}
	w := writer{b: make([]byte, 0, n)}
	w.u2(uint16(len(bms)))
	for _, b := range bms {
		w.u2(b.MethodRef)
		w.u2(uint16(len(b.Args)))
		for _, x := range b.Args {
			w.u2(x)
		}
	}
	return &Attribute{NameIndex: nameIndex, Data: w.b}, nil
}

// AddBootstrapMethod returns the index of an entry equal to bm in the class's BootstrapMethods
// attribute, appending the entry (and creating the attribute) when there is none. Existing
// entries keep their indices, so invokedynamic and Dynamic constants stay valid. It fails with
// ErrPoolOverflow when the attribute's name cannot be added to the pool.
func (c *Class) AddBootstrapMethod(bm BootstrapMethod) (uint16, error) {
	a := FindAttribute(c.Attributes, "BootstrapMethods", c.Pool)
	var bms []BootstrapMethod
	if a != nil {
		var err error
		if bms, err = ParseBootstrapMethods(a); err != nil {
			return 0, fmt.Errorf("class %s: BootstrapMethods: %w", c.Name(), err)
		}
	}
	for i, b := range bms {
		if b.MethodRef == bm.MethodRef && equalIndices(b.Args, bm.Args) {
			return uint16(i), nil
		}
	}
	if len(bms) >= math.MaxUint16 {
		return 0, fmt.Errorf("class %s: BootstrapMethods already holds 65535 entries", c.Name())
	}
	bms = append(bms, BootstrapMethod{MethodRef: bm.MethodRef, Args: append([]uint16(nil), bm.Args...)})
	if a == nil {
		name, err := c.Pool.AddUtf8("BootstrapMethods")
		if err != nil {
			return 0, err
		}
		a = &Attribute{NameIndex: name}
		c.Attributes = append(c.Attributes, a)
	}
	enc, err := EncodeBootstrapMethods(a.NameIndex, bms)
	if err != nil {
		return 0, fmt.Errorf("class %s: %w", c.Name(), err)
	}
	a.Data = enc.Data
	return uint16(len(bms) - 1), nil
}

func equalIndices(a, b []uint16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// SourceFile returns the class's SourceFile name, or "" when it has none.
func (c *Class) SourceFile() string { return c.utf8Attribute("SourceFile") }

// Signature returns the class's generic Signature, or "" when it has none.
func (c *Class) Signature() string { return c.utf8Attribute("Signature") }

// utf8Attribute returns the Utf8 constant a single-index attribute names, "" when the attribute
// is absent or malformed (both are purely descriptive).
func (c *Class) utf8Attribute(name string) string {
	a := FindAttribute(c.Attributes, name, c.Pool)
	if a == nil {
		return ""
	}
	i, err := ParseIndex(a)
	if err != nil || !c.Pool.has(i, TagUtf8) {
		return ""
	}
	return c.Pool.text(i)
}

// HasAttribute reports whether attrs holds an attribute with the given name.
func HasAttribute(attrs []*Attribute, name string, p *Pool) bool {
	return FindAttribute(attrs, name, p) != nil
}
