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

// Runs cfg.iterations iterations and returns the JSON line (no newline).
// Exits 1 (one stderr line) if an iteration leaves a coroutine frame alive.
std::string run(const Config& cfg);

}  // namespace fl
