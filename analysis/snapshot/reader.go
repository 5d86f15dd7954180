package snapshot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ReadFile reads a snapshot in either encoding, chosen by its first byte.
func ReadFile(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, dirError(path)
	}
	s, err := Read(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s.Path = path
	return s, nil
}

// Read reads a snapshot from r.
func Read(r io.Reader) (*Snapshot, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	first, err := br.Peek(1)
	if err == io.EOF {
		return nil, fmt.Errorf("empty snapshot")
	}
	if err != nil {
		return nil, err
	}
	if first[0] == '{' {
		return readJSON(br)
	}
	return readText(br)
}

// dirError says that path is a directory rather than a snapshot, and names the newest snapshot
// in it: which one the user meant, the directory cannot say (it may hold several programs').
func dirError(dir string) error {
	msg := fmt.Sprintf("%s is a directory; give a snapshot file (heapledger-*.snapshot or heapledger-*.json)", dir)
	var newest string
	var newestTime time.Time
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "heapledger-") || !(strings.HasSuffix(name, ".snapshot") || strings.HasSuffix(name, ".json")) {
			continue
		}
		if st, err := e.Info(); err == nil && st.Mode().IsRegular() && st.ModTime().After(newestTime) {
			newest, newestTime = filepath.Join(dir, name), st.ModTime()
		}
	}
	if newest != "" {
		msg += ", such as " + newest + ", the newest there"
	}
	return errors.New(msg)
}

func newSnapshot() *Snapshot {
	return &Snapshot{Header: Header{}, Accounts: map[int]string{}, Sites: map[int]Site{}, Methods: map[int]Site{}}
}

func readText(r *bufio.Reader) (*Snapshot, error) {
	s := newSnapshot()
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	line := 0
	ended := false
	for sc.Scan() {
		line++
		text := sc.Text()
		if line == 1 {
			const magic = "# heapledger snapshot "
			if !strings.HasPrefix(text, magic) {
				return nil, fmt.Errorf("line 1: not a heapledger snapshot (want %q)", magic+"1")
			}
			v, err := strconv.Atoi(strings.TrimPrefix(text, magic))
			if err != nil || v < 1 || v > MaxVersion {
				return nil, fmt.Errorf("line 1: snapshot format version %q is not supported (this heapledger reads versions 1 to %d)", strings.TrimPrefix(text, magic), MaxVersion)
			}
			s.Version = v
			continue
		}
		if text == "" || text[0] == '#' {
			continue
		}
		f := strings.Split(text, "\t")
		var err error
		switch f[0] {
		case "account":
			if len(f) < 3 {
				return nil, fmt.Errorf("line %d: account needs ID and name", line)
			}
			var id int
			if id, err = strconv.Atoi(f[1]); err == nil {
				s.Accounts[id] = f[2]
			}
		case "site":
			var site Site
			if site, err = parseSite(f[1:]); err == nil {
				s.addSite(site)
			}
		case "edges":
			err = s.addEdges(f[1:])
		case "node":
			err = s.addNode(f[1:])
		case "calloc":
			err = s.addContextRow(f[1:])
		case "alloc":
			want := 7
			switch {
			case s.Version >= 3:
				want = 14
			case s.Version == 2:
				want = 13
			}
			if len(f) != want {
				return nil, fmt.Errorf("line %d: alloc needs %d fields, has %d", line, want-1, len(f)-1)
			}
			var v [13]int64
			live := false
			for i := 0; i < want-1 && err == nil; i++ {
				if i >= 6 && f[i+1] == "-" {
					continue // liveness off
				}
				if i >= 6 {
					live = true
				}
				v[i], err = strconv.ParseInt(f[i+1], 10, 64)
			}
			s.Liveness = s.Liveness || live
			s.Rows = append(s.Rows, Row{Account: int(v[0]), Site: int(v[1]), Part: int(v[2]), Count: v[3], Elements: v[4], Bytes: v[5],
				Live: v[6], LiveBytes: v[7], Reclaimed: v[8], ReclaimedBytes: v[9], Untracked: v[10], Generations: v[11], Survived: v[12]})
			if s.Version >= 4 && len(s.Contexts) > 0 {
				err = fmt.Errorf("alloc after the calling contexts")
			}
		case "ages":
			for _, x := range f[1:] {
				var n int64
				if n, err = strconv.ParseInt(x, 10, 64); err != nil {
					break
				}
				s.Ages = append(s.Ages, n)
			}
		case "end":
			ended = true
		default:
			if len(f) >= 2 {
				s.Header.set(f[0], f[1])
			}
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if s.Version == 0 {
		return nil, fmt.Errorf("empty snapshot")
	}
	if !ended {
		return nil, fmt.Errorf("line %d: snapshot is truncated (no end line): the process may have been killed while writing it", line)
	}
	return s, nil
}

// parseSite reads "ID [KIND TYPE METHOD OFFSET LINE]"; the runtime copies what the table holds.
func parseSite(f []string) (Site, error) {
	id, err := strconv.Atoi(f[0])
	if err != nil {
		return Site{}, fmt.Errorf("site ID %q: %w", f[0], err)
	}
	s := Site{ID: id, Offset: -1, Line: -1}
	get := func(i int) string {
		if i < len(f) {
			return f[i]
		}
		return ""
	}
	s.Kind, s.Type, s.Method = get(1), get(2), get(3)
	if v, err := strconv.Atoi(get(4)); err == nil {
		s.Offset = v
	}
	if v, err := strconv.Atoi(get(5)); err == nil {
		s.Line = v
	}
	return s, nil
}

type jsonSnapshot struct {
	Format      string                `json:"format"`
	Version     int                   `json:"version"`
	Accounts    map[string]string     `json:"accounts"`
	Sites       map[string][]jsonText `json:"sites"`
	Ages        []int64               `json:"ages"`
	Contexts    *jsonContexts         `json:"contexts"`
	Edges       []jsonEdges           `json:"edges"`
	Allocations []struct {
		Account, Site, Part    int
		Count, Elements, Bytes int64
		Live                   *int64
		LiveBytes              int64 `json:"live_bytes"`
		Reclaimed              int64
		ReclaimedBytes         int64 `json:"reclaimed_bytes"`
		Untracked, Generations int64
		Survived               int64
	} `json:"allocations"`
}

func readJSON(r io.Reader) (*Snapshot, error) {
	raw, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var j jsonSnapshot
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&j); err != nil {
		return nil, fmt.Errorf("JSON snapshot: %w", err)
	}
	if j.Format != "heapledger-snapshot" {
		return nil, fmt.Errorf("JSON is not a heapledger snapshot (format %q)", j.Format)
	}
	if j.Version < 1 || j.Version > MaxVersion {
		return nil, fmt.Errorf("JSON snapshot format version %d is not supported (this heapledger reads versions 1 to %d)", j.Version, MaxVersion)
	}
	// The header is every top-level string or number but the format and version; version 3
	// writes integers as numbers, older versions as strings.
	var hdr map[string]json.RawMessage
	_ = json.Unmarshal(raw, &hdr)
	s := newSnapshot()
	s.Version = j.Version
	for k, v := range hdr {
		var t jsonText
		if k != "format" && k != "version" && json.Unmarshal(v, &t) == nil {
			s.Header.set(k, string(t))
		}
	}
	for k, v := range j.Accounts {
		id, err := strconv.Atoi(k)
		if err != nil {
			return nil, fmt.Errorf("account ID %q: %w", k, err)
		}
		s.Accounts[id] = v
	}
	for k, v := range j.Sites {
		f := []string{k}
		for _, x := range v {
			f = append(f, string(x))
		}
		site, err := parseSite(f)
		if err != nil {
			return nil, err
		}
		s.addSite(site)
	}
	if err := s.readJSONContexts(j.Contexts); err != nil {
		return nil, err
	}
	if err := s.readJSONEdges(j.Edges); err != nil {
		return nil, err
	}
	s.Ages = j.Ages
	for _, a := range j.Allocations {
		r := Row{Account: a.Account, Site: a.Site, Part: a.Part, Count: a.Count, Elements: a.Elements, Bytes: a.Bytes,
			LiveBytes: a.LiveBytes, Reclaimed: a.Reclaimed, ReclaimedBytes: a.ReclaimedBytes, Untracked: a.Untracked, Generations: a.Generations, Survived: a.Survived}
		if a.Live != nil {
			r.Live = *a.Live
			s.Liveness = true
		}
		s.Rows = append(s.Rows, r)
	}
	return s, nil
}
