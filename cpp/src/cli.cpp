#include "cli.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include "runtime.hpp"
#include "workloads.hpp"

namespace fl {

const char* const usage =
    "usage: bench WORKLOAD --n N --iterations K [--buffer B] [--duration-ms D] [--warmup-ms W]\n"
    "\n"
    "  WORKLOAD         sleep, chain, chain-await, bounded or skynet (docs/protocol.md)\n"
    "  --n N            number of tasks (> 0; skynet: a power of ten)\n"
    "  --iterations K   in-process iterations, the first one cold (> 0)\n"
    "  --buffer B       channel capacity, required by bounded (>= 0; 0 = rendezvous)\n"
    "  --duration-ms D  how long each task sleeps, required by sleep (> 0)\n"
    "  --warmup-ms W    run the workload until W ms have passed (at most 10000 runs) before the timed iterations (>= 0, default 0)\n"
    "\n"
    "C++20 coroutines on a hand-rolled single-threaded scheduler: the floor.\n";

namespace {

const char* const kWorkloads[] = {"sleep", "chain", "chain-await", "bounded", "skynet"};

// A base-10 integer, an optional '-' then digits only, within [min, max].
bool parse_int(const std::string& s, std::int64_t min, std::int64_t max, std::int64_t* out,
               std::string* why) {
    std::size_t i = 0;
    bool neg = false;
    if (i < s.size() && s[i] == '-') {
        neg = true;
        ++i;
    }
    if (i == s.size()) {
        *why = "not an integer";
        return false;
    }
    // Accumulate as a negative number so that INT64_MIN fits too.
    std::int64_t v = 0;
    bool overflow = false;
    for (; i < s.size(); ++i) {
        char ch = s[i];
        if (ch < '0' || ch > '9') {
            *why = "not an integer";
            return false;
        }
        int d = ch - '0';
        if (v < (std::numeric_limits<std::int64_t>::min() + d) / 10) overflow = true;
        if (!overflow) v = v * 10 - d;
    }
    if (overflow || (!neg && v == std::numeric_limits<std::int64_t>::min())) {
        *why = "out of range";
        return false;
    }
    if (!neg) v = -v;
    if (v < min) {
        *why = "must be >= " + std::to_string(min);
        return false;
    }
    if (v > max) {
        *why = "must be <= " + std::to_string(max);
        return false;
    }
    *out = v;
    return true;
}

Parsed fail(std::string msg) {
    Parsed p;
    p.status = Parse::error;
    p.error = std::move(msg);
    return p;
}

bool power_of_ten(std::int64_t n) {
    while (n % 10 == 0) n /= 10;
    return n == 1;
}

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
// D ms must fit a nanosecond deadline: D * 1e6 + now < 2^63.
constexpr std::int64_t kMaxDurationMs = kMax / 1'000'000 / 2;
// W ms must fit the warm-up's running total in ns, which passes W by one run.
constexpr std::int64_t kMaxWarmupMs = kMax / 1'000'000 / 2;

struct Run {
    std::int64_t result, ns, spawn;
};

// Exits 1 (one stderr line) if the run just made left a coroutine frame
// alive; `what` and `index` name the run there.
void check_frames(std::size_t live_before, const char* what, std::size_t index) {
    if (frames.live != live_before) {
        std::fprintf(stderr, "bench: %zu coroutine frames still alive after %s %zu\n",
                     frames.live - live_before, what, index + 1);
        std::exit(1);
    }
}

// One run of the workload, timed by runner.clock.
Run run_once(const Config& cfg, const Runner& runner, const char* what, std::size_t index) {
    std::size_t live_before = frames.live;
    Run r{0, 0, 0};
    std::int64_t t0 = runner.clock();
    r.result = runner.workload(cfg, &r.spawn);
    r.ns = runner.clock() - t0;
    check_frames(live_before, what, index);
    return r;
}

}  // namespace

std::int64_t Runner::now() { return now_ns(); }

std::int64_t run_workload(const Config& cfg, std::int64_t* spawn_ns) {
    if (cfg.workload == "sleep") return sleep_tasks(cfg.n, cfg.duration_ms * 1'000'000, spawn_ns);
    if (cfg.workload == "chain") return chain(cfg.n);
    if (cfg.workload == "chain-await") return chain_await(cfg.n);
    if (cfg.workload == "bounded") return bounded(cfg.n, cfg.buffer);
    return skynet(cfg.n);
}

std::int64_t prime(const Config& cfg, const Runner& runner) {
    if (cfg.workload != "chain" && cfg.workload != "chain-await") return 0;
    Config small = cfg;
    small.n = std::min(cfg.n, kMaxPrimeLinks);
    std::size_t live_before = frames.live;
    std::int64_t spawn = 0;
    std::int64_t answer = runner.workload(small, &spawn);  // untimed: no clock read
    check_frames(live_before, "the priming run", 0);
    if (answer != small.n) {
        std::fprintf(stderr, "bench: the priming %s of %lld links answered %lld, want %lld\n",
                     cfg.workload.c_str(), static_cast<long long>(small.n), static_cast<long long>(answer),
                     static_cast<long long>(small.n));
        std::exit(1);
    }
    return small.n;
}

Parsed parse_args(const std::vector<std::string>& args) {
    for (const auto& a : args)
        if (a == "--help" || a == "-h") {
            Parsed p;
            p.status = Parse::help;
            return p;
        }
    if (args.empty()) return fail("missing WORKLOAD (sleep, chain, chain-await, bounded or skynet); --help for usage");
    Config cfg;
    cfg.workload = args[0];
    bool known = false;
    for (const char* w : kWorkloads) known = known || cfg.workload == w;
    if (!known)
        return fail("unknown workload \"" + cfg.workload +
                    "\" (want sleep, chain, chain-await, bounded or skynet)");
    bool have_n = false, have_iter = false, have_buffer = false, have_duration = false, have_warmup = false;
    for (std::size_t i = 1; i < args.size(); i += 2) {
        const std::string& opt = args[i];
        std::int64_t* dst;
        bool* seen;
        std::int64_t min, max = kMax;
        if (opt == "--n") {
            dst = &cfg.n, seen = &have_n, min = 1;
        } else if (opt == "--iterations") {
            dst = &cfg.iterations, seen = &have_iter, min = 1;
        } else if (opt == "--buffer") {
            dst = &cfg.buffer, seen = &have_buffer, min = 0;
        } else if (opt == "--duration-ms") {
            dst = &cfg.duration_ms, seen = &have_duration, min = 1, max = kMaxDurationMs;
        } else if (opt == "--warmup-ms") {
            dst = &cfg.warmup_ms, seen = &have_warmup, min = 0, max = kMaxWarmupMs;
        } else if (opt.rfind("-", 0) == 0) {
            return fail("unknown option \"" + opt + "\"");
        } else {
            return fail("unexpected argument \"" + opt + "\"");
        }
        if (*seen) return fail(opt + " given twice");
        if (i + 1 >= args.size()) return fail(opt + " needs a value");
        std::string why;
        if (!parse_int(args[i + 1], min, max, dst, &why))
            return fail(opt + " \"" + args[i + 1] + "\": " + why);
        *seen = true;
    }
    if (!have_n) return fail(cfg.workload + " needs --n");
    if (!have_iter) return fail(cfg.workload + " needs --iterations");
    if (cfg.workload == "bounded" && !have_buffer) return fail("bounded needs --buffer");
    if (cfg.workload == "sleep" && !have_duration) return fail("sleep needs --duration-ms");
    if (cfg.workload == "skynet" && !power_of_ten(cfg.n))
        return fail("skynet needs N a power of ten (1, 10, 100, ...): 10 children a node");
    Parsed p;
    p.status = Parse::ok;
    p.cfg = cfg;
    return p;
}

Warmup warm_up(const Config& cfg, std::int64_t max_runs, const Runner& runner) {
    Warmup w;
    for (std::int64_t total = 0;
         total < cfg.warmup_ms * 1'000'000 && static_cast<std::int64_t>(w.ns.size()) < max_runs;) {
        Run r = run_once(cfg, runner, "warm-up run", w.ns.size());
        total += r.ns;
        w.ns.push_back(r.ns);
        w.results.push_back(r.result);
    }
    return w;
}

std::string run(const Config& cfg, const Runner& runner) {
    std::int64_t primed = prime(cfg, runner);
    Warmup warmup = warm_up(cfg, kMaxWarmupRuns, runner);
    std::vector<std::int64_t> results, iter_ns;
    std::int64_t spawn_ns = -1;
    for (std::int64_t it = 0; it < cfg.iterations; ++it) {
        Run r = run_once(cfg, runner, "iteration", iter_ns.size());
        iter_ns.push_back(r.ns);
        results.push_back(r.result);
        if (it == 0) spawn_ns = r.spawn;
    }
    auto list = [](const std::vector<std::int64_t>& v) {
        std::string s = "[";
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
        return s + "]";
    };
    std::string out = "{\"workload\": \"" + cfg.workload + "\", \"n\": " + std::to_string(cfg.n) +
                      ", \"buffer\": " + (cfg.workload == "bounded" ? std::to_string(cfg.buffer) : "null") +
                      ", \"result\": " + std::to_string(results.back()) + ", \"results\": " + list(results) +
                      ", \"iter_ns\": " + list(iter_ns);
    if (cfg.workload == "sleep") out += ", \"spawn_ns\": " + std::to_string(spawn_ns);
    out += ", \"warmup_ns\": " + list(warmup.ns) + ", \"warmup_results\": " + list(warmup.results);
    if (primed > 0) out += ", \"primed\": " + std::to_string(primed);
    out += ", \"frame_bytes\": " + std::to_string(frames.last_bytes);
    out += ", \"runtime\": \"g++ " __VERSION__ ", C++20 coroutines, single-threaded\"}";
    return out;
}

}  // namespace fl
