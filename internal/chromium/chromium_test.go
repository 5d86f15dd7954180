package chromium

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapledger/heapledger/internal/testenv"
)

// TestBrowser loads a page that logs an error and counts: the console message reaches Logs,
// Eval and Wait see the page, screenshots are PNGs, and Close leaves no profile behind.
func TestBrowser(t *testing.T) {
	if _, _, err := Programs(); err != nil {
		testenv.Unavailable(t, "%v", err)
	}
	b, err := Start(Options{Width: 800, Height: 600})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page := filepath.Join(t.TempDir(), "p.html")
	os.WriteFile(page, []byte(`<!DOCTYPE html><p id="n">0</p><script>
		console.error("planted failure");
		var n = 0; var timer = setInterval(function () { document.getElementById("n").textContent = ++n; if (n == 3) clearInterval(timer); }, 10);
		</script>`), 0o644)
	if err := b.Open("file://" + page); err != nil {
		t.Fatal(err)
	}
	if err := b.Wait(`return document.getElementById("n").textContent === "3"`, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	var sum int
	if err := b.Eval(&sum, "return arguments[0] + arguments[1]", 2, 40); err != nil || sum != 42 {
		t.Errorf("Eval: %d, %v", sum, err)
	}
	if err := b.Eval(nil, "throw new Error('from the test')"); err == nil || !strings.Contains(err.Error(), "from the test") {
		t.Errorf("a throwing script: %v", err)
	}
	logs, err := b.Logs()
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) != 1 || logs[0].Level != "SEVERE" || !strings.Contains(logs[0].Message, "planted failure") {
		t.Errorf("logs %+v", logs)
	}
	for _, shot := range []func() ([]byte, error){b.Screenshot, func() ([]byte, error) { return b.ElementScreenshot("#n") }} {
		png, err := shot()
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("screenshot: %v", err)
		}
	}
	if err := b.Wait("return false", 100*time.Millisecond); err == nil {
		t.Error("Wait for what never holds returned")
	}
	profile := b.profile
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind", profile)
	}
	b.base, b.driver = "", nil // closed: the deferred Close has nothing left to do
}
