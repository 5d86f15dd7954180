package hprof

import "testing"

// The places, turned into offsets, are the HPROF format's: checked here against the byte counts
// of the format's description (the JDK's heapDumper.cpp), for both identifier sizes.
func TestPlaces(t *testing.T) {
	for _, c := range []struct {
		name string
		p    Place
		id4  int
		id8  int
	}{
		{"record body", recordBody, 9, 9},
		{"UTF8 chars", utf8Chars, 13, 17},
		{"LOAD CLASS name", loadClassName, 21, 25},
		{"LOAD CLASS end", loadClassEnd, 25, 33},
		{"ROOT JNI LOCAL frame", rootFrame, 9, 13},
		{"CLASS DUMP instance size", classInstanceSize, 33, 61},
		{"CLASS DUMP first constant", classHead, 39, 67},
		{"INSTANCE DUMP class", InstanceClass, 9, 13},
		{"INSTANCE DUMP fields", InstanceFields, 17, 25},
		{"OBJECT ARRAY DUMP class", ObjArrayClass, 13, 17},
		{"OBJECT ARRAY DUMP elements", ObjArrayElems, 17, 25},
		{"PRIMITIVE ARRAY DUMP type", PrimArrayType, 13, 17},
		{"PRIMITIVE ARRAY DUMP elements", PrimArrayElems, 14, 18},
	} {
		if got4, got8 := c.p.At(4), c.p.At(8); got4 != c.id4 || got8 != c.id8 {
			t.Errorf("%s: at %d with 4-byte ids, %d with 8-byte ones; want %d, %d", c.name, got4, got8, c.id4, c.id8)
		}
	}
}

// FastHead is a constant for the loops that take it as an array; it must be the instance's head,
// and no shorter than the primitive array's.
func TestFastHead(t *testing.T) {
	if FastHead != InstanceFields.At(8) || PrimArrayElems.At(8) > FastHead {
		t.Fatalf("FastHead %d: an instance's head is %d bytes, a primitive array's %d", FastHead, InstanceFields.At(8), PrimArrayElems.At(8))
	}
}
