//go:build serve

package main

// The HTTP server of docs/protocol.md ("serve", after Vaughan): GET /STYLE/NUM
// answers 2*NUM + NUM/2 from two simulated remote calls, "double" (2·D) and
// "halve" (D), written in five styles. In Go every style parks a goroutine,
// never an OS thread: see README.md, "The HTTP server".

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type serveConfig struct {
	port    int
	delayMs int
	threads int // 0: not given
}

const serveUsage = `usage: bench serve --port P --delay-ms D [--threads T]

  --port P        TCP port on 127.0.0.1 (0 = a free port)
  --delay-ms D    the simulated calls take 2*D ms (double) and D ms (halve) (> 0)
  --threads T     recorded only: Go has no handler pool, every request is a
                  goroutine; GOMAXPROCS stays the runtime default (> 0)`

// Limits beyond the protocol's "positive integer": a TCP port, and delays
// and thread counts that fit the 31-bit integers the other languages use.
const (
	maxPort    = 65535
	maxDelayMs = 1<<30 - 1 // 2*D still fits 31 bits
	maxThreads = 1<<31 - 1
)

func parseServeArgs(args []string) (serveConfig, error) {
	for _, a := range args {
		if a == "--help" || a == "-h" || a == "-help" {
			return serveConfig{}, errHelp
		}
	}
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(decimal{&cfg.port, 0}, "port", "")
	fs.Var(decimal{&cfg.delayMs, 1}, "delay-ms", "")
	fs.Var(decimal{&cfg.threads, 1}, "threads", "")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"port", "delay-ms"} {
		if !set[name] {
			return cfg, fmt.Errorf("serve needs --%s", name)
		}
	}
	switch {
	case cfg.port > maxPort:
		return cfg, fmt.Errorf("--port must be <= %d", maxPort)
	case cfg.delayMs > maxDelayMs:
		return cfg, fmt.Errorf("--delay-ms must be <= %d", maxDelayMs)
	case cfg.threads > maxThreads:
		return cfg, fmt.Errorf("--threads must be <= %d", maxThreads)
	}
	return cfg, nil
}

// calculator is the article's CalculationService: two remote calls simulated by
// sleeping. time.Sleep parks the calling goroutine; the OS thread under it
// goes on running other goroutines.
type calculator struct{ delay time.Duration }

func (c calculator) double(n int64) int64 {
	time.Sleep(2 * c.delay)
	return n * 2
}

func (c calculator) halve(n int64) int64 {
	time.Sleep(c.delay)
	return n / 2
}

// doubleAsync and halveAsync are the non-blocking calls, Go's form of a
// method returning Task<int>: start the work on its own goroutine, return at
// once a channel that will hold the result.
func (c calculator) doubleAsync(n int64) <-chan int64 {
	out := make(chan int64, 1)
	go func() { out <- c.double(n) }()
	return out
}

func (c calculator) halveAsync(n int64) <-chan int64 {
	out := make(chan int64, 1)
	go func() { out <- c.halve(n) }()
	return out
}

// sync: double, then halve, each blocking the handler's goroutine.
func styleSync(c calculator, n int64) int64 {
	dbl := c.double(n)
	half := c.halve(n)
	return dbl + half
}

// sync-over-async: start the non-blocking double and block on its result,
// then the same for halve.
func styleSyncOverAsync(c calculator, n int64) int64 {
	dbl := <-c.doubleAsync(n)
	half := <-c.halveAsync(n)
	return dbl + half
}

// parallel: the two blocking calls on two goroutines at once, and a
// WaitGroup to block until both are done (Parallel.Invoke).
func styleParallel(c calculator, n int64) int64 {
	var dbl, half int64
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); dbl = c.double(n) }()
	go func() { defer wg.Done(); half = c.halve(n) }()
	wg.Wait()
	return dbl + half
}

// async: await double, then await halve. Go has no await: receiving from the
// channel is how Go waits for an asynchronous result, and it parks the
// goroutine without holding a thread. So this is the same code as
// sync-over-async, on purpose: in Go the two styles are one (README.md).
func styleAsync(c calculator, n int64) int64 {
	dbl := <-c.doubleAsync(n)
	half := <-c.halveAsync(n)
	return dbl + half
}

// when-all: start both non-blocking calls, then wait for both (Task.WhenAll).
func styleWhenAll(c calculator, n int64) int64 {
	dbl := c.doubleAsync(n)
	half := c.halveAsync(n)
	return <-dbl + <-half
}

// styleNames is the protocol's order; styles maps each name to its handler.
var styleNames = []string{"sync", "sync-over-async", "parallel", "async", "when-all"}

var styles = map[string]func(calculator, int64) int64{
	"sync":            styleSync,
	"sync-over-async": styleSyncOverAsync,
	"parallel":        styleParallel,
	"async":           styleAsync,
	"when-all":        styleWhenAll,
}

// ServeHTTP routes GET /health and GET /STYLE/NUM. net/http runs it on the
// goroutine of the request's connection.
func (c calculator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, "only GET", http.StatusMethodNotAllowed)
		return
	}
	if r.URL.Path == "/health" {
		text(w, "ok")
		return
	}
	style, num, found := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	handler, known := styles[style]
	if !found || !known {
		http.Error(w, "unknown style", http.StatusNotFound)
		return
	}
	// Base 10, digits only (no sign), below 2^31.
	n, err := strconv.ParseUint(num, 10, 31)
	if err != nil {
		http.Error(w, "NUM must be a decimal integer in [0, 2^31)", http.StatusBadRequest)
		return
	}
	text(w, strconv.FormatInt(handler(c, int64(n)), 10))
}

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	io.WriteString(w, body)
}

// ready is the protocol's line, printed once the socket is listening.
type ready struct {
	Listening int      `json:"listening"`
	Styles    []string `json:"styles"`
	Threads   *int     `json:"threads"`
	Runtime   string   `json:"runtime"`
}

func init() { serveMain = runServe }

// runServe parses the server's arguments and serves: the exit status.
func runServe(args []string) int {
	cfg, err := parseServeArgs(args)
	if errors.Is(err, errHelp) {
		fmt.Println(serveUsage)
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
		return 2
	}
	return serve(cfg)
}

// serve listens on 127.0.0.1, prints the ready line and serves until SIGTERM
// or SIGINT; it returns the exit status.
func serve(cfg serveConfig) int {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(cfg.port)))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
		return 1
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)

	srv := &http.Server{Handler: calculator{time.Duration(cfg.delayMs) * time.Millisecond}}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	line := ready{Listening: ln.Addr().(*net.TCPAddr).Port, Styles: styleNames, Runtime: runtime.Version()}
	if cfg.threads > 0 {
		t := cfg.threads
		line.Threads = &t
	}
	out, _ := json.Marshal(line)
	if _, err := os.Stdout.Write(append(out, '\n')); err != nil { // os.Stdout is unbuffered
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
		return 1
	}

	select {
	case <-stop:
		// Close the listener and every connection; requests in flight are dropped.
		srv.Close()
		return 0
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
		return 1
	}
}
