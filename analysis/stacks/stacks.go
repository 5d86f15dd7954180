// Package stacks holds allocation profiles as stacks of frames with values, the one model
// behind every profile format heapledger writes: pprof (pprof.go), collapsed stacks
// (collapsed.go) and the flame-graph tree of the HTML report (flame.go). A profile is made from
// a snapshot (snapshot.go) and two of them give a difference profile (diff.go).
//
// A sample's stack is leaf first, as pprof's are: the frame of the allocated type, then the
// allocating method at the site's line, then — once snapshots carry calling contexts — the
// callers of that method. Writers never assume a stack of two frames, so full stacks need no
// change below the snapshot reader.
package stacks

import (
	"fmt"
	"time"
)

// Sample types, named as Go's own heap profiles name them, so that pprof users find the
// options they know (-sample_index=inuse_space).
const (
	AllocObjects = "alloc_objects"
	AllocSpace   = "alloc_space"
	InuseObjects = "inuse_objects"
	InuseSpace   = "inuse_space"
)

// ValueType names one value of every sample: what it counts and in which unit.
type ValueType struct {
	Type string `json:"type"` // alloc_objects, alloc_space, inuse_objects, inuse_space
	Unit string `json:"unit"` // count or bytes
}

// FrameKind tells the frame of a method from that of an allocated type.
type FrameKind uint8

const (
	// MethodFrame is a Java method at a line.
	MethodFrame FrameKind = iota
	// TypeFrame is what the site allocated: the leaf of every stack, as in async-profiler's
	// allocation profiles, so that one method's sites of different types stay apart.
	TypeFrame
)

// Frame is one frame of a stack.
type Frame struct {
	Kind FrameKind
	// Name is what people read: "demo.lib.TextTable.line(String[])" for a method (parameter
	// types by their simple names, no return type), "char[]" for a type.
	Name string
	// Method is the method as the site table names it, "package.Class.method(descriptor)";
	// empty for a type frame.
	Method string
	// File is the source file derived from the class name, "demo/lib/TextTable.java" for
	// demo.lib.TextTable$Row: snapshots do not carry the class's SourceFile attribute, so a
	// Kotlin or Scala class, or a second top-level class of a file, gets a name that is not its
	// file's. Empty when unknown.
	File string
	// Line is the source line, 0 when unknown (as pprof has it).
	Line int
}

// Sample is what one stack allocated, with the labels of the row it came from.
type Sample struct {
	Stack   []Frame // leaf first
	Values  []int64 // one per Profile.Types
	Account string  // the memory account charged (the principal)
	Type    string  // what was allocated
	Kind    string  // the site's kind: object, array, multi, lambda, ...
	// UnknownSize marks a row whose object size the runtime did not know: its bytes are 0
	// here, as the text report leaves them out of its byte figures (and marks them '+?').
	UnknownSize bool
	// Base marks a sample of the base of a difference profile, its values negated (Diff).
	Base bool
}

// Profile is an allocation profile: samples of stacks, each with a value per type.
type Profile struct {
	Types []ValueType
	// Default is the type viewers show unless told otherwise: inuse_space when live objects
	// are known (as Go's heap profiles), alloc_space otherwise.
	Default string
	Samples []Sample
	// Comments say what the figures are: the program, the liveness setting, what was left out.
	Comments []string
	// Time is when the snapshot was taken (zero when unknown); Duration is the process's
	// uptime at that moment (0 when unknown).
	Time     time.Time
	Duration time.Duration
}

// Index returns the position of sample type typ in p.Types, or -1.
func (p *Profile) Index(typ string) int {
	for i, t := range p.Types {
		if t.Type == typ {
			return i
		}
	}
	return -1
}

// Total sums the values of type index i over the samples (base samples count negated, so a
// difference profile's total is the net change).
func (p *Profile) Total(i int) int64 {
	var n int64
	for _, s := range p.Samples {
		n += s.Values[i]
	}
	return n
}

// HasBase reports whether p is a difference profile.
func (p *Profile) HasBase() bool {
	for _, s := range p.Samples {
		if s.Base {
			return true
		}
	}
	return false
}

// CheckValid checks what every writer relies on: known, distinct sample types with the default
// among them, a value per type in every sample, and stacks that start at a type frame and name
// every frame.
func (p *Profile) CheckValid() error {
	if len(p.Types) == 0 {
		return fmt.Errorf("profile has no sample types")
	}
	seen := map[string]bool{}
	for _, t := range p.Types {
		if t.Type == "" || t.Unit == "" || seen[t.Type] {
			return fmt.Errorf("sample type %q (unit %q) is empty or repeated", t.Type, t.Unit)
		}
		seen[t.Type] = true
	}
	if !seen[p.Default] {
		return fmt.Errorf("default sample type %q is not among the profile's", p.Default)
	}
	for i, s := range p.Samples {
		if len(s.Values) != len(p.Types) {
			return fmt.Errorf("sample %d has %d values for %d sample types", i, len(s.Values), len(p.Types))
		}
		if len(s.Stack) == 0 || s.Stack[0].Kind != TypeFrame {
			return fmt.Errorf("sample %d (account %s, type %s): the stack must start at the allocated type's frame", i, s.Account, s.Type)
		}
		for j, f := range s.Stack {
			if f.Name == "" {
				return fmt.Errorf("sample %d (account %s, type %s): frame %d has no name", i, s.Account, s.Type, j)
			}
			if j > 0 && f.Kind != MethodFrame {
				return fmt.Errorf("sample %d (account %s, type %s): frame %d is a type below the leaf", i, s.Account, s.Type, j)
			}
		}
	}
	return nil
}
