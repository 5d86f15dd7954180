// Package outfile writes the files and directories heapledger produces: under a temporary name
// beside the final path, renamed into place only when complete, so a reader never sees half an
// output and an error never replaces a good one.
//
// Modes follow what cp or javac would give. A new output is created with 0666 (0777 for
// executables and directories) and the kernel applies the umask and any default ACL of the
// directory, exactly as for any other program's new file; nothing reads the umask, which only a
// process-wide, racy call could. An output that replaces an existing one keeps that one's
// permission bits, as cp over an existing file does.
//
// Temporaries are named ".BASE.heapledger-HOST-PID-RAND.tmp" (HOST a hash of the host name).
// A run killed before its rename leaves one behind; the next run for the same output removes
// those whose process is gone on this host, and never one another run is still writing.
package outfile

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Modes to create with, before the umask: data files, and executables or directories.
const (
	Data       os.FileMode = 0o666
	Executable os.FileMode = 0o777
)

// File is an output file being written under its temporary name.
type File struct {
	*os.File
	path string
}

// Create starts writing path: a temporary file beside it, created with perm (Data or
// Executable, less the umask). Missing parent directories are created. Stale temporaries of
// path are removed first.
func Create(path string, perm os.FileMode) (*File, error) {
	var f *os.File
	err := newTemp(path, func(name string) (err error) {
		f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// newTemp makes a temporary for path with create, under a fresh name, once the missing parent
// directories are created and stale temporaries of path removed.
func newTemp(path string, create func(name string) error) error {
	if err := os.MkdirAll(filepath.Dir(path), Executable); err != nil {
		return err
	}
	removeStale(path)
	for range 100 {
		err := create(tempName(path))
		if !errors.Is(err, os.ErrExist) {
			if err != nil {
				return fmt.Errorf("cannot create the output beside %s: %w", path, err)
			}
			return nil
		}
	}
	return fmt.Errorf("cannot create the output beside %s: no free temporary name", path)
}

// Commit flushes the file to disk, gives it the mode of the file it replaces, if any, and
// renames it to its path. On failure the temporary is removed.
func (f *File) Commit() error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = keepMode(f.Name(), f.path)
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("%s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file; path is left as it was.
func (f *File) Abort() {
	f.Close()
	os.Remove(f.Name())
}

// WriteFile writes data to path through a temporary file (see Create and Commit).
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Abort()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Commit()
}

// Dir is a directory output being filled under its temporary name, Path.
type Dir struct {
	Path   string
	output string
}

// CreateDir starts a directory output: an empty temporary directory beside output, created
// with Executable less the umask. Stale temporaries of output are removed first.
func CreateDir(output string) (*Dir, error) {
	output = filepath.Clean(output)
	var tmp string
	err := newTemp(output, func(name string) error {
		tmp = name
		return os.Mkdir(name, Executable)
	})
	if err != nil {
		return nil, err
	}
	return &Dir{Path: tmp, output: output}, nil
}

// Commit renames the directory to its output, which may exist only as an empty directory
// (whose mode it keeps). On failure the temporary directory is removed.
func (d *Dir) Commit() error {
	err := keepMode(d.Path, d.output)
	// Remove fails rather than deletes anything that appeared in the output meanwhile.
	if rerr := os.Remove(d.output); err == nil && rerr != nil && !os.IsNotExist(rerr) {
		err = rerr
	}
	if err == nil {
		err = os.Rename(d.Path, d.output)
	}
	if err != nil {
		d.Abort()
		return fmt.Errorf("%s: %w", d.output, err)
	}
	return nil
}

// Abort removes the temporary directory and all it holds.
func (d *Dir) Abort() { os.RemoveAll(d.Path) }

// keepMode gives tmp the permission bits of the file it is about to replace.
func keepMode(tmp, final string) error {
	st, err := os.Stat(final)
	if err != nil {
		return nil // nothing replaced: tmp keeps the mode it was created with
	}
	return os.Chmod(tmp, st.Mode().Perm())
}

const (
	tempMark   = ".heapledger-"
	tempSuffix = ".tmp"
)

// tempName is a fresh temporary name for path, saying whose it is (host and process) so that
// removeStale can tell a dead run's from a live one's.
func tempName(path string) string {
	return fmt.Sprintf("%s%s%s-%d-%d%s", tempPrefix(path), tempMark, hostID, os.Getpid(), rand.Uint32(), tempSuffix)
}

func tempPrefix(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(filepath.Clean(path)))
}

// hostID tells temporaries written on this host from those another host wrote into a shared
// directory: a process number means nothing on another host.
var hostID = func() string {
	name, _ := os.Hostname()
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}()

// removeStale removes the temporaries of path left by runs on this host whose process is gone.
// Failures are ignored: a leftover costs disk space, never correctness.
func removeStale(path string) {
	dir := filepath.Dir(path)
	mine := filepath.Base(tempPrefix(path)) + tempMark
	names, _ := os.ReadDir(dir)
	for _, e := range names {
		rest, ok := strings.CutPrefix(e.Name(), mine)
		if !ok {
			continue
		}
		if pid, ok := owner(rest); ok && !processAlive(pid) {
			os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

// owner parses the "HOST-PID-RAND.tmp" of a temporary name and returns PID when HOST is this
// host; anything else is not a name tempName makes, and is left alone.
func owner(rest string) (int, bool) {
	f := strings.Split(strings.TrimSuffix(rest, tempSuffix), "-")
	if len(f) != 3 || f[0] != hostID || !strings.HasSuffix(rest, tempSuffix) {
		return 0, false
	}
	if _, err := strconv.ParseUint(f[2], 10, 32); err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || pid <= 0 {
		return 0, false
	}
	return pid, true
}
