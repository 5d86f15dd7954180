package histogram

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/fixtures"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
	"github.com/heapledger/heapledger/internal/testenv"
)

func byClass(h *Histogram) map[string]Entry {
	m := map[string]Entry{}
	for _, e := range h.Entries {
		m[e.Class] = e
	}
	return m
}

// The fixture's own classes must show exactly the instances the program built, and exactly the
// bytes HotSpot's own class histogram reports for them.
func TestFixtureDumpMatchesProgramAndJcmd(t *testing.T) {
	h := matchesJcmd(t, heapdumps.Dump(t), nil)
	if !strings.Contains(h.Model, "compressed references") || strings.Contains(h.Model, "uncompressed") || !strings.Contains(h.Model, "12-byte object header") {
		t.Errorf("size model %q: a 256 MB heap uses compressed references and class pointers", h.Model)
	}
}

// Other layouts than the default, which the dump does not name either: each must be found from
// the address gaps, and the sizes must again be HotSpot's.
func TestFixtureDumpLayoutsMatchJcmd(t *testing.T) {
	jdk17 := ""
	if javac, err := exec.LookPath("javac"); err == nil {
		if p, err := filepath.EvalSymlinks(javac); err == nil {
			jdk17 = filepath.Dir(filepath.Dir(p))
		}
	}
	jdk25 := fixtures.JDK25Home()
	// Classes with fields the VM injects (a Module's entry, a MemberName's target, a Throwable's
	// depth) take more bytes than their declared fields where no padding hides them.
	injected := []string{"java.lang.Module", "java.lang.invoke.MemberName", "java.lang.invoke.ResolvedMethodName", "java.lang.InternalError"}
	for _, c := range []struct {
		jdk, flag, model string
	}{
		{jdk25, "-XX:+UseCompactObjectHeaders", "compressed references (4 bytes), 8-byte object header, 12-byte array header, 8-byte alignment"},
		{jdk17, "-XX:-UseCompressedOops", "uncompressed references (8 bytes), 12-byte object header, 16-byte array header, 8-byte alignment"},
		{jdk25, "-XX:-UseCompressedOops", "uncompressed references (8 bytes), 12-byte object header, 16-byte array header, 8-byte alignment"},
		{jdk17, "-XX:-UseCompressedClassPointers", "compressed references (4 bytes), 16-byte object header, 24-byte array header, 8-byte alignment"},
		{jdk25, "-XX:-UseCompressedClassPointers", "compressed references (4 bytes), 16-byte object header, 20-byte array header, 8-byte alignment"},
		{jdk25, "-XX:ObjectAlignmentInBytes=16", "compressed references (4 bytes), 12-byte object header, 16-byte array header, 16-byte alignment"},
	} {
		t.Run(filepath.Base(c.jdk)+c.flag, func(t *testing.T) {
			testenv.Check(t, c.jdk != "", "a JDK home")
			testenv.File(t, filepath.Join(c.jdk, "bin", "java"))
			h := matchesJcmd(t, heapdumps.DumpWith(t, c.jdk, c.flag), injected)
			if !strings.Contains(h.Model, c.model) || !strings.Contains(h.Model, "address gaps") {
				t.Errorf("size model %q, want %q from the address gaps", h.Model, c.model)
			}
		})
	}
}

// matchesJcmd compares the histogram of dump with what the fixture built and what HotSpot's class
// histogram says, and returns it. Classes in more (and the usual ones: see below) may differ.
func matchesJcmd(t *testing.T, dump string, more []string) *Histogram {
	t.Helper()
	want, err := heapdumps.Expected(dump)
	if err != nil {
		t.Fatal(err)
	}
	h, err := Read(dump, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if h.Format != "hprof" || h.Dumps != 1 || h.DumpIndex != 1 || h.Partial {
		t.Errorf("format %q, dump %d of %d, partial %v", h.Format, h.DumpIndex, h.Dumps, h.Partial)
	}
	jc, err := Read(dump+".histo", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if jc.Format != "jcmd" {
		t.Fatalf("%s.histo read as %q", dump, jc.Format)
	}
	got, vm := byClass(h), byClass(jc)
	for class, n := range want {
		if got[class].Instances != n {
			t.Errorf("%s: %d instances in the dump, the program built %d", class, got[class].Instances, n)
		}
		if vm[class].Instances != n {
			t.Errorf("%s: jcmd counted %d instances, the program built %d", class, vm[class].Instances, n)
		}
		if got[class].Bytes != vm[class].Bytes {
			t.Errorf("%s: %d bytes by our size model, %d by HotSpot", class, got[class].Bytes, vm[class].Bytes)
		}
	}
	// Beyond the fixture: every class whose count agrees with the VM's histogram should agree in
	// bytes too. Two known exceptions are invisible in a dump: fields HotSpot injects
	// (ClassLoader's loader_data) and @Contended padding (Thread's threadLocalRandom fields).
	same, differ := 0, 0
	for class, e := range vm {
		g, ok := got[class]
		if !ok || g.Instances != e.Instances || e.Instances == 0 {
			continue
		}
		if g.Bytes == e.Bytes {
			same++
			continue
		}
		differ++
		t.Logf("size differs: %s: %d instances, %d bytes here, %d by HotSpot", class, e.Instances, g.Bytes, e.Bytes)
		if !strings.Contains(class, "Thread") && !strings.Contains(class, "ClassLoader") && !strings.HasSuffix(class, "ReferenceHandler") && !slices.Contains(more, class) {
			t.Errorf("size model disagrees with HotSpot on %s: %d bytes here, %d by HotSpot", class, g.Bytes, e.Bytes)
		}
	}
	t.Logf("classes with equal counts: %d agree in bytes, %d differ", same, differ)
	if same < 200 {
		t.Errorf("only %d classes could be compared with HotSpot's histogram", same)
	}
	t.Logf("java.lang.Class: %+v here, %+v by HotSpot; totals %d/%d here, %d/%d by HotSpot",
		got["java.lang.Class"], vm["java.lang.Class"], h.Instances, h.Bytes, jc.Instances, jc.Bytes)
	return h
}

func TestGzipDumpReadsTheSame(t *testing.T) {
	dump := heapdumps.Dump(t)
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	// Two gzip members, as jcmd -gz writes several: the reader must not stop after the first.
	zw := gzip.NewWriter(&buf)
	zw.Write(raw[:len(raw)/2])
	zw.Close()
	zw = gzip.NewWriter(&buf)
	zw.Write(raw[len(raw)/2:])
	zw.Close()
	gz := filepath.Join(t.TempDir(), "dump.hprof.gz")
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Read(dump, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(gz, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Entries) != len(b.Entries) || a.Bytes != b.Bytes || a.Instances != b.Instances {
		t.Fatalf("plain: %d classes %d instances %d bytes; gzip: %d classes %d instances %d bytes",
			len(a.Entries), a.Instances, a.Bytes, len(b.Entries), b.Instances, b.Bytes)
	}
	for i := range a.Entries {
		if a.Entries[i] != b.Entries[i] {
			t.Fatalf("entry %d: plain %+v, gzip %+v", i, a.Entries[i], b.Entries[i])
		}
	}
}

func TestTruncatedDump(t *testing.T) {
	dump := heapdumps.Dump(t)
	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.hprof")
	if err := os.WriteFile(cut, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Read(cut, Options{})
	if err == nil || !strings.Contains(err.Error(), "offset") || !strings.Contains(err.Error(), "cut.hprof") || strings.Contains(err.Error(), "inflated") {
		t.Fatalf("truncated dump: want an error naming the file and offset, got %v", err)
	}
	// Compressed and cut, the offsets count inflated bytes, and the error says so: the file is
	// a fraction of them.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(raw)
	zw.Close()
	cutz := filepath.Join(t.TempDir(), "cut.hprof.gz")
	if err := os.WriteFile(cutz, z.Bytes()[:z.Len()*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(cutz, Options{}); err == nil || !strings.Contains(err.Error(), "of the inflated data") {
		t.Errorf("truncated gzip dump: want an error saying its offsets are inflated ones, got %v", err)
	}
	h, err := Read(cut, Options{AllowPartial: true})
	if err != nil {
		t.Fatal(err)
	}
	if !h.Partial || h.Instances == 0 {
		t.Fatalf("partial read: partial=%v, %d instances", h.Partial, h.Instances)
	}
	full, _ := Read(dump, Options{})
	if h.Instances >= full.Instances {
		t.Errorf("partial histogram has %d instances, the full one %d", h.Instances, full.Instances)
	}
}

func TestParseClassHistogram(t *testing.T) {
	text := `12345:
 num     #instances         #bytes  class name (module)
-------------------------------------------------------
   1:         11801        2484488  [B (java.base@17.0.15)
   2:          2008         244328  java.lang.Class (java.base@17.0.15)
   3:             7            224  [[Ljava.lang.String; (java.base@17.0.15)
   4:             3             72  app.Foo
Total         13819        2729112
`
	h, err := ParseClassHistogram(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	m := byClass(h)
	if m["byte[]"].Bytes != 2484488 || m["java.lang.String[][]"].Instances != 7 || m["app.Foo"].Bytes != 72 {
		t.Errorf("parsed %+v", h.Entries)
	}
	if h.Instances != 13819 || h.Bytes != 2729112 || len(h.Warnings) != 0 {
		t.Errorf("totals %d %d warnings %v", h.Instances, h.Bytes, h.Warnings)
	}
	if _, err := ParseClassHistogram(strings.NewReader("hello world\n")); err == nil {
		t.Error("garbage parsed as a histogram")
	}
}

func TestTrend(t *testing.T) {
	mk := func(counts map[string]uint64) *Histogram {
		h := &Histogram{}
		for c, n := range counts {
			h.Entries = append(h.Entries, Entry{Class: c, Instances: n, Bytes: 16 * n})
		}
		h.finish()
		return h
	}
	hs := []*Histogram{
		mk(map[string]uint64{"Leak": 10, "Flat": 5, "Wobble": 10, "Shrink": 9}),
		mk(map[string]uint64{"Leak": 20, "Flat": 5, "Wobble": 30, "Shrink": 6}),
		mk(map[string]uint64{"Leak": 30, "Flat": 5, "Wobble": 20, "Shrink": 3, "New": 7}),
		mk(map[string]uint64{"Leak": 40, "Flat": 5, "Wobble": 35, "Shrink": 1, "New": 8}),
	}
	rows, err := Trend(hs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rows {
		names = append(names, r.Class)
	}
	// Wobble and New both grew in 2 of 3 intervals; Wobble's slope (6.5) beats New's (3.1).
	if strings.Join(names, ",") != "Leak,Wobble,New" {
		t.Fatalf("ranking %v", names)
	}
	if rows[0].Slope != 10 || rows[0].Grew != 1 || rows[0].First != 10 || rows[0].Last != 40 {
		t.Errorf("Leak row %+v", rows[0])
	}
	if rows[2].Grew < 0.66 || rows[2].Grew > 0.67 {
		t.Errorf("Wobble grew in 2 of 3 intervals, got %v", rows[2].Grew)
	}
	if _, err := Trend(hs[:1]); err == nil {
		t.Error("a trend of one histogram should be refused")
	}
}

func TestSeveralDumpsAndSmallIDs(t *testing.T) {
	b := hproftest.New(4)
	b.LoadClass(0x10, "java/lang/Object")
	b.LoadClass(0x20, "app/Node")
	b.Declare(0x20, 0x10, []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "v", Type: hprof.TypeLong}})
	b.StartSegment(false)
	b.Instance(0x100, 0x20)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "v", Type: hprof.TypeLong}}, nil)
	b.Class(0x10, 0, "", nil, nil)
	b.EndSegment()
	b.StartSegment(false)
	b.Instance(0x108, 0x20)
	b.PrimArray(0x200, hprof.TypeInt, 3)
	b.EndSegment()
	b.EndDump()
	b.StartSegment(false)
	b.Class(0x20, 0x10, "", []hproftest.Field{{Name: "next", Type: hprof.TypeObject}, {Name: "v", Type: hprof.TypeLong}}, nil)
	b.Class(0x10, 0, "", nil, nil)
	b.Instance(0x100, 0x20)
	b.EndSegment()
	b.EndDump()
	p := filepath.Join(t.TempDir(), "two.hprof")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	first, err := Read(p, Options{Dump: 1})
	if err != nil {
		t.Fatal(err)
	}
	m := byClass(first)
	// 32-bit VM: 8-byte header, 4-byte ref at 8, long at 16 → 24; int[3]: 12 + 12 → 24.
	if m["app.Node"].Instances != 2 || m["app.Node"].Bytes != 48 || m["int[]"].Bytes != 24 || first.Dumps != 2 || first.DumpIndex != 1 {
		t.Errorf("dump 1: %+v (%d dumps)", first.Entries, first.Dumps)
	}
	last, err := Read(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m := byClass(last); m["app.Node"].Instances != 1 || last.DumpIndex != 2 || len(last.Entries) != 2 {
		t.Errorf("last dump: %+v", last.Entries)
	}
	if _, err := Read(p, Options{Dump: 5}); err == nil {
		t.Error("dump 5 of 2 accepted")
	}
	if _, err := Read(p, Options{Dump: -1}); err == nil || !strings.Contains(err.Error(), "numbered from 1") {
		t.Errorf("dump -1: %v", err)
	}
	// Read in order (as gzip input is), each dump is the one read by segments.
	for _, dump := range []int{1, 2, 0} {
		bySegments, err := Read(p, Options{Dump: dump})
		if err != nil {
			t.Fatal(err)
		}
		inOrder, err := FromDump(p, bytes.NewReader(b.Bytes()), Options{Dump: dump})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(bySegments, inOrder) {
			t.Errorf("dump %d by segments:\n%+v\nin order:\n%+v", dump, bySegments, inOrder)
		}
	}
}

// Dumps and histograms made by jcmd itself from a live fixture process: the gzip dump
// (GC.heap_dump -gz=1) reads the same as the plain one, and the fixture's classes have the
// counts and bytes GC.class_histogram prints.
func TestJcmdDumpsAndHistogram(t *testing.T) {
	pid, release := heapdumps.Hold(t)
	defer release()
	dir := t.TempDir()
	plain, gz := filepath.Join(dir, "j.hprof"), filepath.Join(dir, "j.hprof.gz")
	run := func(args ...string) []byte {
		out, err := exec.Command(heapdumps.Tool("jcmd"), append([]string{strconv.Itoa(pid)}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("jcmd %v: %v\n%s", args, err, out)
		}
		return out
	}
	run("GC.heap_dump", plain)
	run("GC.heap_dump", "-gz=1", gz)
	// HotSpot compresses in blocks, each a gzip member, and says so in the first one's comment:
	// that is what has hprof inflate the members side by side.
	if f, err := os.Open(gz); err != nil {
		t.Fatal(err)
	} else {
		if zr, err := gzip.NewReader(f); err != nil {
			t.Error(err)
		} else if !strings.HasPrefix(zr.Comment, "HPROF BLOCKSIZE=") {
			t.Errorf("jcmd's gzip dump starts with comment %q, not HPROF BLOCKSIZE=", zr.Comment)
		}
		f.Close()
	}
	histo := filepath.Join(dir, "histo.txt")
	if err := os.WriteFile(histo, run("GC.class_histogram"), 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Read(plain, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Read(gz, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ma, mb := byClass(a), byClass(b)
	jc, err := Read(histo, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mj := byClass(jc)
	want, err := heapdumps.Expected(heapdumps.Dump(t))
	if err != nil {
		t.Fatal(err)
	}
	for class, n := range want {
		if ma[class].Instances != n || mb[class] != ma[class] || mj[class] != ma[class] {
			t.Errorf("%s: built %d; plain dump %+v, gzip dump %+v, jcmd histogram %+v", class, n, ma[class], mb[class], mj[class])
		}
	}

	// A byte changed inside the second block: the error says a gzip member is damaged, and where.
	z, err := os.ReadFile(gz)
	if err != nil {
		t.Fatal(err)
	}
	// The second member starts where the first ends, which only inflating the first tells.
	br := bytes.NewReader(z)
	bz := bufio.NewReader(br)
	zr, err := gzip.NewReader(bz)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	if _, err := io.Copy(io.Discard, zr); err != nil {
		t.Fatal(err)
	}
	second := len(z) - br.Len() - bz.Buffered()
	if second+200 >= len(z) {
		t.Fatalf("no second gzip member in jcmd's %d-byte dump", len(z))
	}
	z[second+100] ^= 0x55
	bad := filepath.Join(dir, "bad.hprof.gz")
	if err := os.WriteFile(bad, z, 0o644); err != nil {
		t.Fatal(err)
	}
	// With two cores, members are inflated side by side and checked before their bytes are read,
	// so nothing read before is in doubt. With one, the file is one stream inflated as it is
	// read: the damage shows where the records reach it, and what was read before is in doubt.
	_, err = Read(bad, Options{})
	if runtime.GOMAXPROCS(0) >= 2 {
		if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("gzip member at offset %d of the compressed file is damaged", second)) ||
			strings.Contains(err.Error(), "may be wrong") {
			t.Errorf("a damaged second block gave error %v", err)
		}
	} else if err == nil || !strings.Contains(err.Error(), "the gzip data is damaged") || !strings.Contains(err.Error(), "may be wrong") {
		t.Errorf("a damaged second block, read on one core, gave error %v", err)
	}
}

// Arrays summed by length modulo 8 must weigh what Model.ArraySize says array by array, under
// every layout and element size.
func TestArraysBytes(t *testing.T) {
	lengths := []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 1000, 1001, 1 << 20, 1<<31 + 3, ^uint32(0)}
	models := append(hprof.Layouts(), hprof.ModelFor(4, false))
	for _, m := range models {
		for _, es := range []int{1, 2, 4, 8} {
			var a arrays
			var want uint64
			for i, n := range lengths {
				for range i%3 + 1 {
					a.add(n)
					want += m.ArraySize(es, n)
				}
			}
			if got := a.bytes(m, es); got != want {
				t.Errorf("%+v, %d-byte elements: %d bytes, ArraySize adds up to %d", m, es, got, want)
			}
		}
	}
}

// A dump whose segments hold no record still counts as the last dump, read in order or by
// segments: the histogram is its (empty) one, not the dump before it.
func TestEmptyLastDump(t *testing.T) {
	data := hproftest.EmptyLastDump()
	p := filepath.Join(t.TempDir(), "empty-last.hprof")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for name, r := range map[string]io.Reader{"by segments": f, "in order": bytes.NewReader(data)} {
		h, err := FromDump(p, r, Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if h.Dumps != 2 || h.DumpIndex != 2 || len(h.Entries) != 0 {
			t.Errorf("%s: dump %d of %d with %d classes; want the empty dump 2 of 2", name, h.DumpIndex, h.Dumps, len(h.Entries))
		}
	}
}

// Damage inside a segment of a dump other than the one counted does not stop the count, read by
// segments (which never looks inside it) or in order; in the dump counted, it does.
func TestDamageInAnotherDump(t *testing.T) {
	for _, second := range []bool{true, false} {
		data := hproftest.DamagedFirstDump(second, 0)
		p := filepath.Join(t.TempDir(), "damaged-first.hprof")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, dump := range []int{0, 1, 2} {
			if dump == 2 && !second {
				continue
			}
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			bySegments, err1 := FromDump(p, f, Options{Dump: dump})
			f.Close()
			inOrder, err2 := FromDump(p, bytes.NewReader(data), Options{Dump: dump})
			if fails := dump == 1 || !second; (err1 != nil) != fails || (err2 != nil) != fails {
				t.Fatalf("second dump %v, dump %d: by segments: %v; in order: %v", second, dump, err1, err2)
			}
			if err1 == nil && (!reflect.DeepEqual(bySegments, inOrder) || bySegments.DumpIndex != 2 || bySegments.Instances != 2) {
				t.Errorf("dump %d: by segments %+v, in order %+v", dump, bySegments, inOrder)
			}
		}
	}
}

// Counting the last dump by segments, a worker meets the damage in the first long before the
// walk meets the second dump. The count goes on by segments, as when the walk wins that race:
// the damage waits for the walk's end, where it used to stop the walk and send the whole count
// back to reading the file in order.
func TestDamageInAnEarlierDumpStaysBySegments(t *testing.T) {
	p := filepath.Join(t.TempDir(), "damaged-first.hprof")
	if err := os.WriteFile(p, hproftest.DamagedFirstDump(true, 50_000), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, ok := fromSegments(p, f, Options{})
	if !ok || h.DumpIndex != 2 || h.Instances != 2 {
		t.Errorf("by segments: %v, %+v", ok, h)
	}
}
