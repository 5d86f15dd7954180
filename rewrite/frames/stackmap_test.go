package frames

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/classfile"
)

func newPool() *classfile.Pool { return &classfile.Pool{Entries: make([]classfile.Constant, 1)} }

func obj(c string) Type { return ObjectType(c) }

var wide = Limits{CodeLength: 1 << 16, MaxLocals: 1 << 16, MaxStack: 1 << 16}

// TestEncodeChoosesSmallestKind checks each frame kind is chosen where javac would choose it,
// byte for byte, and that decoding gives the frames back.
func TestEncodeChoosesSmallestKind(t *testing.T) {
	pool := newPool()
	str, _ := pool.AddClass("java/lang/String")
	initial, err := Initial("p/C", "m", "(ILjava/lang/String;)V", classfile.AccStatic)
	if err != nil {
		t.Fatal(err)
	}
	base := []Type{IntType, obj("java/lang/String")}
	entries := []Entry{
		{5, Frame{Locals: base}},                                                              // same_frame, delta 5
		{6, Frame{Locals: base, Stack: []Type{IntType}}},                                      // same_locals_1, delta 0
		{200, Frame{Locals: base}},                                                            // same_frame_extended, delta 193
		{201, Frame{Locals: base, Stack: []Type{LongType, TopType}}},                          // same_locals_1 with a long, delta 0
		{300, Frame{Locals: append(append([]Type{}, base...), LongType, TopType, FloatType)}}, // append 2
		{301, Frame{Locals: base[:1]}},                                                        // chop 3: long, float and the string
		{400, Frame{Locals: base[:1], Stack: []Type{NullType}}},                               // same_locals_1_extended, delta 98
		{401, Frame{Locals: []Type{TopType, UninitThis}, Stack: []Type{UninitializedType(7), DoubleType, TopType}}}, // full
	}
	data, err := Encode(entries, initial, pool)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 8,
		5,
		64, byte(Integer),
		251, 0, 193,
		64, byte(Long),
		253, 0, 98, byte(Long), byte(Float),
		248, 0, 0,
		247, 0, 98, byte(Null),
		255, 0, 0, 0, 2, byte(Top), byte(UninitializedThis), 0, 2, byte(Uninitialized), 0, 7, byte(Double),
	}
	if !bytes.Equal(data, want) {
		t.Fatalf("encoded\n got % x\nwant % x", data, want)
	}
	got, err := Decode(data, pool, initial, wide)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(entries) {
		t.Fatalf("decoded %d frames, want %d", len(got), len(entries))
	}
	for i := range got {
		if got[i].Offset != entries[i].Offset || !got[i].Frame.Equal(entries[i].Frame) {
			t.Errorf("frame %d: got %d %v, want %d %v", i, got[i].Offset, got[i].Frame, entries[i].Offset, entries[i].Frame)
		}
	}
	one, err := Decode([]byte{0, 1, 64, byte(Object), byte(str >> 8), byte(str)}, pool, initial, wide)
	if err != nil || one[0].Frame.Stack[0].Index != str || one[0].Frame.Stack[0].Class != "java/lang/String" {
		t.Errorf("decoded object type: %+v, %v", one, err)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	pool := newPool()
	cls, _ := pool.AddClass("A")
	utf := uint16(1) // the Utf8 behind the class: not a class
	initial := Frame{Locals: []Type{IntType}}
	cases := []struct {
		name string
		data []byte
		lim  Limits
		want string
	}{
		{"empty", nil, wide, "truncated"},
		{"count larger than data", []byte{0, 9, 0}, wide, "entries declared"},
		{"reserved type", []byte{0, 1, 128}, wide, "reserved frame type 128"},
		{"truncated append", []byte{0, 1, 252, 0}, wide, "truncated"},
		{"chop too many", []byte{0, 1, 249, 0, 0}, wide, "chops 2 locals from 1"},
		{"bad tag", []byte{0, 1, 64, 9}, wide, "verification type tag 9"},
		{"object names utf8", []byte{0, 1, 64, 7, 0, byte(utf)}, wide, "tag 1 (Utf8)"},
		{"object index out of pool", []byte{0, 1, 64, 7, 0, 99}, wide, "index 99"},
		{"offset past code", []byte{0, 1, 10}, Limits{CodeLength: 10, MaxLocals: 5, MaxStack: 5}, "offset 10: beyond the code"},
		{"uninitialized past code", []byte{0, 1, 64, 8, 0, 50}, Limits{CodeLength: 10, MaxLocals: 5, MaxStack: 5}, "uninitialized(50)"},
		{"too many locals", []byte{0, 1, 252, 0, 0, 4}, Limits{CodeLength: 10, MaxLocals: 2, MaxStack: 5}, "3 local slots, max_locals is 2"},
		{"too deep stack", []byte{0, 1, 64, 7, 0, byte(cls)}, Limits{CodeLength: 10, MaxLocals: 2, MaxStack: 0}, "max_stack is 0"},
		{"trailing bytes", []byte{0, 1, 0, 0}, wide, "1 bytes after"},
	}
	for _, c := range cases {
		_, err := Decode(c.data, pool, initial, c.lim)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	pool := newPool()
	_, err := Encode([]Entry{{3, Frame{}}, {3, Frame{}}}, Frame{}, pool)
	if err == nil || !strings.Contains(err.Error(), "offset 3: out of order") {
		t.Errorf("duplicate offset: %v", err)
	}
	_, err = Encode([]Entry{{3, Frame{Locals: []Type{LongType, IntType}}}}, Frame{}, pool)
	if err == nil || !strings.Contains(err.Error(), "second half") {
		t.Errorf("broken long: %v", err)
	}
	full := &classfile.Pool{Entries: make([]classfile.Constant, 65534)}
	_, err = Encode([]Entry{{0, Frame{Locals: []Type{obj("New")}}}}, Frame{}, full)
	if !errors.Is(err, classfile.ErrPoolOverflow) {
		t.Errorf("pool overflow not reported as such: %v", err)
	}
}

func TestInitial(t *testing.T) {
	cases := []struct {
		class, name, desc string
		access            uint16
		want              string
	}{
		{"p/C", "<init>", "(JZ[I)V", 0, "locals=[uninitializedThis, long, int, [I] stack=[]"},
		{"java/lang/Object", "<init>", "()V", 0, "locals=[java/lang/Object] stack=[]"},
		{"p/C", "run", "(DLjava/util/List;)I", 0, "locals=[p/C, double, java/util/List] stack=[]"},
		{"p/C", "main", "([Ljava/lang/String;)V", classfile.AccStatic, "locals=[[Ljava/lang/String;] stack=[]"},
	}
	for _, c := range cases {
		f, err := Initial(c.class, c.name, c.desc, c.access)
		if err != nil {
			t.Fatal(err)
		}
		if f.String() != c.want {
			t.Errorf("%s.%s%s: %s, want %s", c.class, c.name, c.desc, f, c.want)
		}
	}
	f, _ := Initial("p/C", "<init>", "(JZ)V", 0)
	if len(f.Locals) != 4 {
		t.Errorf("long must take two slots: %d locals", len(f.Locals))
	}
	if _, err := Initial("p/C", "m", "(Q)V", 0); err == nil {
		t.Error("bad descriptor accepted")
	}
}

// TestErrorsKeepTheirCause: a frame error wraps what went wrong under it, so errors.Is and
// errors.As reach the cause through the *Error of the offset (issue 28 item 3).
func TestErrorsKeepTheirCause(t *testing.T) {
	pool := newPool()
	// An append frame cut short inside its entry: the reader's cause is errTruncated.
	_, err := Decode([]byte{0, 1, 252, 0}, pool, Frame{Locals: []Type{IntType}}, wide)
	var fe *Error
	if !errors.As(err, &fe) || !errors.Is(err, errTruncated) {
		t.Errorf("truncated entry: %v does not wrap errTruncated in a *frames.Error", err)
	}
	// A long without its second half, in the initial frame and in an entry's locals and
	// stack: the cause is the check of the slots, under the frame's offset.
	broken := []Type{LongType, IntType}
	for _, c := range []struct {
		name    string
		initial Frame
		entries []Entry
	}{
		{"initial frame", Frame{Locals: broken}, nil},
		{"locals", Frame{}, []Entry{{3, Frame{Locals: broken}}}},
		{"stack", Frame{}, []Entry{{3, Frame{Stack: broken}}}},
	} {
		_, err := Encode(c.entries, c.initial, pool)
		var fe *Error
		if !errors.As(err, &fe) || errors.Unwrap(fe.Err) == nil || !strings.Contains(errors.Unwrap(fe.Err).Error(), "second half") {
			t.Errorf("%s: %v does not wrap the slot check's error", c.name, err)
		}
	}
	_, err = Decode([]byte{0, 1, 252, 0}, pool, Frame{Locals: broken}, wide)
	if !errors.As(err, &fe) || errors.Unwrap(fe.Err) == nil {
		t.Errorf("decode, initial frame: %v does not wrap the slot check's error", err)
	}
}

// TestCoderReusesMemory checks that a Coder used for method after method (Reset between them)
// decodes and encodes as the package functions do, and that two tables decoded before a Reset
// keep their own frames.
func TestCoderReusesMemory(t *testing.T) {
	pool := newPool()
	pool.AddClass("java/lang/String")
	initial, err := Initial("p/C", "m", "(ILjava/lang/String;)V", classfile.AccStatic)
	if err != nil {
		t.Fatal(err)
	}
	base := []Type{IntType, obj("java/lang/String")}
	tables := [][]Entry{
		{{5, Frame{Locals: base}}, {9, Frame{Locals: append(append([]Type{}, base...), LongType, TopType)}}},
		{{3, Frame{Locals: base[:1], Stack: []Type{obj("java/lang/String")}}}, {40, Frame{Locals: []Type{TopType, UninitThis}}}},
	}
	var raw [][]byte
	for _, entries := range tables {
		data, err := Encode(entries, initial, pool)
		if err != nil {
			t.Fatal(err)
		}
		raw = append(raw, data)
	}
	var c Coder
	for round := 0; round < 3; round++ {
		var got [][]Entry
		for i, data := range raw {
			entries, err := c.Decode(data, pool, initial, wide)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, entries)
			want, _ := Decode(data, pool, initial, wide)
			again, err := c.AppendEncode([]byte{0xAB}, entries, initial, pool)
			if err != nil || !bytes.Equal(again, append([]byte{0xAB}, data...)) {
				t.Fatalf("round %d table %d: encoded again % x (%v), want ab % x", round, i, again, err, data)
			}
			if len(entries) != len(want) {
				t.Fatalf("round %d table %d: %d entries, want %d", round, i, len(entries), len(want))
			}
		}
		for i, entries := range got { // the first table is intact after the second was decoded
			for j, e := range entries {
				if e.Offset != tables[i][j].Offset || !e.Frame.Equal(tables[i][j].Frame) {
					t.Errorf("round %d table %d entry %d: %d %v, want %d %v", round, i, j, e.Offset, e.Frame, tables[i][j].Offset, tables[i][j].Frame)
				}
			}
		}
		c.Reset()
	}
}
