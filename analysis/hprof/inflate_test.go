package hprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Read through the inflater, a gzip stream gives the bytes read straight from it, in reads of any
// size, and its errors: a stream cut short must not read as one that ended.
func TestInflateAhead(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the inflater runs only with two cores")
	}
	rnd := rand.New(rand.NewSource(1))
	plain := make([]byte, 3*inflateBlock+12345)
	for i := range plain {
		plain[i] = byte(rnd.Intn(16)) // compressible, as a dump is
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()

	zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r := newInflateAhead(zr)
	if _, ok := r.(*inflateAhead); !ok {
		t.Fatalf("got %T, not the inflater", r)
	}
	var got []byte
	buf := make([]byte, 70000)
	for {
		n, err := r.Read(buf[:1+rnd.Intn(len(buf)-1)])
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, plain) {
		t.Fatalf("inflated %d bytes, not the %d written", len(got), len(plain))
	}

	cut := z.Bytes()[:z.Len()/2]
	zr, err = gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(io.Discard, newInflateAhead(zr))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a stream cut in half read with error %v, want %v", err, io.ErrUnexpectedEOF)
	}
}

// hotspotGzip compresses data as HotSpot does with jcmd GC.heap_dump -gz: a gzip member per block,
// the first with the block size in its comment. Members listed in stored are written without
// compression, so that bytes of their data appear in the file as they are.
func hotspotGzip(t *testing.T, data []byte, block int, stored map[int]bool) []byte {
	var out bytes.Buffer
	for i := 0; i*block < len(data); i++ {
		level := gzip.BestSpeed
		if stored[i] {
			level = gzip.NoCompression
		}
		zw, err := gzip.NewWriterLevel(&out, level)
		if err != nil {
			t.Fatal(err)
		}
		zw.Comment = hotspotBlockComment + strconv.Itoa(block)
		zw.Write(data[i*block : min(len(data), (i+1)*block)])
		zw.Close()
	}
	return out.Bytes()
}

// readAllFrom reads r to its end, in reads of odd sizes.
func readAllFrom(r io.Reader) ([]byte, error) {
	var got []byte
	buf := make([]byte, 7777)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

// Inflated by members side by side, a file HotSpot compressed in blocks gives the plain bytes,
// also when a block's data holds what looks like a gzip member, and even a whole valid one: a
// guess that starts there must be dropped.
func TestMemberInflater(t *testing.T) {
	const block = 4096
	rnd := rand.New(rand.NewSource(2))
	plain := make([]byte, 40*block+100)
	for i := range plain {
		plain[i] = byte(rnd.Intn(8))
	}
	var fake bytes.Buffer
	zw := gzip.NewWriter(&fake)
	zw.Write([]byte("not part of the dump"))
	zw.Close()
	copy(plain[3*block+100:], fake.Bytes())           // a whole member inside block 3
	copy(plain[7*block+5:], []byte{0x1f, 0x8b, 8, 0}) // a header alone inside block 7
	copy(plain[8*block-2:], []byte{0x1f, 0x8b, 8, 0}) // one across blocks 7 and 8
	z := hotspotGzip(t, plain, block, map[int]bool{3: true, 7: true, 8: true})
	if bytes.Count(z, []byte{0x1f, 0x8b, 8}) <= 41 {
		t.Fatal("the planted headers are not in the file")
	}
	got, err := readAllFrom(newMemberInflater(bytes.NewReader(z), int64(len(z)), block))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, plain) {
		t.Fatalf("inflated %d bytes, not the %d compressed", len(got), len(plain))
	}
}

// A cut file gives what a plain gzip reader gives: the bytes up to the cut, and an error. A
// damaged one gives the bytes of the members before the damaged one, and an error that says
// where it is, where a plain reader hands on the damaged member's bytes before its checksum
// fails. Never a clean end: the members after a bad one are not taken as the rest.
func TestMemberInflaterDamage(t *testing.T) {
	const block = 4096
	rnd := rand.New(rand.NewSource(3))
	plain := make([]byte, 20*block)
	for i := range plain {
		plain[i] = byte(rnd.Intn(8))
	}
	z := hotspotGzip(t, plain, block, nil)
	flipped := bytes.Clone(z)
	flipped[len(z)/2] ^= 0x55
	for name, data := range map[string][]byte{"cut": z[:len(z)/2], "flipped": flipped, "cut in a trailer": z[:len(z)-3]} {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		wantBytes, want := readAllFrom(zr)
		got, err := readAllFrom(newMemberInflater(bytes.NewReader(data), int64(len(data)), block))
		if err == nil || want == nil {
			t.Errorf("%s: error %v, a plain reader's %v; want both to fail", name, err, want)
		}
		if name == "flipped" {
			if len(got)%block != 0 || !bytes.Equal(got, plain[:len(got)]) || !strings.Contains(err.Error(), "is damaged") {
				t.Errorf("%s: %d bytes before the error %q, want whole blocks of the dump and where the damage is", name, len(got), err)
			}
		} else if !bytes.Equal(got, wantBytes) {
			t.Errorf("%s: %d bytes before the error, a plain reader's %d", name, len(got), len(wantBytes))
		}
	}
	// A member that inflates past the block size is read as a stream too, whole.
	big := hotspotGzip(t, plain, 2*block, nil)
	got, err := readAllFrom(newMemberInflater(bytes.NewReader(big), int64(len(big)), block))
	if err != nil || !bytes.Equal(got, plain) {
		t.Errorf("members larger than the block: %d bytes, %v", len(got), err)
	}
}

// A reader dropped half-way lets its inflater go: a pass that stops early must not leave a
// goroutine waiting for a free block for the rest of the process.
func TestInflateAheadDroppedReaderFreesInflater(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the inflater runs only with two cores")
	}
	plain := bytes.Repeat([]byte("heap dump "), (inflateBlocks+4)*inflateBlock/10)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(plain)
	zw.Close()
	before := runtime.NumGoroutine()
	func() {
		zr, err := gzip.NewReader(bytes.NewReader(z.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		r := newInflateAhead(zr)
		if _, err := r.Read(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}()
	for try := 0; try < 100 && runtime.NumGoroutine() > before; try++ {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after the reader was dropped, %d before", n, before)
	}
}

// Whatever the data, its block size and a byte changed or the file cut anywhere, inflating by
// members gives what one gzip stream read from the start gives, an error exactly when it gives
// one, and the same bytes, but for a damaged member's, which it leaves out.
func FuzzMemberInflater(f *testing.F) {
	f.Add([]byte("HPROF heap dump, heap dump, heap dump"), uint16(7), uint32(0), byte(0), uint32(0))
	f.Add(bytes.Repeat([]byte{0x1f, 0x8b, 8, 0, 1, 2, 3}, 100), uint16(64), uint32(300), byte(0x40), uint32(0))
	f.Fuzz(func(t *testing.T, data []byte, block uint16, at uint32, flip byte, cut uint32) {
		if block == 0 || len(data) == 0 {
			return
		}
		stored := map[int]bool{}
		for i := 0; i*int(block) < len(data); i += 2 {
			stored[i] = true // bytes of the data appear in the file, false headers among them
		}
		z := hotspotGzip(t, data, int(block), stored)
		if n := len(z); n > 0 {
			z[int(at)%n] ^= flip
			z = z[:n-int(cut)%n]
		}
		var want []byte
		var wantErr error
		if zr, err := gzip.NewReader(bytes.NewReader(z)); err != nil {
			return // no first header: NewReader would have refused the file
		} else {
			want, wantErr = readAllFrom(zr)
		}
		got, err := readAllFrom(newMemberInflater(bytes.NewReader(z), int64(len(z)), int(block)))
		if err != nil && strings.Contains(err.Error(), "is damaged") && len(got) <= len(want) {
			want = want[:len(got)]
		}
		if (err == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("by members: %d bytes, error %v; one stream: %d bytes, error %v", len(got), err, len(want), wantErr)
		}
	})
}
