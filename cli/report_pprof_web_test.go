//go:build unix

package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapledger/heapledger/fixtures"
)

// TestReportProfileWebUI: `go tool pprof -http` serves the profile: its top table has the
// report's figures for the Java methods, and its flame graph names them.
func TestReportProfileWebUI(t *testing.T) {
	goBin := goTool(t)
	pb := filepath.Join(t.TempDir(), "p.pb.gz")
	if _, _, err := runCLI(t, "report", "--format", "pprof", "-o", pb, filepath.Join(fixtures.Dir(), "snapshots", "profiles.snapshot")); err != nil {
		t.Fatal(err)
	}
	// pprof picks a free port the same way when given port 0, but does not say which before it
	// serves; a port chosen here is known to the test (and free but for a rare race).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	cmd := exec.Command(goBin, "tool", "pprof", "-http="+addr, "-no_browser", pb)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	// go tool runs pprof as a child: the group is ended together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var log strings.Builder // read only once the process has exited: exec writes it meanwhile
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() string {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if exited != nil {
			<-exited
			exited = nil
		}
		return log.String()
	}
	t.Cleanup(func() { stop() })
	// Since Go 1.25 the toolchain ships no pprof binary: the first `go tool pprof` on a clean
	// machine builds it, which takes a minute or more on a loaded 2-core machine.
	deadline := time.Now().Add(5 * time.Minute)
	get := func(path string) string {
		for {
			resp, err := http.Get("http://" + addr + path)
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return string(body)
				}
				t.Fatalf("GET %s: %s\n%s", path, resp.Status, body)
			}
			select {
			case werr := <-exited:
				exited = nil
				t.Fatalf("go tool pprof -http exited (%v) before serving %s:\n%s", werr, path, log.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("go tool pprof -http did not serve %s within 5 minutes: %v\n%s", path, err, stop())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The top table's rows are JSON in the page; grow's cumulative bytes are what the text
	// report gives org.lib.B$Buf.grow(int) (16448 bytes charged to org.lib, 168 to com.acme.*).
	top := get("/ui/top?si=alloc_space")
	grow := regexp.MustCompile(`"Name":"org\.lib\.B\$Buf\.grow\(int\)"[^}]*"Flat":0,"Cum":16616[,}]`)
	if !grow.MatchString(top) {
		t.Errorf("pprof's web top lacks org.lib.B$Buf.grow(int) with cumulative 16616 bytes")
	}
	for _, w := range []string{`"Name":"byte[]"`, `"Name":"com.acme.A.run(String[], int)"`} {
		if !strings.Contains(top, w) {
			t.Errorf("pprof's web top lacks %s", w)
		}
	}
	if flame := get("/ui/flamegraph?si=inuse_space"); !strings.Contains(flame, "com.acme.A.grid(int, int)") {
		t.Error("pprof's web flame graph does not name com.acme.A.grid(int, int)")
	}
}
