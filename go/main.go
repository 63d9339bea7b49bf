// Command bench runs one concurrency workload and prints one JSON line, or
// (bench serve) the HTTP server of the protocol (serve.go),
// following docs/protocol.md.
//
// Two binaries are built from these files: bin/bench, without the server,
// and bin/serve (`-tags serve`), with it. `bench serve` replaces itself with
// bin/serve (noserve.go), so that the workloads' rows measure a program
// that does not link net/http: its packages and their init cost a Go
// program about 5 MiB of RSS (README.md, "One binary per role").
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"time"
)

// report is the protocol's JSON line.
type report struct {
	Workload string  `json:"workload"`
	N        int     `json:"n"`
	Buffer   *int    `json:"buffer"`
	Result   int64   `json:"result"`
	Results  []int64 `json:"results"`
	IterNs   []int64 `json:"iter_ns"`
	SpawnNs  *int64  `json:"spawn_ns,omitempty"`
	// The --warmup-ms runs, not iterations: [] (not null) without a warm-up.
	WarmupNs      []int64 `json:"warmup_ns"`
	WarmupResults []int64 `json:"warmup_results"`
	// chain only: the links of the untimed chain run before everything else.
	Primed  *int   `json:"primed,omitempty"`
	Runtime string `json:"runtime"`
}

type config struct {
	workload   string
	n          int
	buffer     int
	durationMs int
	iterations int
	warmupMs   int
	// collect: a full collection before each pass (set by run from
	// BENCH_COLLECT); ran: something ran before the next pass in this
	// process (the priming or a pass), so there is something to collect.
	// Neither is an option.
	collect bool
	ran     bool
}

const usage = `usage: bench WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]
       bench serve --port P --delay-ms D [--threads T]   (bench serve --help)

  WORKLOAD         sleep, chain, bounded or skynet (docs/protocol.md)
  --n N            number of tasks (> 0; skynet: leaves, a power of ten)
  --iterations K   in-process iterations, the first one cold (> 0)
  --buffer B       channel capacity, required by bounded (>= 0; 0 = unbuffered)
  --duration-ms D  how long each task sleeps, required by sleep (> 0)
  --warmup-ms W    run the workload until W ms have passed (at most 10000 runs) before the timed iterations (>= 0, default 0)`

// workloads: what each workload requires besides --n and --iterations.
var workloads = map[string]struct{ buffer, duration, powerOfTen bool }{
	"sleep":   {duration: true},
	"chain":   {},
	"bounded": {buffer: true},
	"skynet":  {powerOfTen: true},
}

// errHelp asks for the usage text on stdout and exit status 0.
var errHelp = errors.New("help requested")

// decimal is a flag value that takes base-10 integers only (flag.Int would
// also read "010" as octal 8 and "0x10" as 16).
type decimal struct {
	v   *int
	min int
}

func (d decimal) String() string {
	if d.v == nil {
		return ""
	}
	return strconv.Itoa(*d.v)
}

func (d decimal) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return errors.New("out of range")
		}
		return errors.New("not an integer")
	}
	if v < d.min {
		return fmt.Errorf("must be >= %d", d.min)
	}
	*d.v = v
	return nil
}

// parseArgs reads WORKLOAD and its options. Every error is one line; errHelp
// means --help or -h.
func parseArgs(args []string) (config, error) {
	for _, a := range args {
		if a == "--help" || a == "-h" || a == "-help" {
			return config{}, errHelp
		}
	}
	if len(args) < 1 {
		return config{}, errors.New("missing WORKLOAD (sleep, chain, bounded, skynet or serve); --help for usage")
	}
	cfg := config{workload: args[0]}
	needs, ok := workloads[cfg.workload]
	if !ok {
		return cfg, fmt.Errorf("unknown workload %q (want sleep, chain, bounded, skynet or serve)", cfg.workload)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the protocol wants one error line, not the usage text
	fs.Var(decimal{&cfg.n, 1}, "n", "")
	fs.Var(decimal{&cfg.iterations, 1}, "iterations", "")
	fs.Var(decimal{&cfg.buffer, 0}, "buffer", "")
	fs.Var(decimal{&cfg.durationMs, 1}, "duration-ms", "")
	fs.Var(decimal{&cfg.warmupMs, 0}, "warmup-ms", "")
	if err := fs.Parse(args[1:]); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	// W ms must fit a time.Duration, the warm-up's running total.
	if cfg.warmupMs > math.MaxInt64/int(time.Millisecond) {
		return cfg, fmt.Errorf("invalid value \"%d\" for flag -warmup-ms: out of range", cfg.warmupMs)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	required := []string{"n", "iterations"}
	if needs.buffer {
		required = append(required, "buffer")
	}
	if needs.duration {
		required = append(required, "duration-ms")
	}
	for _, name := range required {
		if !set[name] {
			return cfg, fmt.Errorf("%s needs --%s", cfg.workload, name)
		}
	}
	if needs.powerOfTen && !powerOfTen(cfg.n) {
		return cfg, fmt.Errorf("%s needs --n a power of ten (1, 10, 100, ...), got %d", cfg.workload, cfg.n)
	}
	return cfg, nil
}

// powerOfTen reports whether n is 1, 10, 100, ...
func powerOfTen(n int) bool {
	for n%10 == 0 && n > 0 {
		n /= 10
	}
	return n == 1
}

// now is the iterations' clock, chainRun the chain workload and collect the
// collection between passes: variables only so that the tests can watch
// when each is called (bench_test.go).
var (
	now      = time.Now
	chainRun = chain
	collect  = runtime.GC
)

// collectEnabled reads BENCH_COLLECT: only "0" turns the collection off
// (the variant IMPL[BENCH_COLLECT=0], docs/usage.md).
func collectEnabled() bool {
	return os.Getenv("BENCH_COLLECT") != "0"
}

// runOnce runs the workload once and times it, after a collection if
// cfg.collect and cfg.ran, and sets cfg.ran; spawn is sleep's start loop.
func runOnce(cfg *config) (result int64, elapsed, spawn time.Duration) {
	if cfg.collect && cfg.ran {
		// The last pass's garbage is collected here, before the clock,
		// not inside this pass (docs/protocol.md, "Collection between
		// passes"). Nothing of ours to collect before the first pass of a
		// fresh process; a full collection there only adds the collector's
		// own structures to the peak RSS (sleep N = 1: 2.4 -> 2.7 MiB).
		collect()
	}
	cfg.ran = true
	start := now()
	switch cfg.workload {
	case "sleep":
		result, spawn = sleepTasks(cfg.n, time.Duration(cfg.durationMs)*time.Millisecond)
	case "chain":
		result = chainRun(cfg.n)
	case "bounded":
		result = bounded(cfg.n, cfg.buffer)
	case "skynet":
		result = skynetRoot(cfg.n)
	}
	return result, now().Sub(start), spawn
}

// maxPrimeLinks bounds the priming chain (docs/protocol.md, "Priming").
const maxPrimeLinks = 1000

// prime runs one untimed chain of P = min(N, 1000) links with the code of
// the timed passes, before the warm-up and the iterations, and returns P.
// Go compiles ahead of time, so this changes no figure here (README.md);
// the protocol asks it of every language so that a JIT's first pass is not
// its compiler's.
func prime(cfg config) (int, error) {
	p := min(cfg.n, maxPrimeLinks)
	if got := chainRun(p); got != int64(p) {
		return p, fmt.Errorf("priming chain of %d links answered %d, want %d", p, got, p)
	}
	return p, nil
}

// maxWarmupRuns caps the warm-up's runs (docs/protocol.md): with N = 10 one
// run takes microseconds, and W ms of them would make the JSON line huge.
const maxWarmupRuns = 10000

// warmUp runs the workload, timed like an iteration, while the runs so far
// total less than W ms and number fewer than maxRuns; it returns each run's
// time in ns and its answer ([] and [], not nil, when W = 0).
func warmUp(cfg *config, maxRuns int) (ns, results []int64) {
	ns, results = []int64{}, []int64{}
	warmup := time.Duration(cfg.warmupMs) * time.Millisecond
	for total := time.Duration(0); total < warmup && len(ns) < maxRuns; {
		result, elapsed, _ := runOnce(cfg)
		total += elapsed
		ns = append(ns, elapsed.Nanoseconds())
		results = append(results, result)
	}
	return ns, results
}

// run primes (chain), warms up, then runs the K timed iterations, each run
// after a collection unless BENCH_COLLECT=0 or it is the process's first
// (no priming). An error (a wrong priming answer) is one line for stderr.
func run(cfg config) (report, error) {
	cfg.collect = collectEnabled()
	rep := report{Workload: cfg.workload, N: cfg.n, Runtime: runtime.Version()}
	if cfg.workload == "bounded" {
		b := cfg.buffer
		rep.Buffer = &b
	}
	if cfg.workload == "chain" {
		p, err := prime(cfg)
		if err != nil {
			return rep, err
		}
		rep.Primed = &p
		cfg.ran = true
	}
	rep.WarmupNs, rep.WarmupResults = warmUp(&cfg, maxWarmupRuns)
	for i := 0; i < cfg.iterations; i++ {
		result, elapsed, spawn := runOnce(&cfg)
		if cfg.workload == "sleep" && rep.SpawnNs == nil {
			s := spawn.Nanoseconds()
			rep.SpawnNs = &s
		}
		rep.IterNs = append(rep.IterNs, elapsed.Nanoseconds())
		rep.Results = append(rep.Results, result)
		rep.Result = result
	}
	return rep, nil
}

// serveMain runs `bench serve ARGS` and returns its exit status: the server
// itself (serve.go, built with -tags serve) or bin/serve in this process's
// place (noserve.go).
var serveMain func(args []string) int

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		os.Exit(serveMain(os.Args[2:]))
	}
	cfg, err := parseArgs(os.Args[1:])
	if errors.Is(err, errHelp) {
		fmt.Println(usage)
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	rep, err := run(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	line, err := json.Marshal(rep)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))
}
