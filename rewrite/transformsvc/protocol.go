// Package transformsvc is the transform service the Java agent talks to: the agent sends each
// class it sees over a pipe, the service rewrites it with a pass and answers with the new bytes,
// the site-table lines the rewrite added and its warnings. Requests are served concurrently and
// answered out of order, matched by ID, so one slow class never holds up the others. With a
// cache (cache.go), a class rewritten in an earlier run under the same options is answered
// from disk, with this run's site IDs.
//
// Every frame is a big-endian uint32 length followed by that many bytes:
//
//	request:  u32 id | u16 len, class name (internal, UTF-8) | u16 len, loader | u32 len, profile | class file
//	response: u32 id | u8 status | u32 len, class file | u32 len, table lines | u32 len, messages
//
// The profile is empty but when the agent re-instruments a loaded class from what its chord
// counters counted (--adapt): then it holds the class's edge profile as snapshot "edges" lines
// (docs/formats.md), and the service plans the class's path counters from it (adapt.go).
//
// A status with StatusCached set was answered from the cache of transformed classes (the
// agent counts those apart); the rest of the byte is the status as above.
//
// The first frame the service writes is a hello (id 0, StatusHello) whose table lines name the
// accounts, so the agent knows the service is up before it installs its transformer. Table lines
// are in the table format of docs/formats.md without the version line; messages are lines
// "warning: ...", "skipped: METHOD: REASON", "fallback: METHOD: REASON" (rewritten, but with a
// fallback: transform.SkipCode.Fallback) or, for StatusFailed, the error.
//
// When the agent may read the cache itself (agentread.go), the hello's messages are the lines
// "cache\tDIR\tPREFIX" (PREFIX in hex: what every key's hash starts with) and
// "lease\tFIRST\tCOUNT" (site IDs the agent names itself). A request with an empty class name
// is a control request, its profile field what it asks: ControlLease (answered with a lease
// line in the messages) or ControlNames.
package transformsvc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Response statuses.
const (
	StatusUnchanged = 0 // the class loads as it was
	StatusChanged   = 1 // the class file in the response replaces it
	StatusFailed    = 2 // the class could not be processed; it loads as it was
	StatusHello     = 3 // first frame: the service is ready; table lines name the accounts

	StatusCached = 0x80 // flag: the answer came from the cache of transformed classes
)

// MaxFrame bounds a frame. The largest class files are a few MiB; anything near this is a
// corrupted length, and refusing it keeps a broken peer from making us allocate gigabytes.
const MaxFrame = 256 << 20

// Request is one class to transform.
type Request struct {
	ID     uint32
	Name   string // internal class name, e.g. "com/acme/Widget"
	Loader string // the defining loader as the agent names it, for messages
	// Profile, when not empty, asks for the class to be re-instrumented from these edge
	// profile lines (--adapt).
	Profile string
	Class   []byte
}

// Response answers the request with the same ID.
type Response struct {
	ID       uint32
	Status   byte
	Cached   bool   // answered from the cache (sent as StatusCached in the status byte)
	Class    []byte // StatusChanged only
	Table    string // site (and, in the hello, account) lines, each ending in "\n"
	Messages string
}

// ReadRequest reads one request frame. It returns io.EOF only at a clean end between frames.
func ReadRequest(r io.Reader) (*Request, error) {
	body, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	d := decoder{b: body}
	req := &Request{ID: d.u32()}
	req.Name = string(d.bytes(int(d.u16())))
	req.Loader = string(d.bytes(int(d.u16())))
	req.Profile = string(d.bytes(int(d.u32())))
	if d.err != nil {
		return nil, fmt.Errorf("request %d: %w", req.ID, d.err)
	}
	req.Class = d.b[d.off:]
	return req, nil
}

// WriteRequest writes one request frame (the agent's side, used by tests and tools).
func WriteRequest(w io.Writer, req *Request) error {
	if len(req.Name) > 0xFFFF || len(req.Loader) > 0xFFFF {
		return fmt.Errorf("request %d (%s): name or loader longer than 65535 bytes", req.ID, req.Name)
	}
	n := 4 + 2 + len(req.Name) + 2 + len(req.Loader) + 4 + len(req.Profile) + len(req.Class)
	b := make([]byte, 0, 4+n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, req.ID)
	b = binary.BigEndian.AppendUint16(b, uint16(len(req.Name)))
	b = append(b, req.Name...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(req.Loader)))
	b = append(b, req.Loader...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(req.Profile)))
	b = append(b, req.Profile...)
	b = append(b, req.Class...)
	_, err := w.Write(b)
	return err
}

// WriteResponse writes one response frame in a single Write, so concurrent writers that
// serialise their calls never interleave frames.
func WriteResponse(w io.Writer, resp *Response) error {
	n := 4 + 1 + 4 + len(resp.Class) + 4 + len(resp.Table) + 4 + len(resp.Messages)
	if n > MaxFrame {
		return fmt.Errorf("response %d: %d bytes exceeds the frame limit", resp.ID, n)
	}
	b := make([]byte, 0, 4+n)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, resp.ID)
	status := resp.Status
	if resp.Cached {
		status |= StatusCached
	}
	b = append(b, status)
	b = binary.BigEndian.AppendUint32(b, uint32(len(resp.Class)))
	b = append(b, resp.Class...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(resp.Table)))
	b = append(b, resp.Table...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(resp.Messages)))
	b = append(b, resp.Messages...)
	_, err := w.Write(b)
	return err
}

// ReadResponse reads one response frame (the agent's side, used by tests and tools).
func ReadResponse(r io.Reader) (*Response, error) {
	body, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	d := decoder{b: body}
	resp := &Response{ID: d.u32(), Status: d.u8()}
	resp.Cached = resp.Status&StatusCached != 0
	resp.Status &^= StatusCached
	resp.Class = d.bytes(int(d.u32()))
	resp.Table = string(d.bytes(int(d.u32())))
	resp.Messages = string(d.bytes(int(d.u32())))
	if d.err == nil && d.off != len(d.b) {
		d.err = fmt.Errorf("%d bytes after the messages", len(d.b)-d.off)
	}
	if d.err != nil {
		return nil, fmt.Errorf("response %d: %w", resp.ID, d.err)
	}
	return resp, nil
}

func readFrame(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, fmt.Errorf("frame length cut short: %w", err)
		}
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("frame of %d bytes exceeds the limit of %d (corrupted stream?)", n, MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("frame of %d bytes cut short: %w", n, err)
	}
	return body, nil
}

// decoder reads fields from a frame body, remembering the first error with its offset.
type decoder struct {
	b   []byte
	off int
	err error
}

func (d *decoder) need(n int) bool {
	if d.err != nil {
		return false
	}
	if n < 0 || d.off+n > len(d.b) {
		d.err = fmt.Errorf("frame of %d bytes ends at offset %d, %d more bytes expected", len(d.b), d.off, n)
		return false
	}
	return true
}

func (d *decoder) u8() byte {
	if !d.need(1) {
		return 0
	}
	v := d.b[d.off]
	d.off++
	return v
}

func (d *decoder) u16() uint16 {
	if !d.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(d.b[d.off:])
	d.off += 2
	return v
}

func (d *decoder) u32() uint32 {
	if !d.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(d.b[d.off:])
	d.off += 4
	return v
}

func (d *decoder) bytes(n int) []byte {
	if !d.need(n) {
		return nil
	}
	v := d.b[d.off : d.off+n]
	d.off += n
	return v
}
