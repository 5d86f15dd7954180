// Package chromium drives a headless Chromium through chromedriver's WebDriver protocol (plain
// HTTP and JSON), so that tests and benchmarks load heapledger's HTML reports in a real browser
// with nothing but the standard library. Debian's chromium and chromium-driver packages
// provide both programs (scripts/install-deps.sh installs them).
package chromium

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// Flags Chromium runs with: headless, and as root without a sandbox; the network features it
// would start on its own (component updates, sync, background fetches, QUIC) stay off, as
// without them its connections are refused on machines without network, and a report must load
// offline anyway.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-dev-shm-usage", "--hide-scrollbars",
}

// Options of a browser.
type Options struct {
	Width, Height int // the window, 1280×1000 when 0
}

// Browser is one headless Chromium session under its own chromedriver.
type Browser struct {
	driver  *exec.Cmd
	base    string // the session's URL
	profile string // Chromium's fresh user data directory
	client  *http.Client
}

// Programs returns the paths of chromium and chromedriver, or an error naming what is missing.
func Programs() (browser, driver string, err error) {
	if browser, err = exec.LookPath("chromium"); err != nil {
		return "", "", fmt.Errorf("chromium not found on PATH (Debian package chromium; scripts/install-deps.sh installs it)")
	}
	if driver, err = exec.LookPath("chromedriver"); err != nil {
		return "", "", fmt.Errorf("chromedriver not found on PATH (Debian package chromium-driver; scripts/install-deps.sh installs it)")
	}
	return browser, driver, nil
}

// Start runs chromedriver on a free local port and opens a session of a fresh headless
// Chromium that keeps its console messages for Logs.
func Start(opt Options) (*Browser, error) {
	browser, driverPath, err := Programs()
	if err != nil {
		return nil, err
	}
	if opt.Width == 0 {
		opt.Width, opt.Height = 1280, 1000
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "heapledger-chromium-")
	if err != nil {
		return nil, err
	}
	b := &Browser{profile: profile, client: &http.Client{Timeout: 5 * time.Minute}}
	b.driver = exec.Command(driverPath, "--port="+strconv.Itoa(port))
	var driverLog bytes.Buffer
	b.driver.Stdout, b.driver.Stderr = &driverLog, &driverLog
	if err := b.driver.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, fmt.Errorf("chromedriver: %v", err)
	}
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	if err := b.waitReady(root); err != nil {
		b.Close()
		return nil, fmt.Errorf("%v\n%s", err, driverLog.String())
	}
	args := append(append([]string{}, Flags...), "--user-data-dir="+profile, fmt.Sprintf("--window-size=%d,%d", opt.Width, opt.Height))
	caps := map[string]any{"capabilities": map[string]any{"alwaysMatch": map[string]any{
		"browserName":        "chrome",
		"goog:chromeOptions": map[string]any{"binary": browser, "args": args},
		"goog:loggingPrefs":  map[string]string{"browser": "ALL"},
	}}}
	var session struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.call("POST", root+"/session", caps, &session); err != nil {
		b.Close()
		return nil, fmt.Errorf("starting a Chromium session: %v\n%s", err, driverLog.String())
	}
	b.base = root + "/session/" + session.SessionID
	return b, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady polls chromedriver's status until it takes sessions (a few hundred milliseconds;
// up to 30 s on a loaded machine).
func (b *Browser) waitReady(root string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		var st struct {
			Ready bool `json:"ready"`
		}
		if err := b.call("GET", root+"/status", nil, &st); err == nil && st.Ready {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chromedriver did not become ready within 30 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// call sends a WebDriver command and decodes its "value" into out (when not nil).
func (b *Browser) call(method, url string, body, out any) error {
	var rd io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	var reply struct {
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		return fmt.Errorf("%s %s: HTTP %d: %s", method, url, resp.StatusCode, raw)
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error, Message string }
		json.Unmarshal(reply.Value, &e)
		return fmt.Errorf("%s: %s", e.Error, e.Message)
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(reply.Value, out)
}

// Open loads url (file:///... for a report) and returns once the page has loaded.
func (b *Browser) Open(url string) error {
	return b.call("POST", b.base+"/url", map[string]string{"url": url}, nil)
}

// Eval runs script as the body of a function with args (arguments[0], ...) in the page and
// decodes what it returns into out (when not nil).
func (b *Browser) Eval(out any, script string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return b.call("POST", b.base+"/execute/sync", map[string]any{"script": script, "args": args}, out)
}

// Wait evaluates predicate, a script that returns true or false, with args (as Eval's) until
// it returns true or timeout passes.
func (b *Browser) Wait(predicate string, timeout time.Duration, args ...any) error {
	deadline := time.Now().Add(timeout)
	for {
		var ok bool
		if err := b.Eval(&ok, predicate, args...); err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %v waiting for %s", timeout, predicate)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// LogEntry is a message of the page's console (console.*, uncaught errors, failed loads).
type LogEntry struct {
	Level   string `json:"level"` // SEVERE for errors, WARNING, INFO, DEBUG
	Message string `json:"message"`
	Source  string `json:"source"` // console-api, javascript, network, ...
}

// Logs returns the console messages since the last call.
func (b *Browser) Logs() ([]LogEntry, error) {
	var out []LogEntry
	err := b.call("POST", b.base+"/se/log", map[string]string{"type": "browser"}, &out)
	return out, err
}

// Screenshot returns a PNG of the window.
func (b *Browser) Screenshot() ([]byte, error) {
	var b64 string
	if err := b.call("GET", b.base+"/screenshot", nil, &b64); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(b64)
}

// ElementScreenshot returns a PNG of the first element that the CSS selector matches.
func (b *Browser) ElementScreenshot(selector string) ([]byte, error) {
	var found map[string]string
	if err := b.call("POST", b.base+"/element", map[string]string{"using": "css selector", "value": selector}, &found); err != nil {
		return nil, fmt.Errorf("%s: %v", selector, err)
	}
	// The W3C protocol names an element by this fixed key.
	id := found["element-6066-11e4-a52e-4f735466cecf"]
	var b64 string
	if err := b.call("GET", b.base+"/element/"+id+"/screenshot", nil, &b64); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(b64)
}

// SetWindow resizes the window, for a screenshot of more of a page.
func (b *Browser) SetWindow(width, height int) error {
	return b.call("POST", b.base+"/window/rect", map[string]int{"width": width, "height": height}, nil)
}

// Close ends the session (Chromium exits), stops chromedriver and removes the profile.
func (b *Browser) Close() error {
	var err error
	if b.base != "" {
		err = b.call("DELETE", b.base, nil, nil)
	}
	if b.driver != nil && b.driver.Process != nil {
		b.driver.Process.Kill()
		b.driver.Wait()
	}
	os.RemoveAll(b.profile)
	return err
}
