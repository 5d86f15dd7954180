package transform

import "sync"

// Turn is one class's place in a line of classes rewritten in parallel. A pass whose output
// depends on the order it sees classes in (the count pass numbers allocation sites) waits for
// its turn before it takes anything that later classes take too, and says it is done right
// after: the rest of the work of every class still runs in parallel, and the output is the same
// whatever the number of workers and however they are scheduled.
//
// A nil *Turn never waits: callers without an order (the agent's transform service) pass nil.
type Turn struct {
	line *line
	prev *Turn // nil for the first
	next *Turn
	self bool          // Done was called
	done chan struct{} // closed when this turn and every earlier one are done
}

// line is what the turns of one run share.
type line struct{ sync.Mutex }

// Turns returns n turns in line: turn i waits for turns 0 to i-1.
func Turns(n int) []*Turn {
	ts := make([]*Turn, n)
	l := &line{}
	for i := range ts {
		ts[i] = &Turn{line: l, done: make(chan struct{})}
		if i > 0 {
			ts[i].prev, ts[i-1].next = ts[i-1], ts[i]
		}
	}
	return ts
}

// Wait blocks until every earlier turn is done.
func (t *Turn) Wait() {
	if t != nil && t.prev != nil {
		<-t.prev.done
	}
}

// Done says this turn is over; later turns go once every earlier one is over too. It never
// blocks: a class with nothing to number finishes while those before it still work. Calling it
// again does nothing, so a caller may make sure with a deferred Done that a pass which returned
// early (an error, a panic, a class left alone) never holds up the classes after it.
func (t *Turn) Done() {
	if t == nil {
		return
	}
	t.line.Lock()
	defer t.line.Unlock()
	t.self = true
	for x := t; x != nil && x.self && !closed(x.done) && (x.prev == nil || closed(x.prev.done)); x = x.next {
		close(x.done)
	}
}

func closed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// Ordered is implemented by passes whose output depends on the order classes are seen in. The
// pass calls turn.Wait before it takes what is numbered in order, and turn.Done after.
type Ordered interface {
	TransformClassInTurn(name string, data []byte, turn *Turn) (Result, error)
}

// InTurn runs pass on one class in its turn: an Ordered pass gets the turn, any other pass runs
// as it is. The turn is done when InTurn returns, whatever happened. Wrappers of a pass call it,
// so that the pass they wrap keeps its order.
func InTurn(pass Class, name string, data []byte, turn *Turn) (Result, error) {
	defer turn.Done()
	if o, ok := pass.(Ordered); ok {
		return o.TransformClassInTurn(name, data, turn)
	}
	return pass.TransformClass(name, data)
}
