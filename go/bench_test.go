package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSleepTasksAllFinishAndOverlap(t *testing.T) {
	start := time.Now()
	got, spawn := sleepTasks(1000, 50*time.Millisecond)
	elapsed := time.Since(start)
	if got != 1000 {
		t.Fatalf("finished %d tasks, want 1000", got)
	}
	if spawn > elapsed {
		t.Fatalf("spawn time %v longer than the whole run %v", spawn, elapsed)
	}
	if elapsed < 50*time.Millisecond {
		t.Fatalf("run took %v, less than one sleep", elapsed)
	}
}

func TestChain(t *testing.T) {
	for _, n := range []int{1, 2, 1000} {
		if got := chain(n); got != int64(n) {
			t.Errorf("chain(%d) = %d", n, got)
		}
	}
}

func TestBounded(t *testing.T) {
	for _, tc := range []struct{ n, buffer int }{{1, 0}, {10, 0}, {10, 1}, {1000, 1}, {1000, 10000}} {
		want := int64(tc.n) * int64(tc.n-1) / 2
		if got := bounded(tc.n, tc.buffer); got != want {
			t.Errorf("bounded(%d, %d) = %d, want %d", tc.n, tc.buffer, got, want)
		}
	}
}

func TestSkynet(t *testing.T) {
	for _, n := range []int{1, 10, 100, 10000} {
		want := int64(n) * int64(n-1) / 2
		if got := skynetRoot(n); got != want {
			t.Errorf("skynetRoot(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestPowerOfTen(t *testing.T) {
	for n, want := range map[int]bool{1: true, 10: true, 1000000: true, 0: false, 2: false, 11: false, 20: false, 110: false, 1001: false} {
		if got := powerOfTen(n); got != want {
			t.Errorf("powerOfTen(%d) = %v, want %v", n, got, want)
		}
	}
}

// mustRun is run, failing the test on an error.
func mustRun(t *testing.T, cfg config) report {
	t.Helper()
	rep, err := run(cfg)
	if err != nil {
		t.Fatalf("run(%+v): %v", cfg, err)
	}
	return rep
}

func TestRunReportsEveryIteration(t *testing.T) {
	rep := mustRun(t, config{workload: "bounded", n: 100, buffer: 5, iterations: 3, durationMs: 1})
	if len(rep.IterNs) != 3 || len(rep.Results) != 3 || rep.Result != 4950 || *rep.Buffer != 5 {
		t.Fatalf("unexpected report %+v", rep)
	}
	if rep := mustRun(t, config{workload: "chain", n: 10, iterations: 2}); rep.Buffer != nil || rep.SpawnNs != nil {
		t.Fatalf("chain report should carry no buffer or spawn time: %+v", rep)
	}
	if rep := mustRun(t, config{workload: "skynet", n: 1000, iterations: 2}); rep.Buffer != nil || rep.Result != 499500 || len(rep.Results) != 2 {
		t.Fatalf("unexpected skynet report %+v", rep)
	}
}

func TestRunWarmsUpUntilWMsHavePassed(t *testing.T) {
	const w = 20 * time.Millisecond
	rep := mustRun(t, config{workload: "bounded", n: 1000, buffer: 1, iterations: 2, warmupMs: int(w / time.Millisecond)})
	if len(rep.WarmupNs) == 0 || len(rep.WarmupResults) != len(rep.WarmupNs) {
		t.Fatalf("want at least one warm-up run, one result each: %+v", rep)
	}
	for _, r := range rep.WarmupResults {
		if r != 499500 {
			t.Errorf("warm-up result %d, want 499500", r)
		}
	}
	var total time.Duration
	for _, ns := range rep.WarmupNs {
		total += time.Duration(ns)
	}
	last := time.Duration(rep.WarmupNs[len(rep.WarmupNs)-1])
	if total < w || total-last >= w {
		t.Errorf("warm-up runs %v: the last one must be the one that reaches %v", rep.WarmupNs, w)
	}
	if len(rep.IterNs) != 2 || len(rep.Results) != 2 || rep.Result != 499500 {
		t.Errorf("warm-up runs must not count as iterations: %+v", rep)
	}
	if rep := mustRun(t, config{workload: "chain", n: 10, iterations: 1}); rep.WarmupNs == nil || len(rep.WarmupNs) != 0 || rep.WarmupResults == nil || len(rep.WarmupResults) != 0 {
		t.Errorf("without --warmup-ms, want empty (non-nil) warm-up lists: %+v", rep)
	}
}

func TestChainPrimesMinNAnd1000Links(t *testing.T) {
	for _, n := range []int{5, 1000, 2000} {
		rep := mustRun(t, config{workload: "chain", n: n, iterations: 2})
		if rep.Primed == nil || *rep.Primed != min(n, 1000) {
			t.Errorf("N = %d: primed %v, want %d", n, rep.Primed, min(n, 1000))
		}
		if len(rep.IterNs) != 2 || !slices.Equal(rep.Results, []int64{int64(n), int64(n)}) {
			t.Errorf("N = %d: the priming must not count as an iteration: %+v", n, rep)
		}
	}
	for _, w := range []string{"bounded", "skynet"} {
		if rep := mustRun(t, config{workload: w, n: 10, buffer: 1, iterations: 1}); rep.Primed != nil {
			t.Errorf("%s primed %d: only chain primes", w, *rep.Primed)
		}
	}
}

// watch replaces the clock, the chain and the collection with fakes that log
// each call in order; the clock steps 1 ms a reading, so each timed pass
// takes 1 ms, and a collection moves it 1 s, so one inside a pass would show
// in its time. The collection is on (BENCH_COLLECT unset or not "0").
func watch(t *testing.T, answer func(n int) int64) *[]string {
	t.Helper()
	t.Setenv("BENCH_COLLECT", "")
	var log []string
	clock := time.Unix(0, 0)
	oldNow, oldChain, oldCollect := now, chainRun, collect
	t.Cleanup(func() { now, chainRun, collect = oldNow, oldChain, oldCollect })
	now = func() time.Time {
		log = append(log, "clock")
		clock = clock.Add(time.Millisecond)
		return clock
	}
	chainRun = func(n int) int64 {
		log = append(log, "chain "+strconv.Itoa(n))
		return answer(n)
	}
	collect = func() {
		log = append(log, "collect")
		clock = clock.Add(time.Second)
	}
	return &log
}

func TestPrimingRunsFirstAndUntimed(t *testing.T) {
	log := watch(t, func(n int) int64 { return int64(n) })
	rep := mustRun(t, config{workload: "chain", n: 2000, iterations: 2, warmupMs: 1})
	want := []string{
		"chain 1000",                              // the priming: before any clock reading or collection
		"collect", "clock", "chain 2000", "clock", // the warm-up's one run (1 ms reaches W)
		"collect", "clock", "chain 2000", "clock", // iteration 1
		"collect", "clock", "chain 2000", "clock", // iteration 2
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls %q, want %q", *log, want)
	}
	ms := time.Millisecond.Nanoseconds()
	if *rep.Primed != 1000 || !slices.Equal(rep.IterNs, []int64{ms, ms}) || !slices.Equal(rep.WarmupNs, []int64{ms}) ||
		!slices.Equal(rep.Results, []int64{2000, 2000}) || !slices.Equal(rep.WarmupResults, []int64{2000}) {
		t.Errorf("report %+v: the priming and the collections must be in no time or result", rep)
	}
}

func TestCollectionBeforeEachPassOutsideTheClock(t *testing.T) {
	log := watch(t, func(n int) int64 { return int64(n) })
	rep := mustRun(t, config{workload: "chain", n: 10, iterations: 3, warmupMs: 2})
	want := []string{"chain 10"} // the priming
	for range 2 + 3 {            // two warm-up runs of 1 ms reach W = 2 ms, then 3 iterations
		want = append(want, "collect", "clock", "chain 10", "clock")
	}
	if !slices.Equal(*log, want) {
		t.Errorf("calls %q, want %q", *log, want)
	}
	ms := time.Millisecond.Nanoseconds()
	if !slices.Equal(rep.IterNs, []int64{ms, ms, ms}) || !slices.Equal(rep.WarmupNs, []int64{ms, ms}) {
		t.Errorf("iter_ns %v, warmup_ns %v: each 1 ms, the collections' 1 s outside", rep.IterNs, rep.WarmupNs)
	}
	// The workloads without priming, with the real clock: one collection a
	// pass but the first.
	for _, w := range []string{"sleep", "bounded", "skynet"} {
		*log = nil
		now = time.Now
		rep := mustRun(t, config{workload: w, n: 10, buffer: 1, durationMs: 1, iterations: 2, warmupMs: 1})
		if got, passes := len(*log), len(rep.WarmupNs)+len(rep.IterNs); got != passes-1 {
			t.Errorf("%s: %d collections for %d passes", w, got, passes)
		}
	}
}

// Nothing ran before a fresh process's first pass without priming, so it
// has no collection; every later pass, and a first pass after the priming,
// has one.
func TestCollectionOnlyAfterSomethingRan(t *testing.T) {
	log := watch(t, func(n int) int64 { return int64(n) })
	pass := []string{"clock", "clock"} // bounded is real: only its clock is logged
	collected := append([]string{"collect"}, pass...)
	for _, c := range []struct {
		name string
		cfg  config
		want [][]string
	}{
		{"no priming, no warm-up", config{workload: "bounded", n: 10, buffer: 1, iterations: 3},
			[][]string{pass, collected, collected}},
		{"no priming, a warm-up of two runs", config{workload: "bounded", n: 10, buffer: 1, iterations: 2, warmupMs: 2},
			[][]string{pass, collected, collected, collected}},
		{"priming, no warm-up", config{workload: "chain", n: 10, iterations: 2},
			[][]string{{"chain 10"}, {"collect", "clock", "chain 10", "clock"}, {"collect", "clock", "chain 10", "clock"}}},
	} {
		*log = nil
		rep := mustRun(t, c.cfg)
		if want := slices.Concat(c.want...); !slices.Equal(*log, want) {
			t.Errorf("%s: calls %q, want %q", c.name, *log, want)
		}
		if len(rep.WarmupNs) != c.cfg.warmupMs || len(rep.IterNs) != c.cfg.iterations {
			t.Errorf("%s: warmup_ns %v, iter_ns %v: want W and K passes", c.name, rep.WarmupNs, rep.IterNs)
		}
		for _, ns := range append(rep.WarmupNs, rep.IterNs...) {
			if ns != time.Millisecond.Nanoseconds() {
				t.Errorf("%s: a pass of %d ns: each 1 ms, the collections' 1 s outside", c.name, ns)
			}
		}
	}
}

func TestBenchCollect0SkipsTheCollection(t *testing.T) {
	log := watch(t, func(n int) int64 { return int64(n) })
	t.Setenv("BENCH_COLLECT", "0")
	rep := mustRun(t, config{workload: "chain", n: 10, iterations: 2, warmupMs: 1})
	want := []string{
		"chain 10",
		"clock", "chain 10", "clock", // warm-up
		"clock", "chain 10", "clock", // iteration 1
		"clock", "chain 10", "clock", // iteration 2
	}
	if !slices.Equal(*log, want) {
		t.Errorf("BENCH_COLLECT=0: calls %q, want %q", *log, want)
	}
	if !slices.Equal(rep.Results, []int64{10, 10}) || *rep.Primed != 10 {
		t.Errorf("BENCH_COLLECT=0 changes no answer: %+v", rep)
	}
	// Only exactly "0" turns it off.
	for v, on := range map[string]bool{"0": false, "": true, "1": true, "00": true, " 0": true, "false": true} {
		t.Setenv("BENCH_COLLECT", v)
		if got := collectEnabled(); got != on {
			t.Errorf("BENCH_COLLECT=%q: collection %v, want %v", v, got, on)
		}
	}
}

func TestWrongPrimingAnswerIsAnError(t *testing.T) {
	log := watch(t, func(n int) int64 { return int64(n) - 1 })
	_, err := run(config{workload: "chain", n: 5, iterations: 2})
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "priming") {
		t.Errorf("a wrong priming answer: error %v, want one line about the priming", err)
	}
	if !slices.Equal(*log, []string{"chain 5"}) {
		t.Errorf("calls %q: nothing may run after a wrong priming answer", *log)
	}
}

func TestWarmUpStopsAtTheRunCap(t *testing.T) {
	start := time.Now()
	ns, results := warmUp(&config{workload: "bounded", n: 10, buffer: 1, warmupMs: 60000}, 3)
	if len(ns) != 3 || len(results) != 3 {
		t.Fatalf("cap 3, W = 60 s: want exactly 3 warm-up runs, got %d times, %d results", len(ns), len(results))
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("cap 3 took %v: the cap did not stop the warm-up", took)
	}
	if maxWarmupRuns != 10000 {
		t.Errorf("maxWarmupRuns = %d, docs/protocol.md says 10000", maxWarmupRuns)
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"bounded", "--n", "5", "--iterations", "3", "--buffer", "0"})
	if err != nil || cfg != (config{workload: "bounded", n: 5, iterations: 3, buffer: 0}) {
		t.Fatalf("parseArgs bounded: %+v, %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"sleep", "--n", "5", "--iterations", "1", "--duration-ms", "20"})
	if err != nil || cfg.durationMs != 20 {
		t.Fatalf("parseArgs sleep: %+v, %v", cfg, err)
	}
	for _, w := range []int{0, 50} {
		cfg, err = parseArgs([]string{"chain", "--n", "5", "--warmup-ms", strconv.Itoa(w), "--iterations", "1"})
		if err != nil || cfg.warmupMs != w {
			t.Fatalf("parseArgs --warmup-ms %d: %+v, %v", w, cfg, err)
		}
	}
	for _, help := range [][]string{{"--help"}, {"-h"}, {"chain", "--help"}} {
		if _, err := parseArgs(help); !errors.Is(err, errHelp) {
			t.Errorf("parseArgs(%q) = %v, want errHelp", help, err)
		}
	}
	for _, args := range badArgs {
		if _, err := parseArgs(args); err == nil || errors.Is(err, errHelp) || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseArgs(%q) = %v, want a one-line error", args, err)
		}
	}
}

// goWorkloads are the program workloads Go declares in impls.toml.
var goWorkloads = []string{"sleep", "chain", "bounded", "skynet"}

// badInput is docs/protocol-bad-input.json: docs/protocol.md's one table of
// bad input, which harness/tests/test_conformance.py runs too.
type badInput struct {
	Required map[string][]string
	Cases    []struct {
		When string
		Args []string
	}
}

// expand gives a case's args for workload w: "{w}" its name, "{required}"
// its other required options (spliced).
func (b badInput) expand(args []string, w string) []string {
	out := []string{}
	for _, a := range args {
		switch a {
		case "{required}":
			out = append(out, b.Required[w]...)
		case "{w}":
			out = append(out, w)
		default:
			out = append(out, a)
		}
	}
	return out
}

// badArgs is the shared table, for every workload Go implements, then ours.
var badArgs = func() [][]string {
	data, err := os.ReadFile("../docs/protocol-bad-input.json")
	if err != nil {
		panic(err)
	}
	var table badInput
	if err := json.Unmarshal(data, &table); err != nil {
		panic(err)
	}
	declared := func(w string) bool { return slices.Contains(goWorkloads, w) }
	bad := [][]string{
		{"chain", "--n", "010x", "--iterations", "1"},
		{"chain", "--n", "0x10", "--iterations", "1"},
		{"chain", "--n", "10", "--iterations", "1", "extra"},
		{"skynet", "--n", "20", "--iterations", "1"}, // not a power of ten
		{"skynet", "--n", "2", "--iterations", "1"},
		{"skynet", "--n", "1001", "--iterations", "1"},
		{"bounded", "--n", "10", "--iterations", "1", "--buffer", "1", "--warmup-ms", "1.5"},
		{"chain", "--n", "10", "--iterations", "1", "--warmup-ms", "99999999999999999"},       // W ms overflow a Duration
		{"chain", "--n", "10", "--iterations", "1", "--warmup-ms", "99999999999999999999999"}, // overflows an int
	}
	for _, c := range table.Cases {
		switch {
		case c.When == "" || declared(c.When):
			bad = append(bad, c.Args)
		case c.When == "declared":
			for _, w := range goWorkloads {
				bad = append(bad, table.expand(c.Args, w))
			}
		case c.When == "undeclared":
			for w := range table.Required {
				if !declared(w) {
					bad = append(bad, table.expand(c.Args, w))
				}
			}
		}
	}
	return bad
}()

// TestMain lets the tests below run this test binary as the program itself.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_RUN_MAIN") == "1" {
		os.Args = append([]string{"bench"}, os.Args[1:]...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runMain runs main() in a child process with args; it returns the exit
// status, stdout and stderr.
func runMain(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "BENCH_RUN_MAIN=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

func TestBadInputExits2WithOneStderrLine(t *testing.T) {
	for _, args := range badArgs {
		code, stdout, stderr := runMain(t, args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2, nothing, one line", args, code, stdout, stderr)
		}
	}
}

func TestHelpExits0OnStdout(t *testing.T) {
	for _, h := range []string{"--help", "-h"} {
		code, stdout, stderr := runMain(t, h)
		if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "usage: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", h, code, stdout, stderr)
		}
	}
}

func TestGoodInputPrintsOneJSONLine(t *testing.T) {
	code, stdout, stderr := runMain(t, "bounded", "--n", "10", "--buffer", "0", "--iterations", "2")
	if code != 0 || stderr != "" || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	var rep report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Result != 45 || len(rep.IterNs) != 2 {
		t.Fatalf("report %q: %+v, %v", stdout, rep, err)
	}
	if !strings.Contains(stdout, `"warmup_ns":[],"warmup_results":[]`) || strings.Contains(stdout, "primed") {
		t.Errorf("without --warmup-ms, want empty warm-up lists, and no priming but chain's: %q", stdout)
	}
	for _, n := range []int{5, 2000} {
		code, stdout, stderr = runMain(t, "chain", "--n", strconv.Itoa(n), "--iterations", "2")
		var got struct {
			Primed *int
			IterNs []int64 `json:"iter_ns"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); code != 0 || stderr != "" || err != nil ||
			got.Primed == nil || *got.Primed != min(n, 1000) || len(got.IterNs) != 2 {
			t.Errorf("chain --n %d: exit %d, stdout %q, stderr %q; want primed %d and 2 iter_ns", n, code, stdout, stderr, min(n, 1000))
		}
	}
	code, stdout, stderr = runMain(t, "bounded", "--n", "10", "--buffer", "0", "--iterations", "2", "--warmup-ms", "5")
	rep = report{}
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || stderr != "" || err != nil || len(rep.WarmupNs) == 0 || len(rep.WarmupResults) != len(rep.WarmupNs) || len(rep.IterNs) != 2 {
		t.Fatalf("--warmup-ms 5: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
