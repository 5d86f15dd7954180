package transformsvc

import (
	"encoding/hex"
	"fmt"
	"strings"
)

// Cached classes the agent reads itself. A second run of a program asks the service for
// nothing it has answered before: the agent computes each class's cache key, reads and checks
// the entry (internal/filecache's format), and replays it as replay does, with site IDs from
// a block the service reserved for it (a lease). Each class loading then costs a file read
// instead of a round trip to this process. The steps:
//
//  1. The hello offers the cache (offerCache): its directory, the salt's ID that ends every
//     key (cacheKey) and, with a class path, the one that ends the keys of the application
//     class loader's classes (they are rewritten by another pass), and a first lease. Not
//     with --adapt, whose re-instrumentation needs the sites of every class's first version
//     (versions), which only the service keeps.
//  2. The agent answers a class from an entry made from that very class (its name and bytes,
//     cachedClass.matches) whose sites fit its lease and which carries no skipped methods or
//     warnings (their messages are the service's to word); anything else, a miss or a
//     damaged entry included, goes to the service as before.
//  3. A lease used up is renewed by a control request (control); a class that does not fit
//     goes to the service meanwhile. IDs a lease leaves unused are never named, as IDs a class
//     reserved and did not use (newSites).
//  4. At exit the agent sends the names of the classes it answered (control; the request is
//     sent when there are none too), so that what the service says of patterns no loaded
//     class matched stays true. Without it (a JVM killed before its exit hooks ran) the
//     service does not know every class loaded, and says nothing of patterns (ClassesKnown).

// LeaseIDs is the size of a block of site IDs reserved for the agent. A lease holds the IDs of
// a few dozen classes; the directory of the runtime's counter pages (rt.Acct) grows with the
// span of IDs in use, so leases are kept small and renewed, not made large up front.
const LeaseIDs = 4096

// Control requests have an empty class name; the profile field says what they ask.
const (
	ControlLease = "lease"   // reserve LeaseIDs IDs; the answer's messages hold a lease line
	ControlNames = "names\n" // followed by class names, one per line: classes the agent answered
)

// offerCache is the hello's messages: the cache the agent may read itself and its first
// lease; empty when it may not.
func (s *Server) offerCache() (string, error) {
	if s.Cache == nil || s.Adapt != nil {
		return "", nil
	}
	lease, err := s.lease()
	if err != nil {
		return "", err
	}
	// Tabs and newlines would break the line: such a directory is not offered.
	if strings.ContainsAny(s.Cache.Dir(), "\t\n\r") {
		return "", nil
	}
	line := "cache\t" + s.Cache.Dir() + "\t" + hex.EncodeToString(s.salt[:])
	if s.pathSalt != nil {
		line += "\t" + hex.EncodeToString(s.pathSalt[:])
	}
	return line + "\n" + lease, nil
}

// lease reserves a block of IDs and returns its line, "lease\tFIRST\tCOUNT\n".
func (s *Server) lease() (string, error) {
	first, err := s.Table.Reserve(LeaseIDs)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("lease\t%d\t%d\n", first, LeaseIDs), nil
}

// control answers a control request (an empty class name).
func (s *Server) control(req *Request) *Response {
	resp := &Response{ID: req.ID, Status: StatusUnchanged}
	switch {
	case req.Profile == ControlLease && s.Cache != nil && s.Adapt == nil:
		lease, err := s.lease()
		if err != nil {
			resp.Status, resp.Messages = StatusFailed, "lease: "+err.Error()
			return resp
		}
		resp.Messages = lease
	case strings.HasPrefix(req.Profile, ControlNames):
		var names []string
		for _, n := range strings.Split(req.Profile[len(ControlNames):], "\n") {
			if n != "" {
				names = append(names, n)
			}
		}
		s.namesMu.Lock()
		s.names = append(s.names, names...)
		s.namesMu.Unlock()
		s.namesTold.Store(true)
	default:
		resp.Status, resp.Messages = StatusFailed, fmt.Sprintf("unknown control request %q", firstLine(req.Profile))
	}
	return resp
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
