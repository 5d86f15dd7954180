package hprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand"
	"runtime"
	"testing"
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
