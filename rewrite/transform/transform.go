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

// Skip names a method left unmodified and the reason, e.g. "code would exceed 65535 bytes".
type Skip struct {
	Method string // name+descriptor, e.g. "run(I)V"; empty for the whole class
	Reason string
}

// RewrittenBefore starts the reason of a class skipped because heapledger rewrote it already:
// it runs with the site IDs of an earlier rewrite's table, which a consumer may need to say.
const RewrittenBefore = "already rewritten by heapledger"

// Func adapts a function to the Class interface.
type Func func(name string, data []byte) (Result, error)

// TransformClass calls f.
func (f Func) TransformClass(name string, data []byte) (Result, error) { return f(name, data) }
