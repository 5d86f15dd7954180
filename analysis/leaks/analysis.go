package leaks

import (
	"runtime/debug"

	"github.com/heapledger/heapledger/analysis/dominators"
	"github.com/heapledger/heapledger/analysis/dynsize"
	"github.com/heapledger/heapledger/analysis/heapgraph"
	"github.com/heapledger/heapledger/analysis/internal/memory"
)

// Analysis is one run of the analysis over an Input, a step at a time: Dominators,
// RetainedSizes, Suspects and DynamicSizes, in that order (Steps), then Finish, which Run does.
// Each step reports to Options.Monitor under its phase's name, and fails with its error once
// the analysis is cancelled.
//
// The order is memory's: the suspects need the dominator tree and the retained sizes, which go
// before the components' arrays are made; the dynamic sizes of the suspects and the top objects,
// found first, are filled in by DynamicSizes.
type Analysis struct {
	in   *Input
	opt  Options
	g    *heapgraph.Graph
	n    int // nodes and edges: taken at the start, as the columns are out at times
	m    int
	rep  *Report
	cols *memory.Store // the input's columns, moved out with Options.Spill
	sc   *memory.Scratch
	// limited says a memory limit (Options.MemoryLimit) decides what may run beside what.
	limited bool

	// Handed from step to step.
	beside *besideSearch    // the components' search beside the depth-first search
	tree   *dominators.Tree // from Dominators to Suspects
	ret    []uint64         // retained sizes, from RetainedSizes to Suspects
	dyn    *dynsize.Sizes
	apart  int // components set apart (see Input.Apart)
}

// The names of the input's columns in the store.
const (
	colSizes   = "shallow sizes"
	colClassOf = "class of each object"
	colOff     = "edge offsets"
	colSucc    = "edges"
	colWeak    = "weak edges"
)

// edgeColumns are the columns of the graph's edges.
var edgeColumns = []string{colOff, colSucc, colWeak}

// Start begins the analysis of in. Its columns go into a store, which moves them out to files
// between the steps that do not read them with Options.Spill.
func Start(in *Input, opt Options) *Analysis {
	a := &Analysis{in: in, opt: opt, g: in.Graph, n: in.Graph.N(), m: len(in.Graph.Succ), rep: &Report{},
		cols: memory.NewStore(opt.Memory, opt.Spill), limited: opt.MemoryLimit > 0}
	g := a.g
	memory.Add(a.cols, colSizes, &g.Size)
	memory.Add(a.cols, colClassOf, &in.ClassOf)
	memory.Add(a.cols, colOff, &g.Off)
	memory.Add(a.cols, colSucc, &g.Succ)
	memory.Add(a.cols, colWeak, (*[]uint64)(&in.Weak))
	// The phases hand their work arrays on to the next (see memory.Scratch).
	a.sc = &memory.Scratch{Spill: a.cols.Spills(), Budget: opt.Memory}
	return a
}

// Phase is one named step of an Analysis.
type Phase struct {
	Name string
	Run  func() error
}

// Steps are the Analysis's steps, in the order they run.
func (a *Analysis) Steps() []Phase {
	return []Phase{{"dominators", a.Dominators}, {"retained sizes", a.RetainedSizes}, {"suspects", a.Suspects},
		{"dynamic sizes", a.DynamicSizes}}
}

// begin reports the step of phase that begins, and whether the analysis is cancelled.
func (a *Analysis) begin(phase, step string) error {
	return a.opt.Monitor.Begin(phase, step)
}

// freeing is begin for a step that starts after the last one dropped arrays: the memory goes
// back to the system first, so that the new step's peak does not stack on it. (A collection
// costs time even with nothing to free, and half the steps start with nothing: they begin with
// begin.)
func (a *Analysis) freeing(phase, step string) error {
	debug.FreeOSMemory()
	return a.begin(phase, step)
}

// Finish ends the analysis and returns its report. Every column is back in the Input, but for
// those Options.Leave names, as memory of its own or (Options.Views) read-only views of their
// files. It fails only if a column cannot come back from its file. After a step failed, it
// returns the columns all the same, and the report so far.
func (a *Analysis) Finish() (*Report, error) {
	defer a.sc.Drop()
	defer a.cols.Close()
	a.drop(a.opt.Leave)
	if err := a.cols.Return(a.opt.Views); err != nil {
		return nil, err
	}
	return a.rep, nil
}

// drop lets go of the columns in leave: the caller reads them no more.
func (a *Analysis) drop(leave Columns) {
	for _, c := range []struct {
		name string
		on   bool
	}{{colSizes, leave.Sizes}, {colSucc, leave.Succ}, {colWeak, leave.Weak}} {
		if c.on {
			a.cols.Drop(c.name)
		}
	}
}
