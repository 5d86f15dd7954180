// Package frames models, reads, writes and maintains StackMapTable frames (JVMS 4.7.4, 4.10.1).
//
// The rewriter keeps the compiler's frames and derives only the frames its own inserted code
// needs. It never loads classes and never guesses a common supertype of two classes: where a
// frame could only be built by such a guess, the functions here return an error and the pass
// leaves the method as it was. That rule is what keeps rewritten classes verifying on every JVM,
// unlike agents that recompute all frames with a class hierarchy they do not really have.
//
// Frames are held expanded, one entry per slot: a long or double in a local variable or on the
// operand stack takes two entries, the value's own type followed by Top for its second half.
// This is the view the JVM's type checker works in and the one an instruction's slot numbers
// index; the compact view of the class file (one entry per value) exists only inside the
// StackMapTable reader and writer.
package frames

import (
	"errors"
	"fmt"
	"strings"

	"github.com/heapledger/heapledger/rewrite/code"
)

// ErrNoFrames is the cause of every error of Attach, Infer and a Method's frames when the data
// flow cannot derive a frame without loading classes, or the code or its frames are
// inconsistent: the rewrite keeps the method as it was, and reports it under this reason.
var ErrNoFrames = errors.New("stack map frames cannot be derived")

// Kind is a verification type's kind. The values are the verification_type_info tags of the
// class file, so the reader and writer convert with a plain cast.
type Kind uint8

const (
	Top               Kind = 0
	Integer           Kind = 1
	Float             Kind = 2
	Double            Kind = 3
	Long              Kind = 4
	Null              Kind = 5
	UninitializedThis Kind = 6
	Object            Kind = 7
	Uninitialized     Kind = 8

	// ReturnAddress is the value jsr pushes. It is not a verification type of the class file
	// (only versions < 50 have jsr, and they have no frames); the data-flow analysis of old
	// code needs it to follow subroutines, and the writer refuses it.
	ReturnAddress Kind = 9
)

var kindNames = [...]string{"top", "int", "float", "double", "long", "null", "uninitializedThis", "object", "uninitialized", "returnAddress"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Type is one verification type.
//
// For Object, Class is the internal name as a CONSTANT_Class holds it ("java/lang/String",
// "[I"); Index is the constant pool index it was read from, kept so that a frame written back
// unchanged is byte-identical even in the rare class whose pool names one class twice. Index is
// 0 for types made by the rewriter; the writer then adds or finds a pool entry.
//
// For Uninitialized, the `new` instruction that created the value is named by New, its bytecode
// offset, in frames read from or written to a class file (Decode, Encode), and by Site, the
// instruction itself, in frames of an instruction list (Method, Analysis): Site follows the
// `new` wherever inserted code moves it, and its offset is taken only when the method is
// encoded.
//
// The data-flow analysis of code without frames (Infer) also makes Object types with an empty
// Class: "some reference", the merge of two different classes when no class hierarchy is at
// hand. They never reach a class file.
type Type struct {
	Kind  Kind
	Index uint16 // next to Kind, so the two share a word: frames hold many types
	Class string
	New   int
	Site  *code.Insn
}

// Common types, for brevity.
var (
	TopType     = Type{Kind: Top}
	IntType     = Type{Kind: Integer}
	FloatType   = Type{Kind: Float}
	LongType    = Type{Kind: Long}
	DoubleType  = Type{Kind: Double}
	NullType    = Type{Kind: Null}
	UninitThis  = Type{Kind: UninitializedThis}
	ObjectClass = "java/lang/Object"
)

// ObjectType returns the type of a reference to an instance of the internal class name.
func ObjectType(class string) Type { return Type{Kind: Object, Class: class} }

// UninitializedType returns the type of the object a `new` identified by site created.
func UninitializedType(site int) Type { return Type{Kind: Uninitialized, New: site} }

// Equal reports whether two types are the same verification type; the pool index an Object
// was read from does not matter.
func (t Type) Equal(u Type) bool {
	if t.Kind != u.Kind {
		return false
	}
	switch t.Kind {
	case Object:
		return t.Class == u.Class
	case Uninitialized:
		if t.Site != nil || u.Site != nil {
			return t.Site == u.Site
		}
		return t.New == u.New
	}
	return true
}

// IsWide reports whether the type takes two slots.
func (t Type) IsWide() bool { return t.Kind == Long || t.Kind == Double }

// IsReference reports whether the type is a reference (initialized or not, or null).
func (t Type) IsReference() bool {
	switch t.Kind {
	case ReturnAddress:
		return false
	case Null, UninitializedThis, Object, Uninitialized:
		return true
	}
	return false
}

func (t Type) String() string {
	switch t.Kind {
	case Object:
		if t.Class == "" {
			return "reference"
		}
		return t.Class
	case Uninitialized:
		if t.Site != nil {
			if t.Site.Offset >= 0 {
				return fmt.Sprintf("uninitialized(new@%d)", t.Site.Offset)
			}
			return "uninitialized(inserted new)"
		}
		return fmt.Sprintf("uninitialized(%d)", t.New)
	}
	return t.Kind.String()
}

// Frame is the state of the locals and the operand stack before one instruction, one entry per
// slot (see the package comment). Locals beyond len(Locals) are Top.
type Frame struct {
	Locals []Type
	Stack  []Type
}

// Clone returns a copy that shares no slices with f.
func (f Frame) Clone() Frame {
	return Frame{Locals: append([]Type(nil), f.Locals...), Stack: append([]Type(nil), f.Stack...)}
}

// Equal reports whether two frames hold the same types. Trailing Top locals are significant,
// because the class file can say them explicitly and the writer keeps what it was given.
func (f Frame) Equal(g Frame) bool {
	return typesEqual(f.Locals, g.Locals) && typesEqual(f.Stack, g.Stack)
}

func typesEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Local returns the type in slot i; slots past the end are Top.
func (f Frame) Local(i int) Type {
	if i < len(f.Locals) {
		return f.Locals[i]
	}
	return TopType
}

// SetLocal stores t in slot i (and Top in i+1 for a wide type), growing Locals with Top as
// needed and invalidating a wide value whose half is overwritten, as the JVM's type checker
// does for a store.
func (f *Frame) SetLocal(i int, t Type) {
	need := i + 1
	if t.IsWide() {
		need++
	}
	for len(f.Locals) < need {
		f.Locals = append(f.Locals, TopType)
	}
	if i > 0 && f.Locals[i-1].IsWide() {
		f.Locals[i-1] = TopType
	}
	f.Locals[i] = t
	if t.IsWide() {
		f.Locals[i+1] = TopType
	}
}

func (f Frame) String() string {
	var sb strings.Builder
	sb.WriteString("locals=[")
	writeTypes(&sb, f.Locals)
	sb.WriteString("] stack=[")
	writeTypes(&sb, f.Stack)
	sb.WriteString("]")
	return sb.String()
}

// writeTypes prints the compact view, so that a long shows once, as javap shows it.
func writeTypes(sb *strings.Builder, ts []Type) {
	for i := 0; i < len(ts); i++ {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(ts[i].String())
		if ts[i].IsWide() {
			i++
		}
	}
}

// compact converts an expanded slot view to the class file's one-entry-per-value view. The slot
// after a wide type must be Top; anything else is a malformed frame.
func compact(ts []Type) ([]Type, error) {
	return compactInto(make([]Type, 0, len(ts)), ts)
}

// compactInto is compact appending to dst.
func compactInto(dst, ts []Type) ([]Type, error) {
	out := dst
	for i := 0; i < len(ts); i++ {
		out = append(out, ts[i])
		if ts[i].IsWide() {
			if i+1 < len(ts) && ts[i+1].Kind != Top {
				return nil, fmt.Errorf("slot %d: %s followed by %s instead of its second half", i, ts[i], ts[i+1])
			}
			i++
		}
	}
	return out, nil
}
