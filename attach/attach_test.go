package attach

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeJVM listens where a JVM with pid would, reads one request and answers with reply.
func fakeJVM(t *testing.T, pid int, reply string) <-chan []string {
	t.Helper()
	sock := filepath.Join("/tmp", fmt.Sprintf(".java_pid%d", pid))
	os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", sock, err)
	}
	t.Cleanup(func() { l.Close(); os.Remove(sock) })
	got := make(chan []string, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(got)
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		var fields []string
		for i := 0; i < 5; i++ { // version, command, three arguments
			f, err := r.ReadString(0)
			if err != nil {
				break
			}
			fields = append(fields, strings.TrimSuffix(f, "\x00"))
		}
		io.WriteString(c, reply)
		got <- fields
	}()
	return got
}

func TestLoadAgentRequestAndReply(t *testing.T) {
	pid := os.Getpid()
	got := fakeJVM(t, pid, "0\nreturn code: 0\n")
	out, err := LoadAgent(pid, "/x/agent.jar", "a=b,c=%2C", Options{Start: 10 * time.Second, Reply: 30 * time.Second})
	if err != nil {
		t.Fatalf("%v (%q)", err, out)
	}
	want := []string{"1", "load", "instrument", "false", "/x/agent.jar=a=b,c=%2C"}
	if f := <-got; strings.Join(f, "|") != strings.Join(want, "|") {
		t.Errorf("request fields %q, want %q", f, want)
	}
}

func TestLoadAgentFailures(t *testing.T) {
	pid := os.Getpid()
	for reply, want := range map[string]string{
		"0\nreturn code: 102\n":                 "return code 102",
		"101\nNo such agent library\n":          "status 101): No such agent library",
		"garbage\n":                             "unexpected answer",
		"-1\nOperation not permitted by user\n": "Operation not permitted",
	} {
		fakeJVM(t, pid, reply)
		_, err := LoadAgent(pid, "/x/agent.jar", "", Options{Start: 10 * time.Second, Reply: 30 * time.Second})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("reply %q: error %v, want one containing %q", reply, err, want)
		}
	}
}

// TestRefusesProcessThatDoesNotCatchQuit: SIGQUIT would end a process that does not handle it
// (sleep), so attach must refuse and leave it running.
func TestRefusesProcessThatDoesNotCatchQuit(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	cmd := exec.Command(sleep, "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	_, err = LoadAgent(cmd.Process.Pid, "/x/agent.jar", "", Options{Start: time.Second})
	if err == nil || !strings.Contains(err.Error(), "does not handle SIGQUIT") {
		t.Fatalf("error %v", err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d/cwd/.attach_pid%d", cmd.Process.Pid, cmd.Process.Pid)); err == nil {
		t.Errorf("the trigger file was left behind")
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
	if f := strings.Fields(string(stat)); err != nil || len(f) < 3 || f[2] == "Z" {
		t.Errorf("the process was ended (stat %q, %v)", stat, err)
	}
}

func TestCatchesQuit(t *testing.T) {
	// The Go runtime handles SIGQUIT (it prints goroutines), as a HotSpot JVM does.
	ok, err := catchesQuit(os.Getpid())
	if err != nil || !ok {
		t.Errorf("catchesQuit(self) = %v, %v", ok, err)
	}
}

func TestNoSuchProcess(t *testing.T) {
	if _, err := LoadAgent(1<<30, "/x/agent.jar", "", Options{}); err == nil || !strings.Contains(err.Error(), "no process") {
		t.Errorf("error %v", err)
	}
}
