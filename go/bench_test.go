package main

import (
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

func TestRunReportsEveryIteration(t *testing.T) {
	rep := run(config{workload: "bounded", n: 100, buffer: 5, iterations: 3, durationMs: 1})
	if len(rep.IterNs) != 3 || len(rep.Results) != 3 || rep.Result != 4950 || *rep.Buffer != 5 {
		t.Fatalf("unexpected report %+v", rep)
	}
	if rep := run(config{workload: "chain", n: 10, iterations: 2}); rep.Buffer != nil || rep.SpawnNs != nil {
		t.Fatalf("chain report should carry no buffer or spawn time: %+v", rep)
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"chain", "--n", "5"})
	if err != nil || cfg.n != 5 || cfg.iterations != 2 {
		t.Fatalf("parseArgs chain: %+v, %v", cfg, err)
	}
	bad := [][]string{
		{},
		{"nope", "--n", "5"},
		{"sleep"},
		{"sleep", "--n", "-1"},
		{"sleep", "--n", "x"},
		{"bounded", "--n", "5", "--buffer", "-1"},
		{"sleep", "--n", "5", "--bogus"},
		{"sleep", "--n", "5", "extra"},
	}
	for _, args := range bad {
		if _, err := parseArgs(args); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("parseArgs(%q) = %v, want a one-line error", args, err)
		}
	}
}
