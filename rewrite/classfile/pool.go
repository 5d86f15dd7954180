package classfile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

// ErrPoolOverflow is returned when adding a constant would need more than 65535 pool slots.
// Passes treat it as "leave this method unmodified", never as a failure of the whole run.
var ErrPoolOverflow = errors.New("constant pool would exceed 65535 entries")

// Pool is a constant pool. Entries[0] is unused, as in the class file. Constants added by a
// pass are appended, so indices that existing code and attributes use never move.
type Pool struct {
	Entries []Constant

	// De-duplication of added constants. A pass adds a handful of constants to a class, so
	// the first lookups scan the pool and remember what they found in recent; only a pass that
	// looks up many builds the full index (hashing every constant would cost more than the
	// whole rewrite of a small class).
	mu     sync.Mutex
	index  map[poolKey]uint16
	recent []poolHit
	scans  int
	unique map[uint16]bool // AddUniqueInteger's entries, never shared by de-duplication
	// members remembers the member references added (addMember): a pass calls the same few
	// runtime methods at every site, and each reference is five constants to look up.
	members map[memberKey]uint16

	// strs holds the decoded string of each Utf8 constant asked for, by index, so that the
	// same descriptor or class name asked for again (the data flow asks for the descriptor of
	// every call it meets) is not decoded and copied again. Made at the first Utf8 call, under
	// mu like the rest of the pool's own state.
	strs []string
}

// poolScans is how many pool scans de-duplication does before it builds the full index.
const poolScans = 32

type poolHit struct {
	k poolKey
	i uint16
}

// poolKey identifies a constant: s is its bytes (modified UTF-8 for a Utf8).
type poolKey struct {
	tag  uint8
	a, b uint16
	s    string
}

// Len returns the constant_pool_count of the class file (one more than the highest index).
func (p *Pool) Len() int { return len(p.Entries) }

// Entry returns the constant at index i, or an error naming the index when it is out of range
// or the unusable slot after a Long/Double.
func (p *Pool) Entry(i uint16) (*Constant, error) {
	if i == 0 || int(i) >= len(p.Entries) || p.Entries[i].Tag == 0 {
		return nil, fmt.Errorf("constant pool index %d is not a valid entry (pool size %d)", i, len(p.Entries))
	}
	return &p.Entries[i], nil
}

func (p *Pool) typed(i uint16, tags ...uint8) (*Constant, error) {
	c, err := p.Entry(i)
	if err != nil {
		return nil, err
	}
	for _, t := range tags {
		if c.Tag == t {
			return c, nil
		}
	}
	return nil, fmt.Errorf("constant pool index %d has tag %d (%s), want %s", i, c.Tag, TagName(c.Tag), TagName(tags[0]))
}

// Utf8 returns the string of a CONSTANT_Utf8 entry, decoding modified UTF-8.
func (p *Pool) Utf8(i uint16) (string, error) {
	c, err := p.typed(i, TagUtf8)
	if err != nil {
		return "", err
	}
	return p.decoded(i, c)
}

// decoded returns the decoded string of Utf8 constant c at index i, decoding it only the
// first time. An empty string is not remembered: it costs nothing to decode.
func (p *Pool) decoded(i uint16, c *Constant) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if int(i) < len(p.strs) && p.strs[i] != "" {
		return p.strs[i], nil
	}
	s, err := DecodeModifiedUTF8(c.Bytes)
	if err != nil {
		return "", err
	}
	if p.strs == nil {
		p.strs = make([]string, len(p.Entries))
	}
	if int(i) < len(p.strs) {
		p.strs[i] = s
	}
	return s, nil
}

// ClassName returns the internal name (e.g. "java/lang/String" or "[I") of a CONSTANT_Class.
func (p *Pool) ClassName(i uint16) (string, error) {
	c, err := p.typed(i, TagClass)
	if err != nil {
		return "", err
	}
	return p.Utf8(c.A)
}

// IsClassNamed reports whether index i holds a CONSTANT_Class of the internal name, without
// decoding (and allocating) the name when it is ASCII: comparing is all a caller needs.
func (p *Pool) IsClassNamed(i uint16, name string) bool {
	c, err := p.typed(i, TagClass)
	if err != nil {
		return false
	}
	u, err := p.typed(c.A, TagUtf8)
	if err != nil {
		return false
	}
	for _, b := range u.Bytes {
		if b == 0 || b >= 0x80 { // not ASCII, which decodes to itself
			s, err := DecodeModifiedUTF8(u.Bytes)
			return err == nil && s == name
		}
	}
	return string(u.Bytes) == name
}

// NameAndType returns the name and descriptor of a CONSTANT_NameAndType.
func (p *Pool) NameAndType(i uint16) (name, desc string, err error) {
	c, err := p.typed(i, TagNameAndType)
	if err != nil {
		return "", "", err
	}
	if name, err = p.Utf8(c.A); err != nil {
		return "", "", err
	}
	desc, err = p.Utf8(c.B)
	return name, desc, err
}

// MemberName returns the name of a Fieldref, Methodref or InterfaceMethodref as its raw bytes
// (modified UTF-8), without decoding or copying it: for scans that only compare names with
// ASCII ones. nil when i is not such a constant.
func (p *Pool) MemberName(i uint16) []byte {
	c, err := p.typed(i, TagFieldref, TagMethodref, TagInterfaceMethodref)
	if err != nil {
		return nil
	}
	nt, err := p.typed(c.B, TagNameAndType)
	if err != nil {
		return nil
	}
	u, err := p.typed(nt.A, TagUtf8)
	if err != nil {
		return nil
	}
	return u.Bytes
}

// MemberRef returns owner class, name and descriptor of a Fieldref, Methodref or
// InterfaceMethodref.
func (p *Pool) MemberRef(i uint16) (owner, name, desc string, err error) {
	c, err := p.typed(i, TagFieldref, TagMethodref, TagInterfaceMethodref)
	if err != nil {
		return "", "", "", err
	}
	if owner, err = p.ClassName(c.A); err != nil {
		return "", "", "", err
	}
	name, desc, err = p.NameAndType(c.B)
	return owner, name, desc, err
}

// DynamicNameAndType returns name and descriptor of an InvokeDynamic or Dynamic constant.
func (p *Pool) DynamicNameAndType(i uint16) (name, desc string, err error) {
	c, err := p.typed(i, TagInvokeDynamic, TagDynamic)
	if err != nil {
		return "", "", err
	}
	return p.NameAndType(c.B)
}

func (p *Pool) buildIndex() {
	if p.index != nil {
		return
	}
	p.index = make(map[poolKey]uint16, len(p.Entries))
	for i := len(p.Entries) - 1; i >= 1; i-- { // lowest index wins
		c := &p.Entries[i]
		if c.Tag == 0 || p.unique[uint16(i)] {
			continue
		}
		p.index[poolKey{c.Tag, c.A, c.B, string(c.Bytes)}] = uint16(i)
	}
}

// find returns the lowest index of a constant equal to k.
func (p *Pool) find(k poolKey) (uint16, bool) {
	for _, h := range p.recent {
		if h.k == k {
			return h.i, true
		}
	}
	if p.index == nil && p.scans >= poolScans {
		p.buildIndex()
	}
	if p.index != nil {
		i, ok := p.index[k]
		return i, ok
	}
	p.scans++
	for i := 1; i < len(p.Entries); i++ {
		c := &p.Entries[i]
		if c.Tag == k.tag && c.A == k.a && c.B == k.b && string(c.Bytes) == k.s && !p.unique[uint16(i)] {
			p.remember(k, uint16(i))
			return uint16(i), true
		}
	}
	return 0, false
}

// remember keeps a constant found or added while there is no full index.
func (p *Pool) remember(k poolKey, i uint16) {
	if p.index == nil {
		p.recent = append(p.recent, poolHit{k, i})
	} else {
		p.index[k] = i
	}
}

// add returns the index of an equal constant, appending one if there is none.
func (p *Pool) add(k poolKey) (uint16, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if i, ok := p.find(k); ok {
		return i, nil
	}
	width := 1
	if k.tag == TagLong || k.tag == TagDouble {
		width = 2
	}
	if len(p.Entries)+width > math.MaxUint16 {
		return 0, ErrPoolOverflow
	}
	i := uint16(len(p.Entries))
	c := Constant{Tag: k.tag, A: k.a, B: k.b}
	if k.s != "" || k.tag == TagUtf8 {
		c.Bytes = []byte(k.s)
	}
	p.Entries = append(p.Entries, c)
	if width == 2 {
		p.Entries = append(p.Entries, Constant{})
	}
	p.remember(k, i)
	return i, nil
}

// AddUtf8 returns the index of a CONSTANT_Utf8 holding s, adding it if needed.
func (p *Pool) AddUtf8(s string) (uint16, error) {
	b := s
	if !plainUTF8(s) {
		b = string(EncodeModifiedUTF8(s))
	}
	if len(b) > math.MaxUint16 {
		return 0, fmt.Errorf("string of %d bytes does not fit a CONSTANT_Utf8", len(b))
	}
	return p.add(poolKey{tag: TagUtf8, s: b})
}

// plainUTF8 reports whether s is its own modified UTF-8: no NUL and no character outside the
// BMP, the only two that modified UTF-8 writes differently (JVMS 4.4.7).
func plainUTF8(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 || s[i] >= 0xF0 {
			return false
		}
	}
	return true
}

// AddClass returns the index of a CONSTANT_Class for the internal name, adding it if needed.
func (p *Pool) AddClass(internalName string) (uint16, error) {
	u, err := p.AddUtf8(internalName)
	if err != nil {
		return 0, err
	}
	return p.add(poolKey{tag: TagClass, a: u})
}

// AddString returns the index of a CONSTANT_String.
func (p *Pool) AddString(s string) (uint16, error) {
	u, err := p.AddUtf8(s)
	if err != nil {
		return 0, err
	}
	return p.add(poolKey{tag: TagString, a: u})
}

// AddInteger returns the index of a CONSTANT_Integer.
func (p *Pool) AddInteger(v int32) (uint16, error) {
	u := uint32(v)
	return p.add(poolKey{tag: TagInteger, s: string([]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})})
}

// AddUniqueInteger appends a CONSTANT_Integer that de-duplication never hands out, whatever
// its value, so that SetInteger can fill it in later without changing any other use of the
// pool: the count pass compiles site IDs so and numbers them once the whole class is edited.
func (p *Pool) AddUniqueInteger() (uint16, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.Entries)+1 > math.MaxUint16 {
		return 0, ErrPoolOverflow
	}
	i := uint16(len(p.Entries))
	p.Entries = append(p.Entries, Constant{Tag: TagInteger, Bytes: make([]byte, 4)})
	if p.unique == nil {
		p.unique = map[uint16]bool{}
	}
	p.unique[i] = true
	return i, nil
}

// SetInteger sets the value of an entry made by AddUniqueInteger.
func (p *Pool) SetInteger(i uint16, v int32) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.unique[i] {
		return fmt.Errorf("constant pool index %d was not made by AddUniqueInteger", i)
	}
	binary.BigEndian.PutUint32(p.Entries[i].Bytes, uint32(v))
	return nil
}

// AddLong returns the index of a CONSTANT_Long (two slots).
func (p *Pool) AddLong(v int64) (uint16, error) {
	return p.add(poolKey{tag: TagLong, s: string(be64(uint64(v)))})
}

// AddFloat returns the index of a CONSTANT_Float holding exactly the bits of v.
func (p *Pool) AddFloat(v float32) (uint16, error) {
	u := math.Float32bits(v)
	return p.add(poolKey{tag: TagFloat, s: string([]byte{byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)})})
}

// AddDouble returns the index of a CONSTANT_Double (two slots) holding exactly the bits of v.
func (p *Pool) AddDouble(v float64) (uint16, error) {
	return p.add(poolKey{tag: TagDouble, s: string(be64(math.Float64bits(v)))})
}

func be64(u uint64) []byte {
	return []byte{byte(u >> 56), byte(u >> 48), byte(u >> 40), byte(u >> 32), byte(u >> 24), byte(u >> 16), byte(u >> 8), byte(u)}
}

// AddMethodType returns the index of a CONSTANT_MethodType for a method descriptor.
func (p *Pool) AddMethodType(desc string) (uint16, error) {
	u, err := p.AddUtf8(desc)
	if err != nil {
		return 0, err
	}
	return p.add(poolKey{tag: TagMethodType, a: u})
}

// AddMethodHandle returns the index of a CONSTANT_MethodHandle of the given reference kind
// (1 getField … 9 invokeInterface) to a Fieldref/Methodref/InterfaceMethodref at ref.
func (p *Pool) AddMethodHandle(kind uint8, ref uint16) (uint16, error) {
	if kind < 1 || kind > 9 {
		return 0, fmt.Errorf("method handle reference kind %d, want 1 to 9", kind)
	}
	return p.add(poolKey{tag: TagMethodHandle, a: uint16(kind), b: ref})
}

// AddInvokeDynamic returns the index of a CONSTANT_InvokeDynamic for bootstrap method bsm (an
// index into BootstrapMethods, see Class.AddBootstrapMethod).
func (p *Pool) AddInvokeDynamic(bsm uint16, name, desc string) (uint16, error) {
	nt, err := p.AddNameAndType(name, desc)
	if err != nil {
		return 0, err
	}
	return p.add(poolKey{tag: TagInvokeDynamic, a: bsm, b: nt})
}

// AddNameAndType returns the index of a CONSTANT_NameAndType.
func (p *Pool) AddNameAndType(name, desc string) (uint16, error) {
	n, err := p.AddUtf8(name)
	if err != nil {
		return 0, err
	}
	d, err := p.AddUtf8(desc)
	if err != nil {
		return 0, err
	}
	return p.add(poolKey{tag: TagNameAndType, a: n, b: d})
}

// AddMethodref returns the index of a CONSTANT_Methodref (or InterfaceMethodref when iface).
func (p *Pool) AddMethodref(owner, name, desc string, iface bool) (uint16, error) {
	tag := uint8(TagMethodref)
	if iface {
		tag = TagInterfaceMethodref
	}
	return p.addMember(tag, owner, name, desc)
}

// AddFieldref returns the index of a CONSTANT_Fieldref.
func (p *Pool) AddFieldref(owner, name, desc string) (uint16, error) {
	return p.addMember(TagFieldref, owner, name, desc)
}

func (p *Pool) addMember(tag uint8, owner, name, desc string) (uint16, error) {
	k := memberKey{tag, owner, name, desc}
	p.mu.Lock()
	i, ok := p.members[k]
	p.mu.Unlock()
	if ok {
		return i, nil
	}
	c, err := p.AddClass(owner)
	if err != nil {
		return 0, err
	}
	nt, err := p.AddNameAndType(name, desc)
	if err != nil {
		return 0, err
	}
	i, err = p.add(poolKey{tag: tag, a: c, b: nt})
	if err != nil {
		return 0, err
	}
	p.mu.Lock()
	if p.members == nil {
		p.members = map[memberKey]uint16{}
	}
	p.members[k] = i
	p.mu.Unlock()
	return i, nil
}

// memberKey is a member reference as addMember is asked for it.
type memberKey struct {
	tag               uint8
	owner, name, desc string
}

// TagName returns the JVMS name of a constant pool tag, for messages.
func TagName(tag uint8) string {
	switch tag {
	case TagUtf8:
		return "Utf8"
	case TagInteger:
		return "Integer"
	case TagFloat:
		return "Float"
	case TagLong:
		return "Long"
	case TagDouble:
		return "Double"
	case TagClass:
		return "Class"
	case TagString:
		return "String"
	case TagFieldref:
		return "Fieldref"
	case TagMethodref:
		return "Methodref"
	case TagInterfaceMethodref:
		return "InterfaceMethodref"
	case TagNameAndType:
		return "NameAndType"
	case TagMethodHandle:
		return "MethodHandle"
	case TagMethodType:
		return "MethodType"
	case TagDynamic:
		return "Dynamic"
	case TagInvokeDynamic:
		return "InvokeDynamic"
	case TagModule:
		return "Module"
	case TagPackage:
		return "Package"
	}
	return fmt.Sprintf("unknown(%d)", tag)
}
