// Command bench runs one concurrency workload and prints one JSON line,
// following docs/protocol.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
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
	Runtime  string  `json:"runtime"`
}

type config struct {
	workload   string
	n          int
	buffer     int
	durationMs int
	iterations int
}

var defaultIterations = map[string]int{"sleep": 1, "chain": 2, "bounded": 10}

func parseArgs(args []string) (config, error) {
	if len(args) < 1 {
		return config{}, errors.New("usage: bench WORKLOAD --n N [--buffer B] [--duration-ms D] [--iterations K]")
	}
	cfg := config{workload: args[0]}
	iters, ok := defaultIterations[cfg.workload]
	if !ok {
		return cfg, fmt.Errorf("unknown workload %q (want sleep, chain or bounded)", cfg.workload)
	}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the protocol wants one error line, not the usage text
	fs.IntVar(&cfg.n, "n", 0, "number of tasks")
	fs.IntVar(&cfg.buffer, "buffer", 1, "channel capacity for bounded (0 = unbuffered)")
	fs.IntVar(&cfg.durationMs, "duration-ms", 10000, "sleep duration")
	fs.IntVar(&cfg.iterations, "iterations", iters, "iterations")
	if err := fs.Parse(args[1:]); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.n < 1:
		return cfg, errors.New("--n must be a positive integer")
	case cfg.buffer < 0:
		return cfg, errors.New("--buffer must be >= 0")
	case cfg.durationMs < 1:
		return cfg, errors.New("--duration-ms must be a positive integer")
	case cfg.iterations < 1:
		return cfg, errors.New("--iterations must be a positive integer")
	}
	return cfg, nil
}

func run(cfg config) report {
	rep := report{Workload: cfg.workload, N: cfg.n, Runtime: runtime.Version()}
	if cfg.workload == "bounded" {
		b := cfg.buffer
		rep.Buffer = &b
	}
	for i := 0; i < cfg.iterations; i++ {
		var result int64
		start := time.Now()
		switch cfg.workload {
		case "sleep":
			var spawn time.Duration
			result, spawn = sleepTasks(cfg.n, time.Duration(cfg.durationMs)*time.Millisecond)
			if rep.SpawnNs == nil {
				s := spawn.Nanoseconds()
				rep.SpawnNs = &s
			}
		case "chain":
			result = chain(cfg.n)
		case "bounded":
			result = bounded(cfg.n, cfg.buffer)
		}
		rep.IterNs = append(rep.IterNs, time.Since(start).Nanoseconds())
		rep.Results = append(rep.Results, result)
		rep.Result = result
	}
	return rep
}

func main() {
	cfg, err := parseArgs(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	line, err := json.Marshal(run(cfg))
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))
}
