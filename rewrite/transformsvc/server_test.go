package transformsvc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// sitePass adds one site per byte of the class and answers with the class reversed; a class
// named "boom" fails, "panic" panics, "same" is unchanged. While a request for "slow" is being
// handled, others must still be answered.
func sitePass(table *accounts.Table, release chan struct{}) transform.Class {
	return transform.Func(func(name string, data []byte) (transform.Result, error) {
		switch name {
		case "boom":
			return transform.Result{}, errors.New("bad constant pool at offset 10")
		case "panic":
			panic("pass bug")
		case "same":
			return transform.Result{Skipped: []transform.Skip{{Method: "m()V", Reason: "too big"}}}, nil
		case "slow":
			<-release
		}
		for range data {
			table.AddSite(accounts.Site{Kind: accounts.KindObject, Type: "T\tab", Method: name + ".m()V", Offset: 1, Line: -1})
		}
		out := make([]byte, len(data))
		for i, b := range data {
			out[len(data)-1-i] = b
		}
		return transform.Result{Data: out}, nil
	})
}

// pipeServer runs a Server over pipes and returns the agent's ends.
func pipeServer(t *testing.T, pass func(*accounts.Table) transform.Class) (io.WriteCloser, io.Reader, chan error) {
	t.Helper()
	w, r, done, _ := pipeServerWith(t, 0, pass)
	return w, r, done
}

// pipeServerWith is pipeServer for a Server that reserves hookSites sites for the Object.<init>
// hook; it also returns the hello.
func pipeServerWith(t *testing.T, hookSites int, pass func(*accounts.Table) transform.Class) (io.WriteCloser, io.Reader, chan error, *Response) {
	t.Helper()
	set, err := accounts.Parse("a.b")
	if err != nil {
		t.Fatal(err)
	}
	table := accounts.NewTable(set)
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := (&Server{Pass: pass(table), Table: table, Workers: 4, HookSites: hookSites}).Serve(reqR, respW)
		respW.Close()
		done <- err
	}()
	hello, err := ReadResponse(respR)
	if err != nil {
		t.Fatal(err)
	}
	if hello.ID != 0 || hello.Status != StatusHello || !strings.Contains(hello.Table, "account\t1\ta.b\n") {
		t.Fatalf("hello %+v", hello)
	}
	return reqW, respR, done, hello
}

func TestServeConcurrentOutOfOrder(t *testing.T) {
	release := make(chan struct{})
	w, r, done := pipeServer(t, func(tb *accounts.Table) transform.Class { return sitePass(tb, release) })
	send := func(id uint32, name string, data []byte) {
		if err := WriteRequest(w, &Request{ID: id, Name: name, Loader: "app", Class: data}); err != nil {
			t.Error(err)
		}
	}
	// The agent writes from class-loading threads and reads on its own thread: so do we.
	go func() {
		send(1, "slow", []byte{1, 2})
		for i := uint32(2); i <= 20; i++ {
			send(i, fmt.Sprintf("c%d", i), []byte{byte(i), 0, 7})
		}
		send(21, "boom", []byte{1})
		send(22, "panic", []byte{1})
		send(23, "same", []byte{1})
	}()
	seen := map[uint32]*Response{}
	defined := map[string]bool{}
	for len(seen) < 22 { // all but the slow one come first
		resp, err := ReadResponse(r)
		if err != nil {
			t.Fatal(err)
		}
		seen[resp.ID] = resp
		for _, l := range strings.Split(strings.TrimSpace(resp.Table), "\n") {
			if l == "" {
				continue
			}
			id := strings.Split(l, "\t")[1]
			if defined[id] {
				t.Errorf("site %s sent twice", id)
			}
			defined[id] = true
		}
	}
	if _, ok := seen[1]; ok {
		t.Fatal("the slow request was answered before it was released")
	}
	close(release)
	last, err := ReadResponse(r)
	if err != nil || last.ID != 1 || last.Status != StatusChanged || !bytes.Equal(last.Class, []byte{2, 1}) {
		t.Fatalf("slow answer %+v, %v", last, err)
	}
	for _, l := range strings.Split(strings.TrimSpace(last.Table), "\n") {
		if l != "" {
			defined[strings.Split(l, "\t")[1]] = true
		}
	}
	for i := uint32(2); i <= 20; i++ {
		if got := seen[i]; got.Status != StatusChanged || !bytes.Equal(got.Class, []byte{7, 0, byte(i)}) {
			t.Errorf("request %d: %+v", i, got)
		}
	}
	// 19 classes of 3 bytes and the slow one of 2: 59 sites, each sent once, IDs 1..59.
	if len(defined) != 59 {
		t.Errorf("%d sites defined, want 59", len(defined))
	}
	for id := 1; id <= 59; id++ {
		if !defined[fmt.Sprint(id)] {
			t.Errorf("site %d never sent", id)
		}
	}
	if b := seen[21]; b.Status != StatusFailed || !strings.Contains(b.Messages, "boom (loader app): bad constant pool at offset 10") {
		t.Errorf("failing pass: %+v", b)
	}
	if p := seen[22]; p.Status != StatusFailed || !strings.Contains(p.Messages, "internal error: pass bug") {
		t.Errorf("panicking pass: %+v", p)
	}
	if s := seen[23]; s.Status != StatusUnchanged || s.Messages != "skipped: same.m()V: too big\n" {
		t.Errorf("unchanged class: %+v", s)
	}
	if !strings.Contains(seen[2].Table+seen[3].Table+last.Table, "T ab") {
		t.Errorf("tabs in a field must not break the line format")
	}
	w.Close()
	if err := <-done; err != nil {
		t.Errorf("clean end of input: %v", err)
	}
}

func TestServeCutShortRequest(t *testing.T) {
	w, _, done := pipeServer(t, func(tb *accounts.Table) transform.Class { return sitePass(tb, nil) })
	go func() {
		w.Write([]byte{0, 0, 0, 50, 0, 0})
		w.Close()
	}()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "cut short") {
		t.Errorf("error %v, want a cut-short frame", err)
	}
}

func TestReadRequestRejectsHugeFrame(t *testing.T) {
	_, err := ReadRequest(bytes.NewReader([]byte{0xFF, 0xFF, 0xFF, 0xFF}))
	if err == nil || !strings.Contains(err.Error(), "exceeds the limit") {
		t.Errorf("error %v", err)
	}
}

func TestRequestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := &Request{ID: 7, Name: "a/B", Loader: "L@1", Class: []byte{0xCA, 0xFE}}
	if err := WriteRequest(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadRequest(&buf)
	if err != nil || out.ID != 7 || out.Name != "a/B" || out.Loader != "L@1" || !bytes.Equal(out.Class, in.Class) {
		t.Fatalf("%+v %v", out, err)
	}
	if _, err := ReadRequest(&buf); err != io.EOF {
		t.Errorf("clean end: %v", err)
	}
	if _, err := ReadRequest(bytes.NewReader([]byte{0, 0, 0, 5, 0, 0, 0, 1, 0})); err == nil || !strings.Contains(err.Error(), "request 1") {
		t.Errorf("truncated fields: %v", err)
	}
}

func FuzzReadRequest(f *testing.F) {
	var buf bytes.Buffer
	WriteRequest(&buf, &Request{ID: 1, Name: "x", Loader: "y", Class: []byte{1, 2, 3}})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 1, 9})
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := ReadRequest(bytes.NewReader(data))
		if err != nil {
			return
		}
		var again bytes.Buffer
		if err := WriteRequest(&again, req); err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(data, again.Bytes()) {
			t.Errorf("re-encoding differs")
		}
	})
}

// A class rewritten before it loaded is skipped by the pass; the agent is told once, unasked,
// that such classes count with IDs of their own table, and every one is listed as skipped.
func TestServeWarnsOnceOfRewrittenClasses(t *testing.T) {
	s := &Server{Table: accounts.NewTable(nil), Pass: transform.Func(func(name string, data []byte) (transform.Result, error) {
		return transform.Result{Skipped: []transform.Skip{{Reason: transform.RewrittenBefore + " (it calls heapledger/rt/Acct)"}}}, nil
	})}
	for id := uint32(1); id <= 3; id++ {
		resp := s.handle(&Request{ID: id, Name: fmt.Sprintf("app/C%d", id), Loader: "app", Class: []byte{1}})
		warned := strings.Contains(resp.Messages, "warning: app/C1 (loader app): "+transform.RewrittenBefore+" before it loaded")
		if resp.Status != StatusUnchanged || warned != (id == 1) || strings.Count(resp.Messages, "warning: ") != map[bool]int{true: 1}[id == 1] {
			t.Errorf("request %d: %+v", id, resp)
		}
		if !strings.Contains(resp.Messages, fmt.Sprintf("skipped: app/C%d.(class): %s", id, transform.RewrittenBefore)) {
			t.Errorf("request %d does not list its class as skipped: %q", id, resp.Messages)
		}
	}
}

// Sites are named as classes finish, and a class's reserved IDs it did not use are never named:
// every site named is sent once, holes or no holes, whichever class names it first.
func TestNewSitesAcrossHoles(t *testing.T) {
	tb := accounts.NewTable(nil)
	s := &Server{Table: tb}
	first, _ := tb.Reserve(4)  // class A: 4 candidates
	second, _ := tb.Reserve(3) // class B
	tb.Name(second, accounts.Site{Kind: "object", Type: "B", Method: "b.B.m()V"})
	lines := s.newSites()
	tb.Name(first, accounts.Site{Kind: "object", Type: "A", Method: "a.A.m()V"})
	tb.Name(first+2, accounts.Site{Kind: "array", Type: "int[]", Method: "a.A.m()V"})
	lines += s.newSites()
	lines += s.newSites() // nothing new
	for _, id := range []int{second, first, first + 2} {
		if strings.Count(lines, fmt.Sprintf("site\t%d\t", id)) != 1 {
			t.Errorf("site %d not sent exactly once:\n%s", id, lines)
		}
	}
	if strings.Count(lines, "site\t") != 3 {
		t.Errorf("want 3 site lines:\n%s", lines)
	}
}
