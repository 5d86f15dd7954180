package transform

import (
	"math/rand"
	"sync"
	"testing"
)

// TestTurnsKeepTheirOrder: whatever order turns finish in, and whether or not they take
// anything, what they take in their turn comes out in line order.
func TestTurnsKeepTheirOrder(t *testing.T) {
	for round := 0; round < 50; round++ {
		const n = 200
		ts := Turns(n)
		var mu sync.Mutex
		var got []int
		var wg sync.WaitGroup
		for _, i := range rand.Perm(n) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer ts[i].Done() // twice for those below: must do nothing more
				if i%3 == 0 {
					ts[i].Done() // takes nothing: done at once, before those in front of it
					return
				}
				ts[i].Wait()
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
				ts[i].Done()
			}()
		}
		wg.Wait()
		for k := 1; k < len(got); k++ {
			if got[k] < got[k-1] {
				t.Fatalf("round %d: %d took its turn after %d", round, got[k-1], got[k])
			}
		}
		select {
		case <-ts[n-1].done:
		default:
			t.Fatalf("round %d: the last turn never finished", round)
		}
	}
}

// TestNilTurn: callers without an order pass nil, which neither waits nor fails.
func TestNilTurn(t *testing.T) {
	var tn *Turn
	tn.Wait()
	tn.Done()
}
