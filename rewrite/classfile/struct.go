// Package classfile reads and writes Java class files losslessly.
//
// The model is deliberately close to the on-disk format (JVMS chapter 4): indices stay
// indices, and every attribute keeps its raw bytes until a pass asks for a parsed form. A
// class that is read and written back without changes is byte-identical, which is what lets
// the rewriter touch only the methods it instruments and leave the rest of a class alone.
package classfile

// Magic is the first word of every class file.
const Magic = 0xCAFEBABE

// Versions the engine understands. A class with a newer major version is passed through
// unchanged with a warning, because its format may hold things we would damage.
const (
	MinMajor = 45
	MaxMajor = 69 // Java 25
)

// Access flags used by the rewriter (JVMS 4.1, 4.5, 4.6).
const (
	AccPublic     = 0x0001
	AccPrivate    = 0x0002
	AccProtected  = 0x0004
	AccStatic     = 0x0008
	AccFinal      = 0x0010
	AccSuper      = 0x0020
	AccSynchron   = 0x0020
	AccBridge     = 0x0040
	AccVarargs    = 0x0080
	AccNative     = 0x0100
	AccInterface  = 0x0200
	AccAbstract   = 0x0400
	AccStrict     = 0x0800
	AccSynthetic  = 0x1000
	AccAnnotation = 0x2000
	AccEnum       = 0x4000
	AccModule     = 0x8000
)

// Class is one class file.
type Class struct {
	Minor, Major uint16
	Pool         *Pool
	AccessFlags  uint16
	ThisClass    uint16 // Pool index of a CONSTANT_Class
	SuperClass   uint16 // 0 for java/lang/Object and module-info
	Interfaces   []uint16
	Fields       []*Member
	Methods      []*Member
	Attributes   []*Attribute
}

// Member is a field or a method.
type Member struct {
	AccessFlags     uint16
	NameIndex       uint16
	DescriptorIndex uint16
	Attributes      []*Attribute
}

// Attribute is an attribute as stored: its name index and its contents, not parsed. Parsed
// forms (Code, StackMapTable, ...) are produced on demand by the Parse* functions and turned
// back into an Attribute by their Encode methods.
type Attribute struct {
	NameIndex uint16
	Data      []byte
}

// Constant pool tags (JVMS 4.4).
const (
	TagUtf8               = 1
	TagInteger            = 3
	TagFloat              = 4
	TagLong               = 5
	TagDouble             = 6
	TagClass              = 7
	TagString             = 8
	TagFieldref           = 9
	TagMethodref          = 10
	TagInterfaceMethodref = 11
	TagNameAndType        = 12
	TagMethodHandle       = 15
	TagMethodType         = 16
	TagDynamic            = 17
	TagInvokeDynamic      = 18
	TagModule             = 19
	TagPackage            = 20
)

// Constant is one constant pool entry. Which fields are meaningful depends on Tag:
//
//	Utf8                         Bytes (modified UTF-8, exactly as stored)
//	Integer, Float               Bytes (4 bytes, big-endian)
//	Long, Double                 Bytes (8 bytes, big-endian); the next index is unusable
//	Class, String, MethodType,
//	Module, Package              A = index of a Utf8
//	Fieldref, Methodref,
//	InterfaceMethodref           A = Class index, B = NameAndType index
//	NameAndType                  A = name Utf8, B = descriptor Utf8
//	MethodHandle                 A = reference kind (1..9), B = reference index
//	Dynamic, InvokeDynamic       A = bootstrap method attribute index, B = NameAndType index
//
// The slot after a Long or Double has Tag 0.
type Constant struct {
	Tag   uint8
	A, B  uint16
	Bytes []byte
}

// Code is the parsed form of a Code attribute (JVMS 4.7.3). Its own attributes
// (StackMapTable, LineNumberTable, ...) stay raw here; package code parses the ones that hold
// bytecode offsets when it edits the method.
type Code struct {
	MaxStack   uint16
	MaxLocals  uint16
	Bytecode   []byte
	Exceptions []ExceptionEntry
	Attributes []*Attribute
}

// ExceptionEntry is one row of a Code attribute's exception table. EndPC is exclusive.
// CatchType 0 catches everything (finally blocks).
type ExceptionEntry struct {
	StartPC, EndPC, HandlerPC, CatchType uint16
}
