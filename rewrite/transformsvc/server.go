package transformsvc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/heapledger/heapledger/rewrite/accounts"
	"github.com/heapledger/heapledger/rewrite/transform"
)

// Server rewrites the classes of one JVM. It holds the JVM's single site table, so site IDs are
// unique across every class and every class loader the JVM has.
type Server struct {
	Pass  transform.Class
	Table *accounts.Table
	// Workers bounds the classes rewritten at once; 0 means the number of CPUs.
	Workers int

	mu   sync.Mutex // guards sent, and orders table lines before the responses that need them
	sent int        // highest site ID already sent to the agent
}

// Serve answers requests from r on w until r ends, then waits for the requests in flight.
// A clean end of r (the JVM exited, closing the pipe) returns nil.
func (s *Server) Serve(r io.Reader, w io.Writer) error {
	if s.Pass == nil || s.Table == nil {
		return errors.New("transform service needs a pass and its table")
	}
	workers := s.Workers
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	var wmu sync.Mutex
	var werr error
	bw := bufio.NewWriterSize(w, 64<<10)
	send := func(resp *Response) {
		wmu.Lock()
		defer wmu.Unlock()
		if werr != nil {
			return
		}
		if werr = WriteResponse(bw, resp); werr == nil {
			werr = bw.Flush()
		}
	}
	var hello bytes.Buffer
	if err := s.Table.Write(&hello); err != nil {
		return err
	}
	_, accountLines, _ := strings.Cut(hello.String(), "\n") // drop the version line
	send(&Response{ID: 0, Status: StatusHello, Table: accountLines})

	br := bufio.NewReaderSize(r, 64<<10)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	var rerr error
	for {
		req, err := ReadRequest(br)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				rerr = err
			}
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			send(s.handle(req))
		}()
	}
	wg.Wait()
	if rerr != nil {
		return fmt.Errorf("reading requests: %w", rerr)
	}
	if werr != nil {
		return fmt.Errorf("writing responses: %w", werr)
	}
	return nil
}

// handle rewrites one class. A panic in a pass is a bug, but it must cost one class, not the
// whole JVM's instrumentation: it becomes a failure answer.
func (s *Server) handle(req *Request) (resp *Response) {
	resp = &Response{ID: req.ID}
	who := req.Name
	if req.Loader != "" {
		who += " (loader " + req.Loader + ")"
	}
	defer func() {
		if p := recover(); p != nil {
			resp = &Response{ID: req.ID, Status: StatusFailed, Messages: fmt.Sprintf("%s: internal error: %v", who, p)}
		}
	}()
	res, err := s.Pass.TransformClass(req.Name, req.Class)
	if err != nil {
		resp.Status = StatusFailed
		resp.Messages = fmt.Sprintf("%s: %v", who, err)
		return resp
	}
	var msgs strings.Builder
	for _, w := range res.Warnings {
		fmt.Fprintf(&msgs, "warning: %s: %s\n", who, oneLine(w))
	}
	for _, sk := range res.Skipped {
		m := sk.Method
		if m == "" {
			m = "(class)"
		}
		fmt.Fprintf(&msgs, "skipped: %s.%s: %s\n", req.Name, oneLine(m), oneLine(sk.Reason))
	}
	resp.Messages = msgs.String()
	if res.Changed() {
		resp.Status = StatusChanged
		resp.Class = res.Data
	}
	resp.Table = s.newSites()
	return resp
}

// newSites returns the table lines of the sites not yet sent. A response may carry sites of
// another class still being rewritten; that only names them early. Every site of this class is
// in the table before this call, so it is sent with this response or an earlier one, never
// after the class is defined.
func (s *Server) newSites() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for id := s.sent + 1; ; id++ {
		site, ok := s.Table.Site(id)
		if !ok {
			break
		}
		fmt.Fprintf(&b, "site\t%d\t%s\t%s\t%s\t%d\t%d\n", id, site.Kind, oneLine(site.Type), oneLine(site.Method), site.Offset, site.Line)
		s.sent = id
	}
	return b.String()
}

var flatten = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ")

// oneLine keeps a field from breaking the line-and-tab formats.
func oneLine(s string) string { return flatten.Replace(s) }
