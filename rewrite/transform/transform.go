// Package transform is the contract between the code that finds classes (jar pipeline, agent
// transform service) and the passes that rewrite them, so neither depends on the other.
package transform

// Class rewrites one class file. Implementations must be safe for concurrent use: the jar
// pipeline calls TransformClass from several goroutines at once.
type Class interface {
	// TransformClass returns the rewritten class. name is the entry or internal class name, for
	// messages only. An error means the class could not be processed at all; the caller then keeps
	// the original bytes and reports the error. Methods that cannot be instrumented safely are not
	// errors: they are kept as they were and listed in Result.Skipped.
	TransformClass(name string, data []byte) (Result, error)
}

// Inputs is implemented by a pass that reads other classes of the input while it rewrites one
// (the count pass reads a class's nest: rewrite/passes/boundary.go). The jar pipeline hands it,
// before any class is rewritten, a lookup of the input's classes by internal name, which is
// safe for concurrent use; the agent's service hands the JVM's class path (jar.ClassPath) to
// the pass that rewrites the system class loader's classes, and none to the others.
type Inputs interface {
	SetInputs(lookup func(class string) ([]byte, bool))
}

// Result says what a pass did to one class.
type Result struct {
	// Data is the new class file; nil when the class is unchanged.
	Data []byte
	// Skipped lists methods (or the whole class, with Method empty) kept unmodified, and why.
	Skipped []Skip
	// Warnings are things the user should know that did not stop the rewrite (for example a
	// class file version newer than the engine knows, passed through unchanged).
	Warnings []string
	// IDs are the table IDs the pass took for the class (the count pass's site IDs); nil when
	// it took none. A caller that keeps the result for a later run against another table (the
	// agent's cache of transformed classes) replays them: it takes as many IDs and puts them
	// where the pass put these.
	IDs *IDs
}

// IDs says which table IDs a pass took for one class and where it put them: it reserved
// Reserved consecutive IDs from First and wrote First+i into the CONSTANT_Integer at pool
// index Pool[i] of Data (IDs it reserved past len(Pool) went unused, as they do for a class
// that was not changed).
type IDs struct {
	First, Reserved int
	Pool            []uint16
}

// Changed reports whether the pass produced new bytes.
func (r Result) Changed() bool { return r.Data != nil }

// Skip names a method (or a whole class) left unmodified, why in a code the rewrite's summary
// counts by, and the particulars. The detail is free text, often naming a method and an
// offset; the code never does, so methods kept for one reason count as one group.
type Skip struct {
	Method string // name+descriptor, e.g. "run(I)V"; empty for the whole class
	Code   SkipCode
	Detail string // the error or the mark that decided it, with its class, method and offset; may be empty
}

// Reason is the skip as one line of text: the code, then the detail.
func (s Skip) Reason() string {
	if s.Detail == "" {
		return string(s.Code)
	}
	return string(s.Code) + ": " + s.Detail
}

// SkipCode says, as the summary of a rewrite names it, why something was left as it was.
type SkipCode string

// The reasons a pass keeps a method or a class unmodified.
const (
	// Methods.
	SkipTooLarge       SkipCode = "code would exceed 65535 bytes"
	SkipPoolFull       SkipCode = "constant pool would exceed 65535 entries"
	SkipUnmappable     SkipCode = "code has an attribute whose offsets cannot be remapped"
	SkipUnreadableCode SkipCode = "code cannot be decoded"
	SkipNoFrames       SkipCode = "stack map frames cannot be derived"
	SkipNoInitCall     SkipCode = "constructor calls no super() or this() on any path"
	SkipUnencodable    SkipCode = "edited code cannot be encoded"
	SkipInstrument     SkipCode = "the pass cannot instrument the method"
	// Classes (and every method of a class the pass refuses).
	SkipModuleInfo  SkipCode = "module-info is never rewritten"
	SkipPackageInfo SkipCode = "package-info is never rewritten"
	SkipRuntime     SkipCode = "heapledger's own runtime is never instrumented"
	SkipRewritten   SkipCode = RewrittenBefore
	SkipRefused     SkipCode = "the pass refuses the class"
	// Methods rewritten, but with a fallback (Fallback): --counters paths left their objects
	// on per-site counters.
	SkipPathsSubroutine SkipCode = "kept on per-site counters: jsr/ret subroutine"
	SkipPathsOldClass   SkipCode = "kept on per-site counters: class file before version 49"
	SkipPathsHandler    SkipCode = "kept on per-site counters: exception handler also reached by normal flow"
	SkipPathsLarge      SkipCode = "kept on per-site counters: control-flow graph too large"
	SkipPathsGraph      SkipCode = "kept on per-site counters: no control-flow graph"
	SkipPathsCostlier   SkipCode = "kept on per-site counters: paths would run more increments"
)

// fallbacks are the codes of methods the pass did rewrite, in a simpler way than asked.
var fallbacks = map[SkipCode]bool{SkipPathsSubroutine: true, SkipPathsOldClass: true, SkipPathsHandler: true, SkipPathsLarge: true, SkipPathsGraph: true, SkipPathsCostlier: true}

// Fallback reports whether c is the code of a method rewritten with a fallback rather than
// left as it was: summaries count those apart from the methods skipped.
func (c SkipCode) Fallback() bool { return fallbacks[c] }

// RewrittenBefore is the reason of a class skipped because heapledger rewrote it already: it
// runs with the site IDs of an earlier rewrite's table, which a consumer may need to say.
const RewrittenBefore = "already rewritten by heapledger"

// Func adapts a function to the Class interface.
type Func func(name string, data []byte) (Result, error)

// TransformClass calls f.
func (f Func) TransformClass(name string, data []byte) (Result, error) { return f(name, data) }
