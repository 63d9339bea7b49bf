// Arguments and the JSON line of docs/protocol.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace fl {

struct Config {
    std::string workload;
    std::int64_t n = 0;
    std::int64_t iterations = 0;
    std::int64_t buffer = -1;       // -1: not given
    std::int64_t duration_ms = 0;   // 0: not given
    std::int64_t warmup_ms = 0;
};

enum class Parse { ok, help, error };

struct Parsed {
    Parse status = Parse::error;
    Config cfg;
    std::string error;  // one line, no newline
};

extern const char* const usage;

// args excludes the program name.
Parsed parse_args(const std::vector<std::string>& args);

// The warm-up stops after this many runs even if they total less than W ms
// (docs/protocol.md): with N = 10 a run takes microseconds, and W ms of them
// would make the JSON line huge.
constexpr std::int64_t kMaxWarmupRuns = 10000;

struct Warmup {
    std::vector<std::int64_t> ns, results;  // each warm-up run's time and answer
};

// One untimed run of cfg.workload at cfg.n: its answer; *spawn_ns is sleep's
// start loop.
std::int64_t run_workload(const Config& cfg, std::int64_t* spawn_ns);

// What run() calls: the clock of the timed runs and the workload. The tests
// put fakes in to see what is timed and in what order.
struct Runner {
    std::function<std::int64_t()> clock = now;
    std::function<std::int64_t(const Config&, std::int64_t*)> workload = run_workload;

private:
    static std::int64_t now();
};

// The priming chain has P = min(N, this) links (docs/protocol.md, "Priming").
constexpr std::int64_t kMaxPrimeLinks = 1000;

// The priming of chain and chain-await (docs/protocol.md): one untimed run
// of P = min(N, kMaxPrimeLinks) links with the timed passes' code; returns P,
// or 0 for a workload that does not prime. Exits 1 (one stderr line) if its
// answer is not P or it leaves a frame alive.
std::int64_t prime(const Config& cfg, const Runner& runner = {});

// The warm-up: another run while the runs so far total less than
// cfg.warmup_ms ms and number fewer than max_runs (run() passes
// kMaxWarmupRuns). Exits 1 like run() if a run leaves a frame alive.
Warmup warm_up(const Config& cfg, std::int64_t max_runs, const Runner& runner = {});

// Primes (chain, chain-await), runs the warm-up runs, then cfg.iterations
// iterations, and returns the JSON line (no newline). Exits 1 (one stderr
// line) if a run leaves a coroutine frame alive or the priming's answer is
// wrong.
std::string run(const Config& cfg, const Runner& runner = {});

}  // namespace fl
