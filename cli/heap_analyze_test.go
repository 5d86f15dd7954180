package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/analysis/hprof"
	"github.com/heapledger/heapledger/analysis/hprof/hproftest"
	"github.com/heapledger/heapledger/analysis/pipeline"
	"github.com/heapledger/heapledger/fixtures/heapdumps"
)

// TestHeapAnalyzeFindsPlantedLeak runs `heap analyze` on the fixture dump: the class holding the
// planted leak must be the top suspect, with the leak's backing array as the accumulation point
// and a strong path from a GC root through the static field.
func TestHeapAnalyzeFindsPlantedLeak(t *testing.T) {
	dump := heapdumps.Dump(t)
	js, errOut, err := runCLI(t, "heap", "analyze", dump, "--json", "--top", "5")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errOut, "analysing") {
		t.Errorf("phase progress on stderr though it is not a terminal and --progress is not given: %q", errOut)
	}
	var v pipeline.Report
	if err := json.Unmarshal([]byte(js), &v); err != nil {
		t.Fatalf("--json output does not parse: %v\n%s", err, js)
	}
	if len(v.Suspects) == 0 {
		t.Fatalf("no leak suspects:\n%s", js)
	}
	s := v.Suspects[0]
	if s.Object != "class "+heapdumps.LeakHolder+" @ "+s.ID {
		t.Errorf("top suspect is %s, want the class %s holding the leak", s.Object, heapdumps.LeakHolder)
	}
	// 2000 items, each a 24-byte object with a 1016-byte array, fill the accumulation point.
	const leakBytes = 2000 * (24 + 1016)
	if s.Accumulation.Class != "java.lang.Object[]" || s.Accumulation.Retained < leakBytes || s.Accumulation.Retained > leakBytes+20000 {
		t.Errorf("accumulation point %s retains %d; want the leak list's Object[] retaining about %d", s.Accumulation.Object, s.Accumulation.Retained, leakBytes)
	}
	var refs []string
	for _, st := range s.AccumulationPath {
		refs = append(refs, st.Reference)
	}
	if p := strings.Join(refs, " "); !strings.HasSuffix(p, "LEAK elementData") || !strings.HasPrefix(p, "<GC root") {
		t.Errorf("path to the accumulation point: %q, want a GC root first and ... LEAK elementData last", p)
	}
	if len(v.TopRetained) != 5 || v.TopRetained[0].Object != s.Object || len(v.ByClass) != 5 || len(v.TopDynamic) != 5 {
		t.Errorf("rankings: %d retained (first %v), %d by class, %d dynamic; want 5 each, led by the suspect",
			len(v.TopRetained), v.TopRetained, len(v.ByClass), len(v.TopDynamic))
	}
	if s.Dynamic < s.Retained {
		t.Errorf("suspect's dynamic size %d is below its retained size %d", s.Dynamic, s.Retained)
	}

	text, _, err := runCLI(t, "heap", "analyze", "--threshold", "50", dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"leak suspects (objects retaining more than 50% of the heap): 1", "memory accumulates in java.lang.Object[]", "top 20 objects by retained size", "retained size by class", heapdumps.LeakClass} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
}

// TestHeapAnalyzeKeepUnreachable: with --keep-unreachable the objects no GC root reaches are
// analysed (the thesis's roots-without-referrers rule) and the report says so.
func TestHeapAnalyzeKeepUnreachable(t *testing.T) {
	dump := heapdumps.Dump(t)
	plain, _, err := runCLI(t, "heap", "analyze", "--json", "--top", "1", dump)
	if err != nil {
		t.Fatal(err)
	}
	kept, _, err := runCLI(t, "heap", "analyze", "--json", "--top", "1", "--keep-unreachable", dump)
	if err != nil {
		t.Fatal(err)
	}
	var a, b pipeline.Report
	if err := json.Unmarshal([]byte(plain), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(kept), &b); err != nil {
		t.Fatal(err)
	}
	if a.KeptUnreachable || !b.KeptUnreachable {
		t.Errorf("unreachable_kept = %v without the flag and %v with it", a.KeptUnreachable, b.KeptUnreachable)
	}
	if a.UnreachableRoots != 0 || (b.UnreachableObjs > 0) != (b.UnreachableRoots > 0) || b.UnreachableRoots > int(b.UnreachableObjs) {
		t.Errorf("unreachable_roots = %d without the flag, %d of %d unreachable objects with it", a.UnreachableRoots, b.UnreachableRoots, b.UnreachableObjs)
	}
	if a.UnreachableObjs > 0 && b.Objects+int(b.WeakOnlyObjects) != a.Objects+int(a.WeakOnlyObjects)+int(a.UnreachableObjs) {
		t.Errorf("with --keep-unreachable %d+%d objects, without %d+%d plus %d unreachable",
			b.Objects, b.WeakOnlyObjects, a.Objects, a.WeakOnlyObjects, a.UnreachableObjs)
	}
}

// TestHeapAnalyzeWithoutRoots: a dump with no GC-root records has its roots chosen by the
// thesis's rule whether or not --keep-unreachable is given, and the report says that its
// unreachable objects were analysed, not left out.
func TestHeapAnalyzeWithoutRoots(t *testing.T) {
	b := hproftest.New(8)
	b.Chain()
	dump := filepath.Join(t.TempDir(), "noroots.hprof")
	if err := os.WriteFile(dump, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	text, stderr, err := runCLI(t, "heap", "analyze", dump)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "analysed, ") || strings.Contains(text, "left out") {
		t.Errorf("text report does not say the unreachable objects were analysed:\n%s", text)
	}
	if !strings.Contains(text, "shortest path from a root the thesis's rule chose:\n      <unreachable: a root by the thesis's rule>") || strings.Contains(text, "from a GC root") {
		t.Errorf("paths should say they start at a root the rule chose:\n%s", text)
	}
	if !strings.Contains(stderr, "no GC-root records") {
		t.Errorf("no warning about the missing roots: %q", stderr)
	}
	out, _, err := runCLI(t, "heap", "analyze", "--json", dump)
	if err != nil {
		t.Fatal(err)
	}
	var v pipeline.Report
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatal(err)
	}
	// A, D and F are the roots (see hproftest.Chain); the two classes hang off the instances.
	if !v.KeptUnreachable || v.UnreachableRoots != 3 || v.UnreachableObjs != 8 || v.Objects != 8 {
		t.Errorf("kept %v, %d roots taken of %d unreachable objects, %d objects analysed; want true, 3, 8, 8",
			v.KeptUnreachable, v.UnreachableRoots, v.UnreachableObjs, v.Objects)
	}
}

func TestHeapAnalyzeBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"heap", "analyze"},
		{"heap", "analyze", "/no/such/file.hprof"},
		{"heap", "analyze", "--threshold", "0", "x.hprof"},
		{"heap", "analyze", "--threshold", "150", "x.hprof"},
		{"heap", "analyze", "--top", "-1", "x.hprof"},
	} {
		if _, _, err := runCLI(t, args...); err == nil {
			t.Errorf("%v: expected an error", args)
		}
	}
}

// --timings prints a line per phase, in the order they run, and a total, each with the peak
// memory so far, which never falls; the report is the same.
func TestHeapAnalyzeTimings(t *testing.T) {
	dump := heapdumps.Dump(t)
	plain, _, err := runCLI(t, "heap", "analyze", dump, "--json")
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCLI(t, "heap", "analyze", "--timings", dump, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if out != plain {
		t.Error("--timings changed the report")
	}
	var phases []string
	lastPeak := 0
	for _, line := range strings.Split(errOut, "\n") {
		name, ok := strings.CutPrefix(line, "timing: ")
		if !ok {
			continue
		}
		f := strings.Fields(name)
		if runtime.GOOS == "linux" {
			// The peak is known there: "... s CPU 123 MB peak".
			peak, err := strconv.Atoi(f[max(0, len(f)-3)])
			if len(f) < 10 || f[len(f)-1] != "peak" || f[len(f)-2] != "MB" || err != nil || peak <= 0 || peak < lastPeak {
				t.Fatalf("timing line %q: want the peak memory so far, no less than the line before's %d MB", line, lastPeak)
			}
			lastPeak, f = peak, f[:len(f)-3]
		}
		if len(f) < 7 || f[len(f)-1] != "CPU" || f[len(f)-4] != "wall" {
			t.Fatalf("timing line %q: want name, wall seconds and CPU seconds", line)
		}
		phases = append(phases, strings.Join(f[:len(f)-6], " "))
	}
	want := []string{"reading objects", "indexing objects", "reading references", "building the graph", "setting columns aside",
		"depth-first search", "dominator tree", "retained sizes", "leak suspects", "retained size by class",
		"paths from GC roots", "strongly connected components", "dynamic sizes", "naming references",
		"writing the report", "total"}
	if strings.Join(phases, ", ") != strings.Join(want, ", ") {
		t.Errorf("phases timed:\n%s\nwant\n%s", strings.Join(phases, ", "), strings.Join(want, ", "))
	}
}

// Columns that cannot be moved to temporary files stay in memory: same report, and a warning.
func TestHeapAnalyzeWarnsWhenColumnsCannotSpill(t *testing.T) {
	dump := heapdumps.Dump(t)
	plain, _, err := runCLI(t, "heap", "analyze", dump, "--json")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	out, errOut, err := runCLI(t, "heap", "analyze", dump, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if out != plain {
		t.Error("the report changed when the columns stayed in memory")
	}
	if !strings.Contains(errOut, "stayed in memory") || !strings.Contains(errOut, "missing") {
		t.Errorf("no warning that the columns stayed in memory, and why: %q", errOut)
	}
	// --temp-dir wins over TMPDIR; a directory that is not there is refused before the dump is read.
	out, errOut, err = runCLI(t, "heap", "analyze", "--temp-dir", t.TempDir(), dump, "--json")
	if err != nil || out != plain || strings.Contains(errOut, "stayed in memory") {
		t.Errorf("--temp-dir: error %v, same report %v, stderr %q", err, out == plain, errOut)
	}
	missing := filepath.Join(t.TempDir(), "gone")
	if _, _, err := runCLI(t, "heap", "analyze", "--temp-dir", missing, dump); err == nil || !strings.Contains(err.Error(), "--temp-dir "+missing) {
		t.Errorf("--temp-dir of a missing directory: %v", err)
	}
}

// --progress shows every phase that runs long enough, the steps of loading between the passes
// over the file too, but not the passes themselves, which show their bytes.
func TestHeapAnalyzeProgressShowsPhases(t *testing.T) {
	dump := heapdumps.Dump(t)
	defer func(d time.Duration) { phaseShownAfter = d }(phaseShownAfter)
	phaseShownAfter = 0
	_, errOut, err := runCLI(t, "heap", "analyze", "--progress", dump)
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"building the graph", "setting columns aside", "depth-first search", "dominator tree", "dynamic sizes", "naming references"} {
		if !strings.Contains(errOut, "analysing: "+phase+" ...\n") || !strings.Contains(errOut, "analysing: "+phase+" took ") {
			t.Errorf("phase %q not shown with its time:\n%s", phase, errOut)
		}
	}
	if strings.Contains(errOut, "analysing: reading") || strings.Contains(errOut, "timing:") {
		t.Errorf("a pass over the file shown as a phase, or timings without --timings:\n%s", errOut)
	}
}

// lazySeqDump writes a dump of what a realised Clojure lazy sequence of strings leaves on the
// heap: a Var (held by a JNI global) holds a LazySeq, whose value, a ChunkedCons, holds a chunk
// of 32 strings (an ArrayChunk and its Object[]) and the next LazySeq. The chain alternates the
// two classes, two steps per chunk, and ends in a LazySeq holding nothing. It returns the
// dump's path and the ids of the Var and of the first LazySeq.
func lazySeqDump(t *testing.T, chunks int) (path string, varID, headID uint64) {
	t.Helper()
	const (
		object, str, lazySeq, chunkedCons, arrayChunk, objArray, cljVar = 0x10, 0x18, 0x20, 0x28, 0x30, 0x38, 0x40
		chunk                                                           = 32
	)
	b := hproftest.New(8)
	field := func(name string, t hprof.Type) hproftest.Field { return hproftest.Field{Name: name, Type: t} }
	named := func(name string) hproftest.Field { return field(name, hprof.TypeObject) }
	b.StartSegment(false)
	b.Class(object, 0, "java/lang/Object", nil, nil)
	b.Class(str, object, "java/lang/String", []hproftest.Field{named("value"), field("hash", hprof.TypeInt), field("coder", hprof.TypeByte)}, nil)
	b.Class(lazySeq, object, "clojure/lang/LazySeq", []hproftest.Field{named("fn"), named("sv"), named("s")}, nil)
	b.Class(chunkedCons, object, "clojure/lang/ChunkedCons", []hproftest.Field{named("chunk"), named("_more")}, nil)
	b.Class(arrayChunk, object, "clojure/lang/ArrayChunk", []hproftest.Field{named("array"), field("off", hprof.TypeInt), field("end", hprof.TypeInt)}, nil)
	b.Class(objArray, object, "[Ljava/lang/Object;", nil, nil)
	b.Class(cljVar, object, "clojure/lang/Var", []hproftest.Field{named("root")}, nil)
	for _, c := range []uint64{object, str, lazySeq, chunkedCons, arrayChunk, objArray, cljVar} {
		b.Root(hprof.TagRootStickyClass, c) // as HotSpot roots the classes of the boot loader
	}
	next := uint64(0x10000000)
	id := func() uint64 { next += 16; return next }
	varID, headID = id(), id()
	b.Instance(varID, cljVar, headID)
	b.Root(hprof.TagRootJNIGlobal, varID)
	seq := headID
	for range chunks {
		cons, ac, arr, more := id(), id(), id(), id()
		b.Instance(seq, lazySeq, 0, 0, cons)
		b.Instance(cons, chunkedCons, ac, more)
		b.Instance(ac, arrayChunk, arr, 0, chunk)
		elems := make([]uint64, chunk)
		for i := range elems {
			s, value := id(), id()
			b.PrimArray(value, hprof.TypeByte, 10) // "item-12345"
			b.Instance(s, str, value, 0, 0)
			elems[i] = s
		}
		b.ObjArray(arr, objArray, elems...)
		seq = more
	}
	b.Instance(seq, lazySeq, 0, 0, 0)
	b.EndSegment()
	b.EndDump()
	path = filepath.Join(t.TempDir(), "lazyseq.hprof")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, varID, headID
}

// TestHeapAnalyzeChainOfTwoClasses: a realised lazy sequence is a chain 6,000 steps deep that
// alternates two classes, each ChunkedCons holding a chunk of strings. The memory is spread along
// it, so the accumulation point is its head, retaining the whole sequence, in the JSON report and
// in the text, not an element near its tail, where the retained size finally drops.
func TestHeapAnalyzeChainOfTwoClasses(t *testing.T) {
	dump, varID, headID := lazySeqDump(t, 3000)
	var v pipeline.Report
	cliJSON(t, &v, "heap", "analyze", "--json", "--top", "3", dump)
	if len(v.Suspects) != 1 {
		t.Fatalf("suspects %+v, want the Var holding the sequence only", v.Suspects)
	}
	s := v.Suspects[0]
	if s.ID != fmt.Sprintf("0x%x", varID) || s.Class != "clojure.lang.Var" {
		t.Errorf("suspect %s, want the Var @ 0x%x", s.Object, varID)
	}
	a := s.Accumulation
	if a.ID != fmt.Sprintf("0x%x", headID) || a.Class != "clojure.lang.LazySeq" {
		t.Errorf("accumulation point %s retaining %d bytes, want the sequence's head, clojure.lang.LazySeq @ 0x%x", a.Object, a.Retained, headID)
	}
	// The Var holds nothing but the sequence, which is nearly all of the heap.
	if a.Retained != s.Retained-s.Shallow || float64(a.Retained) < 0.95*float64(v.Bytes) {
		t.Errorf("accumulation point retains %d bytes; want all the Var retains but itself (%d - %d), nearly all of the heap's %d",
			a.Retained, s.Retained, s.Shallow, v.Bytes)
	}
	var refs []string
	for _, st := range s.AccumulationPath {
		refs = append(refs, st.Reference)
	}
	if p := strings.Join(refs, " "); p != "<GC root: JNI global> root" || s.AccumulationPath[1].Object != a.Object {
		t.Errorf("path to the accumulation point of %d references (%q first), want the Var's root field to the head",
			len(refs), strings.Join(refs[:min(len(refs), 4)], " "))
	}

	text, _, err := runCLI(t, "heap", "analyze", dump)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("memory accumulates in %s, retaining %d bytes", a.Object, a.Retained)
	if !strings.Contains(text, want) {
		t.Errorf("text report lacks %q:\n%s", want, text)
	}
}

// An analysis under a budget below its dump's size pages its arrays to files in --temp-dir,
// unlinked as they are made: interrupted while it holds them open, it stops, and leaves no file
// behind.
func TestHeapAnalyzeInterruptedLeavesNoFiles(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("arrays are paged to files on Linux only")
	}
	const objects = 2_000_000 // a dump larger than the smallest budget for it
	dump := filepath.Join(t.TempDir(), "random.hprof")
	if err := os.WriteFile(dump, hproftest.RandomHeap(objects, 7), 0o600); err != nil {
		t.Fatal(err)
	}
	budget := pipeline.MinimumBudget(objects + hproftest.RandomHeapClasses)
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "heap", "analyze", "--max-memory", strconv.FormatInt(budget>>20+1, 10)+"M", "--temp-dir", dir, dump)
	cmd.Env = append(os.Environ(), asCLI+"=1")
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the analysis holds a file of the directory open: an array paged.
	fdDir := fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid)
	deadline := time.Now().Add(time.Minute)
	for !holdsFileIn(fdDir, dir) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no array paged to %s within a minute; stderr:\n%s", dir, errb.String())
		}
		time.Sleep(time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	if err == nil || !strings.Contains(errb.String(), "cancelled") {
		t.Errorf("interrupted analysis: %v, stderr %q; want it stopped as cancelled", err, errb.String())
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d files left in --temp-dir after the interrupt", len(left))
	}
}

// holdsFileIn reports whether a process whose /proc fd directory is fdDir holds a file of dir
// open.
func holdsFileIn(fdDir, dir string) bool {
	fds, _ := os.ReadDir(fdDir)
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join(fdDir, fd.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			return true
		}
	}
	return false
}
