// Package code turns a method's Code attribute into an editable list of instructions and back.
//
// Decode builds a Body: a doubly linked list of nodes, each an instruction or a label (a
// position between instructions). Everything in the Code attribute that names a bytecode
// offset — branch and switch targets, exception-table bounds, line numbers, local-variable
// ranges, type-annotation offsets and stack-map frame positions — is held as a *Label, so code
// can be inserted, replaced or removed anywhere and Encode recomputes every offset: it widens
// goto to goto_w, jsr to jsr_w and an out-of-range conditional branch into an inverted branch
// over a goto_w (widening can cascade), re-pads switches, remaps every table and recomputes
// max_stack and max_locals.
//
// Decoded nodes (instructions and the nodes that place labels) share one slab and the labels
// another, and inserted nodes come from chunks, so the hot decode→encode path costs a handful
// of allocations per method, not one per instruction.
//
// Stack map frames are not this package's job: package frames parses them against the labels
// of a Body (LabelAt, InsnAt) and produces the new StackMapTable through the FrameEncoder hook
// once final offsets are known.
package code

import (
	"errors"
	"fmt"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

// Opcode is a JVM opcode (0x00–0xff), or OpLabel for a label node.
type Opcode uint16

// OpLabel marks a node that is a label, not an instruction.
const OpLabel Opcode = 0x100

// Insn is one node of a method body: an instruction, or a label when Op == OpLabel.
//
// Operand fields that an opcode does not use are zero. The opcode is kept exactly as decoded
// (iload_1 stays iload_1, ldc_w stays ldc_w, goto_w stays goto_w) so that an unedited method
// encodes to identical bytes; Encode only ever widens.
type Insn struct {
	// Fields are ordered to pack the struct: decoded methods hold one per instruction.

	Op Opcode
	// Wide records a wide prefix on a local-variable instruction. Encode adds the prefix by
	// itself when Var > 255 or an iinc increment does not fit a byte; Wide keeps a prefix the
	// original code had although it was not needed.
	Wide    bool
	removed bool
	// Int is the bipush/sipush value, the iinc increment, the newarray atype, the
	// multianewarray dimension count or the invokeinterface count byte.
	Int int32
	// Index is the constant-pool index of ldc*, field and method instructions, invokedynamic,
	// new, anewarray, checkcast, instanceof and multianewarray.
	Index uint16
	depth int32 // stack depth scratch for computeMax: -1 unknown
	// Var is the local-variable index of loads, stores, iinc and ret (also set for the
	// iload_0-style forms, whose index is implied by the opcode).
	Var int
	// Offset is the instruction's offset in the decoded code; -1 for inserted nodes. For a
	// label node it is the label's original offset.
	Offset int
	pos    int32  // offset assigned by the last Encode
	seen   uint32 // Body.epoch of the last layout that placed this node
	num    int32  // list position from the last Body.Number

	// Target is the destination of a branch (if*, goto, goto_w, jsr, jsr_w).
	Target *Label
	// Switch holds the operands of tableswitch and lookupswitch.
	Switch *Switch
	// Label is the label this node marks, when Op == OpLabel.
	Label *Label

	prev, next *Insn
}

// Label is a position between instructions. A label is placed in the code by exactly one node
// (Node); branches, tables and frames refer to it.
type Label struct {
	// Offset is the original bytecode offset of the label, -1 for a label made by a pass. It is
	// for diagnostics and for mapping original offsets (frames, uninitialized(offset)).
	Offset int

	node *Insn
}

// Node is the list node that places the label, nil while the label is not yet placed.
func (l *Label) Node() *Insn { return l.node }

// Pos is the offset of the label after the last successful Encode (the offset of the next
// instruction, or the code length at the end).
func (l *Label) Pos() int {
	if l.node == nil {
		return -1
	}
	return int(l.node.pos)
}

// Pos is the offset of the instruction after the last successful Encode (its decoded offset
// before any).
func (i *Insn) Pos() int { return int(i.pos) }

// Next returns the following node, nil at the end.
func (i *Insn) Next() *Insn { return i.next }

// Prev returns the preceding node, nil at the start.
func (i *Insn) Prev() *Insn { return i.prev }

// IsLabel reports whether the node is a label rather than an instruction.
func (i *Insn) IsLabel() bool { return i.Op == OpLabel }

// Switch holds the operands of a tableswitch (Keys nil, Targets[k] for value Low+k) or a
// lookupswitch (Targets[k] for Keys[k], keys in the order they were given).
type Switch struct {
	Default *Label
	Low     int32 // tableswitch only
	Keys    []int32
	Targets []*Label
}

// Handler is one exception-table entry: Start inclusive, End exclusive. CatchType is a pool
// index of a CONSTANT_Class, 0 for a handler that catches everything.
type Handler struct {
	Start, End, Handler *Label
	CatchType           uint16
}

// LineNumber says that the code from Start on belongs to source line Line.
type LineNumber struct {
	Start *Label
	Line  uint16
}

// LocalVar is an entry of a LocalVariableTable (Desc is a descriptor index) or of a
// LocalVariableTypeTable (Desc is then a signature index). The range is [Start, End).
type LocalVar struct {
	Start, End *Label
	Name, Desc uint16
	Index      uint16
}

// TypeAnnotation is one type_annotation of a Runtime(In)VisibleTypeAnnotations attribute
// inside Code (JVMS 4.7.20). Only the parts that hold offsets are parsed; Rest is the
// type_path and annotation exactly as stored.
type TypeAnnotation struct {
	TargetType uint8
	// Ranges is the localvar_target table (target types 0x40, 0x41).
	Ranges []LocalVar // Name and Desc unused; Index is the local slot
	// ExceptionIndex is the catch_target's index into the exception table (0x42). Handlers
	// added by passes are appended, so existing indices stay valid.
	ExceptionIndex uint16
	// Insn is the instruction of an offset_target (0x43–0x46) or type_argument_target
	// (0x47–0x4b): the annotation follows the instruction (a new, instanceof or call), not the
	// position, when code is inserted before it.
	Insn *Insn
	// TypeArgIndex is the type_argument_index of a type_argument_target.
	TypeArgIndex uint8
	Rest         []byte
}

// AttrKind says how a Code sub-attribute is held in a Body.
type AttrKind uint8

const (
	// AttrRaw is an attribute this package does not understand. It is copied as is while no
	// offset changes; once offsets change Encode refuses with ErrUnmappableAttribute, because
	// it may hold offsets that would silently go wrong.
	AttrRaw AttrKind = iota
	AttrLineNumbers
	AttrLocalVars
	AttrLocalVarTypes
	AttrVisibleTypeAnnotations
	AttrInvisibleTypeAnnotations
	// AttrStackMap is the StackMapTable, kept raw here. It is copied while no offset changes;
	// otherwise Body.Frames must produce it.
	AttrStackMap
)

// Attr is one attribute of the Code attribute, in its original order.
type Attr struct {
	Kind  AttrKind
	Name  uint16 // pool index of the attribute name
	Raw   []byte // AttrRaw and AttrStackMap: contents as stored
	Lines []LineNumber
	Vars  []LocalVar // AttrLocalVars and AttrLocalVarTypes
	Annos []TypeAnnotation

	orig []byte // contents as decoded, written back while the body is unedited
}

// Method identifies the method a Body belongs to, for messages and for argument slots.
type Method struct {
	Class      string // internal name
	Name, Desc string
	Access     uint16
	Major      uint16 // class file major version: < 50 allows jsr/ret and needs no frames
}

// String is "Class.name(desc)", the way errors name a method.
func (m Method) String() string { return m.Class + "." + m.Name + m.Desc }

// FrameEncoder produces the StackMapTable of an edited method. Encode calls it after every
// offset is final: Label.Pos and Insn.Pos are valid and the node list reflects the encoding,
// including conditional branches that were widened into an inverted branch to a new label
// placed just after a goto_w (a new branch target that needs a frame: the state after the
// conditional). It returns the attribute contents, or nil to write no StackMapTable.
type FrameEncoder interface {
	EncodeFrames(b *Body) ([]byte, error)
}

// FrameAppender is a FrameEncoder that can append the contents to the bytes of the Code
// attribute being written, which EncodeAttribute then uses instead of EncodeFrames: appending
// nothing writes no StackMapTable.
type FrameAppender interface {
	AppendFrames(dst []byte, b *Body) ([]byte, error)
}

// Body is the decoded, editable code of one method. Changes to its exported fields (Handlers,
// Attrs and their tables) count only once the body is marked modified, by an edit of the code
// or by MarkModified. A Body is not safe for concurrent use.
type Body struct {
	Method Method
	Pool   *classfile.Pool

	// MaxStack and MaxLocals are the values of the decoded Code attribute.
	// Encode writes the larger of these and the recomputed values, so frames and debug tables
	// that mention slots nobody loads stay valid.
	MaxStack, MaxLocals int

	Handlers []Handler
	Attrs    []*Attr

	// Frames produces the StackMapTable of an edited body. Without it, an edited method with a
	// StackMapTable encodes only while no offset moved and no instruction or handler was added
	// or removed (then the old table still holds); otherwise Encode refuses with
	// ErrUnmappableAttribute.
	Frames FrameEncoder

	first, last *Insn
	insns       []Insn  // decoded instructions in original order (the slab)
	labels      []Label // decoded labels in original offset order
	codeLen     int     // original code length
	nextLocal   int     // first slot NewLocal may hand out
	localsHigh  int     // end of the highest slot NewLocal handed out, 0 if none
	nHandlers   int     // exception-table entries decoded
	modified    bool    // any edit since Decode
	// insertErr is the first error of a sequence an insert refused; Encode fails with it, so
	// a pass that did not check an insert cannot write a body missing that sequence.
	insertErr  error
	free       []Insn  // chunk for inserted nodes
	freeLabels []Label // chunk for new labels
	chunk      int     // size of the last node chunk
	labelChunk int     // size of the last label chunk
	epoch      uint32  // layout generation, see Insn.seen
	arena      *arena  // node memory, returned by Release
	chunks     int     // node chunks taken from arena
}

// ErrCodeTooLarge is returned (wrapped in a *TooLargeError inside an *Error) when the encoded code would exceed
// 65535 bytes. The pass keeps the method unmodified with that reason.
var ErrCodeTooLarge = errors.New("code would exceed 65535 bytes")

// ErrUnmappableAttribute is returned when offsets changed in a method whose Code attribute
// holds an attribute this package cannot remap (an unknown one, or a StackMapTable without a
// FrameEncoder). Keeping the method unmodified is the only safe choice.
var ErrUnmappableAttribute = errors.New("code attribute cannot be remapped")

// TooLargeError is the cause, inside an *Error, when encoded code would exceed 65535 bytes: it
// tells by how much.
type TooLargeError struct{ Size int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("code would be %d bytes, more than 65535", e.Size)
}

func (e *TooLargeError) Unwrap() error { return ErrCodeTooLarge }

// Error is the one error type of rewriting: it names the class, the method and the original
// bytecode offset a problem is about, and wraps its cause, so errors.Is and errors.As see
// through it (ErrCodeTooLarge, ErrUnmappableAttribute, classfile.ErrPoolOverflow, a
// classfile.DescriptorError). Every such error is built by Method.Errorf; its text follows the
// JDK's class-file API: "what went wrong at bytecode offset N of method C.m(D)".
type Error struct {
	// Method is the method the problem is in; only Class is set for a problem with the class as
	// a whole.
	Method Method
	// Offset is the original bytecode offset of the instruction, -1 for inserted code or a
	// problem with the method as a whole.
	Offset int
	// Msg says what went wrong, including the cause's text; Err is the cause (possibly itself a
	// wrapper from fmt.Errorf's %w), nil when there is none.
	Msg string
	Err error
}

// Errorf returns the *Error about the instruction at original offset off of m (-1: none).
// format and args follow fmt.Errorf, so a %w verb makes the cause unwrappable.
func (m Method) Errorf(off int, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	var cause error
	switch w := err.(type) {
	case interface{ Unwrap() error }:
		cause = w.Unwrap()
	case interface{ Unwrap() []error }:
		cause = err // several causes (%w more than once): errors.Is and As search them all
	}
	return &Error{Method: m, Offset: off, Msg: err.Error(), Err: cause}
}

func (e *Error) Error() string {
	switch {
	case e.Method.Name == "":
		return e.Msg + " in class " + e.Method.Class
	case e.Offset >= 0:
		return fmt.Sprintf("%s at bytecode offset %d of method %s", e.Msg, e.Offset, e.Method)
	}
	return e.Msg + " in method " + e.Method.String()
}

func (e *Error) Unwrap() error { return e.Err }
