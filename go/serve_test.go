//go:build serve

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Functional tests of `bench serve` only: a handful of requests, small
// delays, and timing checked from below (a style's floor), never from above.

const testDelay = 20 * time.Millisecond

// server is a `bench serve` child process (this test binary re-executed).
type server struct {
	cmd    *exec.Cmd
	ready  ready
	rest   chan string // whatever stdout prints after the ready line
	stderr *strings.Builder
}

func startServer(t *testing.T, args ...string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "BENCH_RUN_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, rest: make(chan string, 1), stderr: &strings.Builder{}}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stdout)
		line, _ := r.ReadString('\n')
		lines <- line
		rest, _ := io.ReadAll(r)
		s.rest <- string(rest)
	}()
	select {
	case line := <-lines:
		if err := json.Unmarshal([]byte(line), &s.ready); err != nil || !strings.HasSuffix(line, "\n") {
			t.Fatalf("ready line %q: %v (stderr %q)", line, err, s.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no ready line within 30 s")
	}
	return s
}

func (s *server) url(path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(s.ready.Listening) + path
}

// stop sends sig and returns the exit status and what stdout printed after the ready line.
func (s *server) stop(t *testing.T, sig os.Signal) (int, string) {
	t.Helper()
	if err := s.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after %v", sig)
	}
	return s.cmd.ProcessState.ExitCode(), <-s.rest
}

func get(t *testing.T, client *http.Client, url string) (*http.Response, string, bool) {
	t.Helper()
	reused := false
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused }}
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	resp, err := client.Do(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading the body: %v", url, err)
	}
	return resp, string(body), reused
}

func TestServe(t *testing.T) {
	s := startServer(t, "--port", "0", "--delay-ms", strconv.Itoa(int(testDelay/time.Millisecond)))
	if s.ready.Listening <= 0 || !reflect.DeepEqual(s.ready.Styles, styleNames) || s.ready.Threads != nil ||
		!strings.HasPrefix(s.ready.Runtime, "go") {
		t.Fatalf("ready line %+v", s.ready)
	}
	checkLoopbackOnly(t, s.ready.Listening)
	client := &http.Client{Timeout: 30 * time.Second}

	if resp, body, _ := get(t, client, s.url("/health")); resp.StatusCode != 200 || body != "ok" {
		t.Errorf("/health: %d %q", resp.StatusCode, body)
	}

	floors := map[string]time.Duration{
		"sync": 3 * testDelay, "sync-over-async": 3 * testDelay, "async": 3 * testDelay,
		"parallel": 2 * testDelay, "when-all": 2 * testDelay,
	}
	reusedAny := false
	for _, style := range styleNames {
		for _, num := range []int64{0, 7, 1<<31 - 1} {
			url := s.url(fmt.Sprintf("/%s/%d", style, num))
			start := time.Now()
			resp, body, reused := get(t, client, url)
			took := time.Since(start)
			reusedAny = reusedAny || reused
			want := strconv.FormatInt(2*num+num/2, 10)
			if resp.StatusCode != 200 || body != want || resp.Header.Get("Content-Type") != "text/plain" {
				t.Errorf("%s: %d %q (%s), want 200 %q text/plain", url, resp.StatusCode, body, resp.Header.Get("Content-Type"), want)
			}
			if took < floors[style] {
				t.Errorf("%s answered in %v, below its floor %v: the handler did not wait", url, took, floors[style])
			}
		}
	}
	if !reusedAny {
		t.Error("no request reused a keep-alive connection")
	}

	for path, status := range map[string]int{
		"/nope/5": 404, "/sync": 404, "/": 404, "/health/1": 404,
		"/sync/abc": 400, "/async/-1": 400, "/when-all/+5": 400, "/parallel/2147483648": 400,
		"/sync-over-async/": 400, "/sync/1.5": 400, "/sync/99999999999999999999": 400,
	} {
		if resp, body, _ := get(t, client, s.url(path)); resp.StatusCode != status {
			t.Errorf("%s: %d %q, want %d", path, resp.StatusCode, body, status)
		}
	}

	code, rest := s.stop(t, syscall.SIGTERM)
	if code != 0 || rest != "" {
		t.Errorf("after SIGTERM: exit %d, stdout %q, stderr %q; want 0 and nothing more", code, rest, s.stderr.String())
	}
	if _, err := net.DialTimeout("tcp", s.url("")[len("http://"):], time.Second); err == nil {
		t.Error("the port still accepts connections after exit")
	}
}

func TestServeThreadsIsRecordedAndSIGINTExits0(t *testing.T) {
	s := startServer(t, "--port", "0", "--delay-ms", "10", "--threads", "3")
	if s.ready.Threads == nil || *s.ready.Threads != 3 {
		t.Fatalf("ready line %+v, want threads 3", s.ready)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	if resp, body, _ := get(t, client, s.url("/when-all/10")); resp.StatusCode != 200 || body != "25" {
		t.Errorf("/when-all/10: %d %q", resp.StatusCode, body)
	}
	if code, rest := s.stop(t, os.Interrupt); code != 0 || rest != "" {
		t.Errorf("after SIGINT: exit %d, stdout %q", code, rest)
	}
}

func TestServePortInUseIsOneLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	code, stdout, stderr := runMain(t, "serve", "--port", port, "--delay-ms", "10")
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "in use") {
		t.Errorf("port in use: exit %d, stdout %q, stderr %q; want 1, nothing, one line", code, stdout, stderr)
	}
}

var badServeArgs = [][]string{
	{},
	{"--port", "0"},
	{"--delay-ms", "10"},
	{"--port", "0", "--delay-ms", "0"},
	{"--port", "0", "--delay-ms", "-5"},
	{"--port", "0", "--delay-ms", "abc"},
	{"--port", "-1", "--delay-ms", "10"},
	{"--port", "65536", "--delay-ms", "10"},
	{"--port", "0x10", "--delay-ms", "10"},
	{"--port", "0", "--delay-ms", "10", "--threads", "0"},
	{"--port", "0", "--delay-ms", "10", "--threads", "-2"},
	{"--port", "0", "--delay-ms", "10", "--threads"},
	{"--port", "0", "--delay-ms", "99999999999999999999999"},
	{"--port", "0", "--delay-ms", "10", "--n", "5"},
	{"--port", "0", "--delay-ms", "10", "extra"},
}

func TestServeBadArgsExit2WithOneStderrLine(t *testing.T) {
	for _, args := range badServeArgs {
		if _, err := parseServeArgs(args); err == nil || errors.Is(err, errHelp) {
			t.Errorf("parseServeArgs(%q) = %v, want an error", args, err)
		}
		all := append([]string{"serve"}, args...)
		code, stdout, stderr := runMain(t, all...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, one line", all, code, stdout, stderr)
		}
	}
	if code, stdout, _ := runMain(t, "serve", "--help"); code != 0 || !strings.HasPrefix(stdout, "usage: bench serve") {
		t.Errorf("serve --help: exit %d, stdout %q", code, stdout)
	}
}

// checkLoopbackOnly reads /proc/net/tcp{,6} (Linux): the listening socket on
// port must be bound to 127.0.0.1 and to nothing else.
func checkLoopbackOnly(t *testing.T, port int) {
	t.Helper()
	suffix := fmt.Sprintf(":%04X", port)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			t.Logf("cannot check the bound address: %v", err)
			return
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 4 || f[3] != "0A" || !strings.HasSuffix(f[1], suffix) { // 0A: LISTEN
				continue
			}
			if f[1] != "0100007F"+suffix {
				t.Errorf("listening on %s in %s, want 127.0.0.1 only", f[1], table)
			}
		}
	}
}
