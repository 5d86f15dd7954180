package hprof

import "encoding/binary"

// The layout of every HPROF record, defined once. Every decoder of this package (Reader.Next's
// general path and its fast path, Reader.Headers, the index walk, Schema.TakeNames,
// DecodeClassDump) and the loops of other packages that decode records straight from a buffer
// (a histogram's) take their offsets from here, as archive/zip names the fields of its headers.
//
// A record's fields lie in a fixed order, some of them identifiers, whose size (4 or 8 bytes)
// the file header gives. So a field's place is a number of identifiers plus a number of other
// bytes, a Place, which becomes an offset once the identifier size is known (Place.At). A fast
// path that knows its identifiers are 8 bytes calls At with the constant 8, which the compiler
// folds to the constant offset: naming the field costs nothing at run time.
//
// Places count from the record's first byte: the tag byte of a heap-dump sub-record, the tag
// byte of a top-level record's 9-byte header.

// Place is where a field starts, counted from its record's first byte: a number of identifiers
// (ID each) plus a number of other bytes.
type Place uint16

// ID is the place one identifier takes.
const ID Place = 1 << 8

// At returns the offset of p in a file whose identifiers are idSize bytes.
func (p Place) At(idSize int) int { return int(p>>8)*idSize + int(p&0xff) }

// Every top-level record starts with a header: tag u1, time u4 (microseconds after the file
// header's time stamp, unused here), body length u4.
const (
	recordTime   Place = 1
	recordLength Place = recordTime + 4
	recordBody   Place = recordLength + 4 // also the header's length
)

// headerLen is the length of a top-level record's header, which holds no identifier.
const headerLen = int(recordBody)

// recordLen returns the length, header included, of the top-level record whose header b starts
// with.
func recordLen(b []byte) int64 {
	return int64(headerLen) + int64(binary.BigEndian.Uint32(b[recordLength.At(0):]))
}

// UTF8: header, string id, the string's bytes (modified UTF-8, no terminator) to the body's end.
const (
	utf8ID    = recordBody
	utf8Chars = utf8ID + ID
)

// LOAD CLASS: header, class serial u4, class object id, stack trace serial u4, name string id.
const (
	loadClassSerial = recordBody
	loadClassID     = loadClassSerial + 4
	loadClassStack  = loadClassID + ID
	loadClassName   = loadClassStack + 4
	loadClassEnd    = loadClassName + ID
)

// The tag bytes of the sub-records that describe objects, as the file holds them (the Tag
// constants add SubTag to them), for loops that switch on a buffer's bytes.
const (
	ClassDumpByte     = 0x20
	InstanceDumpByte  = 0x21
	ObjArrayDumpByte  = 0x22
	PrimArrayDumpByte = 0x23
)

// Every GC-root sub-record is its tag and the object's id, then, for some kinds, a thread
// serial u4 and a frame number or stack trace serial u4, or a JNI global reference's id.
const (
	rootID           Place = 1
	rootThread             = rootID + ID    // JNI LOCAL, JAVA FRAME, NATIVE STACK, THREAD BLOCK, THREAD OBJ
	rootFrame              = rootThread + 4 // JNI LOCAL, JAVA FRAME: frame number; THREAD OBJ: stack serial
	rootJNIGlobalRef       = rootID + ID    // JNI GLOBAL: the global reference's id
)

// CLASS DUMP: tag, class object id, stack trace serial u4, then the ids of the superclass, the
// class loader, the signers, the protection domain and two reserved ones, the instance size u4
// and three counted lists: constants (count u2; index u2, type u1, value each), static fields
// (count u2; name id, type u1, value each) and instance fields (count u2; name id, type u1
// each). A value is as long as its type (Type.Size).
const (
	classID           Place = 1
	classStack              = classID + ID
	classSuper              = classStack + 4
	classLoader             = classSuper + ID
	classSigners            = classLoader + ID
	classProtection         = classSigners + ID
	classInstanceSize       = classProtection + 3*ID // after two reserved ids
	classConstants          = classInstanceSize + 4  // the constants' count
	classHead               = classConstants + 2     // the first constant

	constantHead Place = 2 + 1  // index, type: then the value
	staticHead         = ID + 1 // name id, type: then the value
	fieldDecl          = ID + 1 // name id, type
)

// INSTANCE DUMP: tag, object id, stack trace serial u4, class object id, field bytes u4 (n),
// then n bytes of field values: the class's own fields first, then each superclass's.
const (
	InstanceID         Place = 1
	InstanceStack            = InstanceID + ID
	InstanceClass            = InstanceStack + 4
	InstanceFieldBytes       = InstanceClass + ID
	InstanceFields           = InstanceFieldBytes + 4
)

// OBJECT ARRAY DUMP: tag, array id, stack trace serial u4, length u4 (n), array class object
// id, then n element ids.
const (
	ObjArrayID     Place = 1
	ObjArrayStack        = ObjArrayID + ID
	ObjArrayLength       = ObjArrayStack + 4
	ObjArrayClass        = ObjArrayLength + 4
	ObjArrayElems        = ObjArrayClass + ID
)

// PRIMITIVE ARRAY DUMP: tag, array id, stack trace serial u4, length u4 (n), element type u1,
// then n elements of the type's size.
const (
	PrimArrayID     Place = 1
	PrimArrayStack        = PrimArrayID + ID
	PrimArrayLength       = PrimArrayStack + 4
	PrimArrayType         = PrimArrayLength + 4
	PrimArrayElems        = PrimArrayType + 1
)

// FastHead is the fixed part of an INSTANCE DUMP with 8-byte ids (InstanceFields.At(8)), the
// longer of the two records that loops over a buffer decode themselves (a primitive array's is
// PrimArrayElems.At(8)): a constant, so that they can take it as an array and have its fields'
// bounds checked once. TestFastHead checks it against the layout.
const FastHead = 25

// subHeads is the fixed part of each heap-dump sub-record, its tag included, by tag byte: what
// follows it is counted by a field inside it (CLASS DUMP, whose head is only the start, is
// measured apart). 0: not a sub-record tag.
var subHeads = [256]Place{
	byte(TagRootUnknown & 0xff):     rootID + ID,
	byte(TagRootStickyClass & 0xff): rootID + ID,
	byte(TagRootMonitorUsed & 0xff): rootID + ID,
	byte(TagRootJNIGlobal & 0xff):   rootJNIGlobalRef + ID,
	byte(TagRootJNILocal & 0xff):    rootFrame + 4,
	byte(TagRootJavaFrame & 0xff):   rootFrame + 4,
	byte(TagRootThreadObj & 0xff):   rootFrame + 4,
	byte(TagRootNativeStack & 0xff): rootThread + 4,
	byte(TagRootThreadBlock & 0xff): rootThread + 4,
	ClassDumpByte:                   classHead,
	InstanceDumpByte:                InstanceFields,
	ObjArrayDumpByte:                ObjArrayElems,
	PrimArrayDumpByte:               PrimArrayElems,
}
