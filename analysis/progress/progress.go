package progress

import (
	"context"
	"errors"
	"sync"
)

// Step is one step of an analysis: the unit its progress is shown and timed in. A phase of the
// analysis (reading the file, the dominator tree, ...) takes one step or a few.
type Step struct {
	Phase string // the phase it belongs to, as the analysis names its phases ("read", "dominators")
	Name  string // what it does, for people: "reading objects", "depth-first search"
	// Pass says the step reads the dump file from end to end: its progress comes as bytes read
	// (Listener.Read), where a display shows a counter rather than the step's name.
	Pass bool
}

// Listener is told what an analysis does as it goes. Its methods are called one at a time, never
// at once, though not always from one goroutine.
type Listener interface {
	// Begin says that a step begins, and that the one before, if any, has ended.
	Begin(Step)
	// Read says how far the pass under way has got: done of total bytes (total is -1 when it
	// is not known, as for a gzip-compressed file).
	Read(done, total int64)
	// Warn says something the user should know; the analysis goes on.
	Warn(msg string)
}

// Monitor carries one analysis's Listener and cancellation through its phases: every phase
// reports to it and asks it, between units of work, whether to stop. A nil *Monitor reports to
// no one and is never cancelled, for callers that want neither (tests, small graphs).
type Monitor struct {
	ctx context.Context
	mu  sync.Mutex
	l   Listener
}

// New returns a Monitor reporting to l (nil: no one) and cancelled with ctx.
func New(ctx context.Context, l Listener) *Monitor {
	if ctx == nil {
		ctx = context.Background()
	}
	return &Monitor{ctx: ctx, l: l}
}

// Begin reports that step name of phase begins and returns Err: a caller stops on an error.
func (m *Monitor) Begin(phase, name string) error { return m.begin(Step{Phase: phase, Name: name}) }

// Pass is Begin for a step that reads the dump file from end to end (Step.Pass).
func (m *Monitor) Pass(phase, name string) error {
	return m.begin(Step{Phase: phase, Name: name, Pass: true})
}

func (m *Monitor) begin(s Step) error {
	if m == nil {
		return nil
	}
	if m.l != nil {
		m.mu.Lock()
		m.l.Begin(s)
		m.mu.Unlock()
	}
	return m.Err()
}

// Read reports how far the pass under way has got (see Listener.Read). Workers may call it at
// once: the Listener is told one at a time.
func (m *Monitor) Read(done, total int64) {
	if m == nil || m.l == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.l.Read(done, total)
}

// Warn passes a warning on to the Listener.
func (m *Monitor) Warn(msg string) {
	if m == nil || m.l == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.l.Warn(msg)
}

// ErrCancelled is the error an analysis stops with when it is cancelled.
var ErrCancelled = errors.New("cancelled")

// Err returns ErrCancelled (wrapping why, where the context says) once the analysis is
// cancelled, else nil. It costs a channel poll: callers ask it between units of work of a
// millisecond or more.
func (m *Monitor) Err() error {
	if m == nil {
		return nil
	}
	select {
	case <-m.ctx.Done():
		if cause := context.Cause(m.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return errors.Join(ErrCancelled, cause)
		}
		return ErrCancelled
	default:
		return nil
	}
}
