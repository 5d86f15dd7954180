package memory

// Stack is a last-in first-out stack kept in chunks of a fixed size. A slice grown by append
// copies itself into an array twice as large each time it fills, and leaves the old one to the
// collector: a walk down a dominator tree a hundred thousand objects deep so made twice its
// stack's final size in garbage, which either stayed resident until the next collection (raising
// the peak) or made the collector run that much more often. Chunks are never copied; one chunk
// emptied by Pop is kept for the next Push to cross the boundary again.
//
// The zero Stack is empty and ready to use. A Stack is not safe for concurrent use.
type Stack[T any] struct {
	top   []T   // the chunk being filled: its length is the elements in it
	below [][]T // full chunks under it, the bottom first
	spare []T   // an empty chunk, or nil
}

// StackChunk is the number of elements in each of a Stack's chunks.
const StackChunk = 8192

// Push puts x on top of the stack.
func (s *Stack[T]) Push(x T) {
	if len(s.top) == cap(s.top) {
		s.grow()
	}
	s.top = append(s.top, x)
}

func (s *Stack[T]) grow() {
	if cap(s.top) > 0 {
		s.below = append(s.below, s.top)
	}
	if s.spare != nil {
		s.top, s.spare = s.spare, nil
	} else {
		s.top = make([]T, 0, StackChunk)
	}
}

// Pop removes the element on top of the stack and returns it. The stack must not be empty.
func (s *Stack[T]) Pop() T {
	if len(s.top) == 0 {
		s.shrink()
	}
	n := len(s.top) - 1
	x := s.top[n]
	s.top = s.top[:n]
	return x
}

// Top returns the element on top of the stack, which Pop would return, for the caller to change
// in place until the next Push or Pop. The stack must not be empty.
func (s *Stack[T]) Top() *T {
	if len(s.top) == 0 {
		s.shrink()
	}
	return &s.top[len(s.top)-1]
}

func (s *Stack[T]) shrink() {
	if len(s.below) == 0 {
		panic("memory: Pop or Top on an empty Stack")
	}
	s.spare = s.top[:0]
	s.top = s.below[len(s.below)-1]
	s.below[len(s.below)-1] = nil
	s.below = s.below[:len(s.below)-1]
}

// Len returns the number of elements on the stack.
func (s *Stack[T]) Len() int { return len(s.below)*StackChunk + len(s.top) }

// Empty reports whether the stack holds no element.
func (s *Stack[T]) Empty() bool { return len(s.top) == 0 && len(s.below) == 0 }

// Reset empties the stack, keeping one chunk for reuse.
func (s *Stack[T]) Reset() {
	if len(s.below) > 0 {
		s.top = s.below[0]
	}
	clear(s.below)
	s.below = s.below[:0]
	s.top = s.top[:0]
}
