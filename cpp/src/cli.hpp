// Arguments and the JSON line of docs/protocol.md.
#pragma once

#include <cstdint>
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

// The warm-up: another run while the runs so far total less than
// cfg.warmup_ms ms and number fewer than max_runs (run() passes
// kMaxWarmupRuns). Exits 1 like run() if a run leaves a frame alive.
Warmup warm_up(const Config& cfg, std::int64_t max_runs);

// Runs the warm-up runs, then cfg.iterations iterations, and returns the JSON
// line (no newline). Exits 1 (one stderr line) if a run leaves a coroutine
// frame alive.
std::string run(const Config& cfg);

}  // namespace fl
