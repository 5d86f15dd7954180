package jar

import (
	"errors"
	"fmt"
	"hash/crc32"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// ClassPath looks classes up as a JVM's application class loader finds them on its class path
// (transform.Inputs), for the agent's transform service: the count pass then reads a class's
// callees as offline rewriting reads the other classes of its input. It holds only what the
// loader is sure to find first, so that a class it finds is the class that loader defines:
//
//  1. The jars are taken in the order the loader searches them (NewClassPath): the class
//     path's, each followed at once by the jars its manifest's Class-Path names (resolved
//     against the jar, each jar taken once), missing files left out as the loader leaves them.
//     As the JDK (URLClassPath.toFileURL), a class path entry is made canonical, symbolic
//     links resolved, before a Class-Path is resolved against it; the jars a Class-Path names
//     are taken as named.
//  2. The search stops at the first directory (a Class-Path entry that ends in a slash is one
//     to the loader): it may hold any class, and its contents change between runs unnoticed,
//     so neither it nor anything after it is read.
//  3. A class with a version of its own under META-INF/versions/ is not found: the loader may
//     define that version instead (Lookup).
//
// A class not found is one the count pass treats as outside its input, which only costs
// switches that could have been left out. The jars' manifests are read at once (a manifest is
// found without reading the whole archive), their entries in the background; Lookup waits for
// them, and a jar changed in between ends the search there. The identity (Identity) names
// every jar in search order by path, size and a digest of its central directory, which holds
// every entry's CRC-32, so a cache keyed by it is never used with other contents.
type ClassPath struct {
	jars     []string
	heads    []jarHead // of jars, read with their manifests
	identity string

	once   sync.Once
	done   chan struct{}
	byName map[string]*Entry
	multi  map[string]bool // classes with a version under META-INF/versions/
	inputs []*Input
	read   []string // the jars read, in order: up to the first one that could not be
	err    error    // why that jar could not be read; the jars before it still count
}

// NewClassPath takes the class path as the JVM's java.class.path gives it (entries separated
// by sep), finds the jars the loader searches (steps 1 and 2) and starts reading their
// entries in the background.
func NewClassPath(path string, sep string) *ClassPath {
	cp := &ClassPath{done: make(chan struct{})}
	type entry struct {
		path  string
		named bool // named by a manifest's Class-Path: taken as named, not made canonical
	}
	var queue []entry
	for _, p := range strings.Split(path, sep) {
		if p == "" {
			p = "." // the JVM reads an empty entry as the working directory
		}
		queue = append(queue, entry{p, false})
	}
	var id strings.Builder
	seen := map[string]bool{}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if e.named && strings.HasSuffix(e.path, string(filepath.Separator)) {
			break // a directory to the loader (step 2)
		}
		abs, err := filepath.Abs(e.path)
		if err != nil {
			continue
		}
		if !e.named {
			if abs, err = filepath.EvalSymlinks(abs); err != nil {
				continue // missing: as the loader, which skips what it cannot open
			}
		}
		if seen[abs] {
			continue
		}
		seen[abs] = true
		st, err := os.Stat(abs)
		if err != nil {
			continue // as the loader, which skips what it cannot open
		}
		if !st.Mode().IsRegular() {
			break // a directory (step 2)
		}
		h, err := readHead(abs)
		if errors.Is(err, errClassFile) {
			continue // the loader cannot open it as a jar, and skips it
		}
		if err != nil {
			break // the loader skips it; what it finds next is not known here
		}
		refs, ok := manifestClassPath(abs, h.manifest)
		if !ok {
			break // a manifest the JDK may refuse, and skip the jar: neither is known here
		}
		cp.jars, cp.heads = append(cp.jars, abs), append(cp.heads, h)
		fmt.Fprintf(&id, "%s %d %x\n", abs, h.size, h.dirSum)
		var named []entry
		for _, p := range refs {
			named = append(named, entry{p, true})
		}
		queue = append(named, queue...)
	}
	cp.identity = id.String()
	go cp.once.Do(cp.open)
	return cp
}

// manifestClassPath returns the files a jar's manifest's Class-Path names, resolved against
// the jar as the JDK resolves them: relative URLs, or file URLs; others are ignored. As the
// JDK's manifest reader, the main section ends at the first empty line and a Class-Path given
// twice counts once, the last. ok is false when the main section has a line that reader
// refuses (over 512 bytes, or a header without ": "): the JDK then skips the jar or its
// Class-Path, by version, so what it searches is not known.
func manifestClassPath(jarPath string, mf []byte) (refs []string, ok bool) {
	var main []byte
	for _, line := range splitLines(mf) {
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			break
		}
		if len(line) > 512 || !strings.HasPrefix(text, " ") && !strings.Contains(text, ": ") {
			return nil, false
		}
		main = append(main, line...)
	}
	value, named := "", false
	for _, a := range parseSection(main) {
		if strings.EqualFold(a.name, "Class-Path") {
			value, named = a.value, true
		}
	}
	if !named {
		return nil, true
	}
	base := &url.URL{Scheme: "file", Path: filepath.ToSlash(jarPath)}
	for _, ref := range strings.Fields(value) {
		u, err := url.Parse(ref)
		if err != nil || u.Scheme != "" && u.Scheme != "file" || u.Host != "" && u.Host != "localhost" {
			continue
		}
		u.Host = ""
		r := base.ResolveReference(u)
		refs = append(refs, filepath.FromSlash(r.Path)) // a trailing slash stays: a directory for the loader
	}
	return refs, true
}

// same reports whether the file at path is still the one h was read from, by size and
// modification time.
func (h jarHead) same(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Size() == h.size && st.ModTime().UnixNano() == h.mod
}

// Identity names the jars the class path may read: their paths, sizes and central directories.
func (cp *ClassPath) Identity() string { return cp.identity }

// Jars returns the jars read, in class path order, once they are open, and why the next one
// could not be read (nil when none failed).
func (cp *ClassPath) Jars() ([]string, error) {
	<-cp.done
	return cp.read, cp.err
}

// open reads the jars' entries (step 3).
func (cp *ClassPath) open() {
	defer close(cp.done)
	cp.byName, cp.multi = map[string]*Entry{}, map[string]bool{}
	for i, p := range cp.jars {
		in, err := OpenInput(p)
		if err == nil && !cp.heads[i].same(p) {
			in.Close()
			err = fmt.Errorf("%s changed since the class path was read", p)
		}
		if err != nil {
			cp.err = err
			return
		}
		cp.inputs = append(cp.inputs, in)
		cp.read = append(cp.read, p)
		for _, e := range in.Entries {
			name, ok := strings.CutSuffix(e.Name, ".class")
			switch {
			case !ok:
			case strings.HasPrefix(name, "META-INF/versions/"):
				if _, rest, ok := strings.Cut(name[len("META-INF/versions/"):], "/"); ok {
					cp.multi[rest] = true
				}
			case cp.byName[name] == nil:
				cp.byName[name] = e
			}
		}
	}
}

// Lookup returns the class file the class path holds for an internal class name (step 3);
// it is safe for concurrent use.
func (cp *ClassPath) Lookup(class string) ([]byte, bool) {
	<-cp.done
	e := cp.byName[class]
	if e == nil || cp.multi[class] {
		return nil, false
	}
	data, err := e.ReadAll(DefaultLimits)
	return data, err == nil
}

// Holds reports whether the class path has a copy of an internal class name that the loader
// finds (found, as Lookup), and whether that copy is exactly data (same), by its length and
// CRC-32 as the jar's directory records them, so no entry is read. A class the JVM defines
// with other bytes than its jar's was changed on the way (by another agent's transformer): the
// copy the count pass reads of it is not the class that runs.
func (cp *ClassPath) Holds(class string, data []byte) (found, same bool) {
	<-cp.done
	e := cp.byName[class]
	if e == nil || cp.multi[class] {
		return false, false
	}
	return true, e.Header.UncompressedSize64 == uint64(len(data)) && e.Header.CRC32 == crc32.ChecksumIEEE(data)
}

// Close releases the jars once they are open.
func (cp *ClassPath) Close() error {
	<-cp.done
	var first error
	for _, in := range cp.inputs {
		if err := in.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
