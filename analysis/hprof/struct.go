// Package hprof reads Java heap dumps in the HPROF binary format written by HotSpot
// (jcmd GC.heap_dump, jmap -dump, HotSpotDiagnosticMXBean.dumpHeap) and by the old hprof agent.
//
// The Reader is a streaming iterator in the manner of archive/zip and debug/elf: Next returns one
// record or heap-dump sub-record at a time, as a Record whose byte slices alias the reader's buffer
// and stay valid only until the following call. Nothing is allocated per record, so a pass over a
// multi-gigabyte dump costs little more than reading it. Gzip-compressed dumps (jcmd
// GC.heap_dump -gz=N) are recognised by their magic number and decompressed on the fly.
//
// Errors carry the byte offset (in the uncompressed stream) and the record they concern, as a
// *FormatError.
package hprof

import "fmt"

// Tag identifies a top-level record or, with SubTag set, a heap-dump sub-record.
type Tag uint16

// Top-level record tags (u1 in the file).
const (
	TagUTF8            Tag = 0x01
	TagLoadClass       Tag = 0x02
	TagUnloadClass     Tag = 0x03
	TagStackFrame      Tag = 0x04
	TagStackTrace      Tag = 0x05
	TagAllocSites      Tag = 0x06
	TagHeapSummary     Tag = 0x07
	TagStartThread     Tag = 0x0A
	TagEndThread       Tag = 0x0B
	TagHeapDump        Tag = 0x0C
	TagCPUSamples      Tag = 0x0D
	TagControlSettings Tag = 0x0E
	TagHeapDumpSegment Tag = 0x1C
	TagHeapDumpEnd     Tag = 0x2C
)

// SubTag marks heap-dump sub-record tags so that they never collide with top-level tags.
const SubTag Tag = 0x100

// Heap-dump sub-record tags.
const (
	TagRootUnknown     Tag = SubTag | 0xFF
	TagRootJNIGlobal   Tag = SubTag | 0x01
	TagRootJNILocal    Tag = SubTag | 0x02
	TagRootJavaFrame   Tag = SubTag | 0x03
	TagRootNativeStack Tag = SubTag | 0x04
	TagRootStickyClass Tag = SubTag | 0x05
	TagRootThreadBlock Tag = SubTag | 0x06
	TagRootMonitorUsed Tag = SubTag | 0x07
	TagRootThreadObj   Tag = SubTag | 0x08
	TagClassDump       Tag = SubTag | ClassDumpByte
	TagInstanceDump    Tag = SubTag | InstanceDumpByte
	TagObjArrayDump    Tag = SubTag | ObjArrayDumpByte
	TagPrimArrayDump   Tag = SubTag | PrimArrayDumpByte
)

// IsRoot reports whether t is one of the GC-root sub-records.
func (t Tag) IsRoot() bool {
	return t == TagRootUnknown || (t >= TagRootJNIGlobal && t <= TagRootThreadObj)
}

var tagNames = map[Tag]string{
	TagUTF8: "UTF8", TagLoadClass: "LOAD CLASS", TagUnloadClass: "UNLOAD CLASS",
	TagStackFrame: "STACK FRAME", TagStackTrace: "STACK TRACE", TagAllocSites: "ALLOC SITES",
	TagHeapSummary: "HEAP SUMMARY", TagStartThread: "START THREAD", TagEndThread: "END THREAD",
	TagHeapDump: "HEAP DUMP", TagCPUSamples: "CPU SAMPLES", TagControlSettings: "CONTROL SETTINGS",
	TagHeapDumpSegment: "HEAP DUMP SEGMENT", TagHeapDumpEnd: "HEAP DUMP END",
	TagRootUnknown: "ROOT UNKNOWN", TagRootJNIGlobal: "ROOT JNI GLOBAL", TagRootJNILocal: "ROOT JNI LOCAL",
	TagRootJavaFrame: "ROOT JAVA FRAME", TagRootNativeStack: "ROOT NATIVE STACK",
	TagRootStickyClass: "ROOT STICKY CLASS", TagRootThreadBlock: "ROOT THREAD BLOCK",
	TagRootMonitorUsed: "ROOT MONITOR USED", TagRootThreadObj: "ROOT THREAD OBJECT",
	TagClassDump: "CLASS DUMP", TagInstanceDump: "INSTANCE DUMP", TagObjArrayDump: "OBJECT ARRAY DUMP",
	TagPrimArrayDump: "PRIMITIVE ARRAY DUMP",
}

func (t Tag) String() string {
	if s, ok := tagNames[t]; ok {
		return s
	}
	if t&SubTag != 0 {
		return fmt.Sprintf("heap sub-record 0x%02x", uint8(t))
	}
	return fmt.Sprintf("record 0x%02x", uint8(t))
}

// Type is an HPROF basic type code, used for fields and primitive arrays.
type Type uint8

const (
	TypeObject  Type = 2
	TypeBoolean Type = 4
	TypeChar    Type = 5
	TypeFloat   Type = 6
	TypeDouble  Type = 7
	TypeByte    Type = 8
	TypeShort   Type = 9
	TypeInt     Type = 10
	TypeLong    Type = 11
)

// Size returns the number of bytes a value of type t occupies in the dump (idSize for
// references), or 0 if t is not a valid type code.
func (t Type) Size(idSize int) int {
	if t == TypeObject {
		return idSize
	}
	if t < 16 {
		return int(primSize[t])
	}
	return 0
}

// ArrayName returns the Java name of a primitive array of element type t, as jcmd and MAT print it.
func (t Type) ArrayName() string {
	switch t {
	case TypeBoolean:
		return "boolean[]"
	case TypeChar:
		return "char[]"
	case TypeFloat:
		return "float[]"
	case TypeDouble:
		return "double[]"
	case TypeByte:
		return "byte[]"
	case TypeShort:
		return "short[]"
	case TypeInt:
		return "int[]"
	case TypeLong:
		return "long[]"
	}
	return fmt.Sprintf("type%d[]", t)
}

// Record is one top-level record or heap-dump sub-record. Which fields are set depends on Tag;
// byte slices alias the Reader's buffer and are valid only until the next call to Next.
type Record struct {
	Tag    Tag
	Offset int64 // offset of the record's tag byte in the (uncompressed) stream
	Dump   int   // 1-based number of the heap dump a sub-record belongs to; 0 for top-level records

	// ID is the string id (UTF8), class object id (LOAD CLASS, CLASS DUMP), object id (roots,
	// instance and array dumps).
	ID uint64
	// Class is the class object id of an instance or object array, the super class of a CLASS DUMP.
	Class uint64
	// NameID is the name string id of a LOAD CLASS, or the JNI global ref id of a ROOT JNI GLOBAL.
	NameID uint64
	// Serial is the class serial (LOAD CLASS), thread serial (thread-related roots) or stack
	// trace serial (instance and array dumps).
	Serial uint32
	// Frame is the frame number of JNI-local and Java-frame roots, the stack trace serial of a
	// thread object root.
	Frame uint32
	// Length is the element count of an array dump.
	Length uint32
	// Elem is the element type of a primitive array dump.
	Elem Type
	// Data is the body: UTF8 bytes, an instance's field values, an object array's elements, a
	// primitive array's values (nil when the Reader skips them), a CLASS DUMP body after the
	// class id (decode it with Reader.ClassDump), or the raw body of any other top-level record.
	Data []byte
}

// ClassDump is a decoded CLASS DUMP sub-record.
type ClassDump struct {
	ID, Super, Loader, Signers, ProtectionDomain uint64
	Stack                                        uint32
	InstanceSize                                 uint32 // as written by the dumper: field bytes with idSize references
	Constants                                    []Value
	Statics                                      []Static
	Fields                                       []Field // instance fields declared by this class, in dump order
}

// Field is an instance field declaration.
type Field struct {
	NameID uint64
	Type   Type
}

// Static is a static field with its value.
type Static struct {
	NameID uint64
	Value  Value
}

// Value is a constant-pool entry or static value; Bits holds the raw value (the object id for
// references). Index is the constant-pool index (unused for statics).
type Value struct {
	Index uint16
	Type  Type
	Bits  uint64
}

// FormatError reports malformed or truncated input.
type FormatError struct {
	// Offset counts, as every offset of this package, from the start of the (uncompressed)
	// stream, never from a record or a body: it is the start of the record at fault, or of the
	// field or list entry at fault inside it, or where the input or its segment ran out.
	Offset int64
	Record string // the record being read, with its own offset
	Msg    string
	// Inflated says that the offsets (Offset, and those in Record and Msg) count the bytes of
	// a gzip-compressed file's inflated data, not of the file.
	Inflated bool

	truncated bool
}

func (e *FormatError) Error() string {
	at := fmt.Sprintf("offset %d", e.Offset)
	if e.Inflated {
		at += " of the inflated data"
	}
	if e.Record != "" {
		return fmt.Sprintf("hprof: %s: %s: %s", at, e.Record, e.Msg)
	}
	return fmt.Sprintf("hprof: %s: %s", at, e.Msg)
}

// Truncated reports whether err says the input ended before a record was complete — the case
// where a partial analysis of what came before may still be useful.
func Truncated(err error) bool {
	fe, ok := err.(*FormatError)
	return ok && fe.truncated
}
