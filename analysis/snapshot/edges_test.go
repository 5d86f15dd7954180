package snapshot

import (
	"reflect"
	"strings"
	"testing"
)

// A version 5 snapshot of a profiling run (--counters edges), in both encodings.
const sampleEdges = "# heapledger snapshot 5\nreason\texit\nprogram\tP\n" +
	"alloc\t0\t7\t0\t3\t0\t48\t-\t-\t-\t-\t-\t-\t-\n" +
	"edges\ta.B\tm([I)I\tc576c7c5d08e7ead\t18>43=19672 35>43=0 49>-1=2\n" +
	"edges\ta.B$C\tn()V\t0123456789abcdef\t-1>0=1\nend\n"

const sampleEdgesJSON = `{"format":"heapledger-snapshot","version":5,"reason":"exit","program":"P","accounts":{},"sites":{},
"allocations":[{"account":0,"site":7,"part":0,"count":3,"elements":0,"bytes":48}],
"edges":[{"class":"a.B","method":"m([I)I","hash":"c576c7c5d08e7ead","edges":[[18,43,19672],[35,43,0],[49,-1,2]]},
{"class":"a.B$C","method":"n()V","hash":"0123456789abcdef","edges":[[-1,0,1]]}]}`

func TestEdgesRead(t *testing.T) {
	want := []MethodEdges{
		{Class: "a.B", Method: "m([I)I", Hash: "c576c7c5d08e7ead", Edges: []EdgeCount{{18, 43, 19672}, {35, 43, 0}, {49, -1, 2}}},
		{Class: "a.B$C", Method: "n()V", Hash: "0123456789abcdef", Edges: []EdgeCount{{-1, 0, 1}}},
	}
	for name, src := range map[string]string{"text": sampleEdges, "json": sampleEdgesJSON} {
		s, err := Read(strings.NewReader(src))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(s.Edges, want) {
			t.Errorf("%s: edges %+v, want %+v", name, s.Edges, want)
		}
		if len(s.Rows) != 1 || s.Header["edges"] != "" {
			t.Errorf("%s: rows %+v, header %v", name, s.Rows, s.Header)
		}
	}
}

func TestEdgesRefused(t *testing.T) {
	for _, line := range []string{
		"edges\ta.B\tm()V\th\t18>43",
		"edges\ta.B\tm()V\th\t18-43=1",
		"edges\ta.B\tm()V\th\t18>43=-1",
		"edges\ta.B\tm()V\th",
		"edges\ta.B\tm()V\th\t",
	} {
		_, err := Read(strings.NewReader("# heapledger snapshot 5\n" + line + "\nend\n"))
		if err == nil || !strings.Contains(err.Error(), "line 2: edge") {
			t.Errorf("%q: %v", line, err)
		}
	}
	if _, err := Read(strings.NewReader("# heapledger snapshot 6\nend\n")); err == nil || !strings.Contains(err.Error(), "versions 1 to 5") {
		t.Errorf("version 6: %v", err)
	}
}
