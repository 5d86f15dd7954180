package passes

import (
	"bytes"
	"sync"
	"testing"
)

// One pass value serves every goroutine of the jar pipeline: rewriting the same classes from
// several goroutines at once must give exactly what one goroutine gives. (go test -race also
// checks the pass for data races here.)
func TestProbeSafeForConcurrentUse(t *testing.T) {
	classes := jarClasses(t, "commons-lang3.jar")
	p := Probe()
	want := make([][]byte, len(classes))
	for i, c := range classes {
		res, err := p.TransformClass(c.name, c.data)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = res.Data
	}
	const workers = 4
	var wg sync.WaitGroup
	errs := make(chan string, workers*len(classes))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for k := range classes {
				i := (k + w*len(classes)/workers) % len(classes) // each worker starts elsewhere
				res, err := p.TransformClass(classes[i].name, classes[i].data)
				if err != nil {
					errs <- classes[i].name + ": " + err.Error()
				} else if !bytes.Equal(res.Data, want[i]) {
					errs <- classes[i].name + ": differs from the sequential result"
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
