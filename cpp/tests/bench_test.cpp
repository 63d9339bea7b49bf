// Tests of the floor: the runtime's primitives, the five workloads (every
// coroutine frame freed after each), the argument parser, and the built
// program's protocol behaviour (exit status, stdout, stderr).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "runtime.hpp"
#include "workloads.hpp"

using namespace fl;

namespace {

std::int64_t triangle(std::int64_t n) { return n * (n - 1) / 2; }

// ---- runtime primitives

Task<int> answer() { co_return 42; }
Task<int> await_lazy() { co_return co_await answer() + 1; }

TEST(Runtime, LazyTaskAwaitedBySymmetricTransfer) {
    bool ok = false;
    EXPECT_EQ(run_root(await_lazy(), &ok), 43);
    EXPECT_TRUE(ok);
    EXPECT_EQ(frames.live, 0u);
}

Detached sleep_and_log(std::int64_t ms, std::vector<int>& order, int id) {
    co_await sleep_for(ms * 1'000'000);
    order.push_back(id);
}

Task<int> timers_out_of_order(std::vector<int>& order) {
    // Deadlines armed out of order must fire in deadline order: a general
    // timer heap, not a FIFO.
    sleep_and_log(30, order, 3).start();
    sleep_and_log(10, order, 1).start();
    sleep_and_log(20, order, 2).start();
    sleep_and_log(10, order, 1).start();
    co_await sleep_for(40 * 1'000'000);
    co_return int(order.size());
}

TEST(Runtime, TimersFireInDeadlineOrder) {
    std::vector<int> order;
    std::int64_t t0 = now_ns();
    EXPECT_EQ(run_root(timers_out_of_order(order)), 4);
    EXPECT_GE(now_ns() - t0, 40'000'000);
    EXPECT_EQ(order, (std::vector<int>{1, 1, 2, 3}));
    EXPECT_EQ(sched.timers_armed(), 0u);
    EXPECT_EQ(frames.live, 0u);
}

Detached rendezvous_sender(Rendezvous<int>& c, std::vector<std::string>& log) {
    log.push_back("send");
    co_await c.send(7);
    log.push_back("sent");
}

Task<int> rendezvous_main(std::vector<std::string>& log) {
    Rendezvous<int> c;
    rendezvous_sender(c, log).start();  // runs to its send and parks: nobody receives yet
    log.push_back("recv");
    int v = co_await c.recv();
    log.push_back("got");
    co_await yield_now();  // the sender, readied by the receive, runs now
    co_return v;
}

TEST(Runtime, RendezvousSenderWaitsForTheReceiver) {
    std::vector<std::string> log;
    EXPECT_EQ(run_root(rendezvous_main(log)), 7);
    EXPECT_EQ(log, (std::vector<std::string>{"send", "recv", "got", "sent"}));
    EXPECT_EQ(frames.live, 0u);
}

Detached channel_sender(Channel<int>& c, int v, int& sent) {
    co_await c.send(v);
    ++sent;
}

Task<int> channel_capacity(std::size_t cap, int n, std::vector<int>* sent_before_first_recv) {
    Channel<int> c(cap);
    int sent = 0;
    for (int i = 0; i < n; ++i) channel_sender(c, i, sent).start();
    sent_before_first_recv->push_back(sent);
    int sum = 0, prev = -1;
    for (int i = 0; i < n; ++i) {
        int v = co_await c.recv();
        if (v != prev + 1) co_return -1;  // FIFO order
        prev = v;
        sum += v;
    }
    while (sent < n) co_await yield_now();
    co_return sum;
}

TEST(Runtime, ChannelBuffersExactlyItsCapacityInOrder) {
    for (std::size_t cap : {0u, 1u, 3u, 40u, 100u}) {
        std::vector<int> sent;
        EXPECT_EQ(run_root(channel_capacity(cap, 50, &sent)), 50 * 49 / 2) << "capacity " << cap;
        EXPECT_EQ(sent.at(0), int(std::min<std::size_t>(cap, 50))) << "capacity " << cap;
        EXPECT_EQ(frames.live, 0u);
    }
}

// ---- workloads: answers, and every frame freed after each

TEST(Workloads, SleepTasksAllFinishAndOverlap) {
    std::int64_t spawn = -1, t0 = now_ns();
    EXPECT_EQ(sleep_tasks(1000, 50'000'000, &spawn), 1000);
    std::int64_t elapsed = now_ns() - t0;
    EXPECT_GE(elapsed, 50'000'000);
    EXPECT_LT(elapsed, 1'000'000'000);  // not one after another
    EXPECT_GE(spawn, 0);
    EXPECT_LT(spawn, elapsed);
    EXPECT_EQ(frames.live, 0u);
    EXPECT_EQ(sched.timers_armed(), 0u);
}

TEST(Workloads, Chain) {
    for (std::int64_t n : {1, 2, 1000, 100000}) {
        EXPECT_EQ(chain(n), n);
        EXPECT_EQ(frames.live, 0u) << "chain " << n;
    }
}

TEST(Workloads, ChainAwait) {
    // 1M links: the awaiter frees each finished task, so nothing recurses.
    for (std::int64_t n : {1, 2, 1000, 1000000}) {
        EXPECT_EQ(chain_await(n), n);
        EXPECT_EQ(frames.live, 0u) << "chain-await " << n;
    }
}

TEST(Workloads, Bounded) {
    for (auto [n, b] : std::vector<std::pair<std::int64_t, std::int64_t>>{
             {1, 0}, {10, 0}, {10, 1}, {1000, 0}, {1000, 1}, {1000, 100}, {1000, 10000}, {100, 1'000'000'000'000}}) {
        EXPECT_EQ(bounded(n, b), triangle(n)) << "n " << n << " buffer " << b;
        EXPECT_EQ(frames.live, 0u) << "n " << n << " buffer " << b;
    }
}

TEST(Workloads, Skynet) {
    for (std::int64_t n : {1, 10, 100, 10000}) {
        EXPECT_EQ(skynet(n), triangle(n));
        EXPECT_EQ(frames.live, 0u) << "skynet " << n;
    }
}

TEST(Workloads, RunReportsEveryIteration) {
    Config cfg;
    cfg.workload = "bounded";
    cfg.n = 100;
    cfg.buffer = 5;
    cfg.iterations = 3;
    std::string out = run(cfg);
    EXPECT_NE(out.find("\"results\": [4950, 4950, 4950]"), std::string::npos) << out;
    EXPECT_NE(out.find("\"buffer\": 5"), std::string::npos) << out;
    EXPECT_EQ(out.find("spawn_ns"), std::string::npos) << out;
    EXPECT_EQ(out.find('\n'), std::string::npos) << out;
    cfg = Config{};
    cfg.workload = "sleep";
    cfg.n = 10;
    cfg.iterations = 1;
    cfg.duration_ms = 5;
    out = run(cfg);
    EXPECT_NE(out.find("\"spawn_ns\": "), std::string::npos) << out;
    EXPECT_NE(out.find("\"buffer\": null"), std::string::npos) << out;
}

// The list of ints after "key": in run()'s JSON line.
std::vector<std::int64_t> int_list(const std::string& json, const std::string& key) {
    std::vector<std::int64_t> v;
    std::size_t at = json.find("\"" + key + "\": [");
    if (at == std::string::npos) return v;
    std::istringstream in(json.substr(json.find('[', at) + 1));
    std::int64_t x;
    char sep = ',';
    while (sep == ',' && in >> x >> sep) v.push_back(x);
    return v;
}

TEST(Workloads, RunWarmsUpUntilWMsHavePassed) {
    Config cfg;
    cfg.workload = "bounded";
    cfg.n = 1000;
    cfg.buffer = 1;
    cfg.iterations = 2;
    cfg.warmup_ms = 20;
    std::string out = run(cfg);
    std::vector<std::int64_t> ns = int_list(out, "warmup_ns"), results = int_list(out, "warmup_results");
    ASSERT_FALSE(ns.empty()) << out;
    EXPECT_EQ(results, std::vector<std::int64_t>(ns.size(), triangle(1000))) << out;
    std::int64_t total = 0;
    for (std::int64_t t : ns) total += t;
    // The last run is the one that makes the total reach W.
    EXPECT_GE(total, 20'000'000) << out;
    EXPECT_LT(total - ns.back(), 20'000'000) << out;
    EXPECT_EQ(int_list(out, "iter_ns").size(), 2u) << out;
    EXPECT_EQ(int_list(out, "results"), (std::vector<std::int64_t>{triangle(1000), triangle(1000)})) << out;
    EXPECT_EQ(frames.live, 0u);
    cfg.warmup_ms = 0;
    out = run(cfg);
    EXPECT_NE(out.find("\"warmup_ns\": [], \"warmup_results\": []"), std::string::npos) << out;
}

// The int after "key": in run()'s JSON line, or -1 if it has none.
std::int64_t int_key(const std::string& json, const std::string& key) {
    std::size_t at = json.find("\"" + key + "\": ");
    return at == std::string::npos ? -1 : std::stoll(json.substr(at + key.size() + 4));
}

TEST(Priming, ChainAndChainAwaitPrimeMinNAnd1000Links) {
    for (std::string w : {"chain", "chain-await"}) {
        for (std::int64_t n : {1, 5, 1000, 2000}) {
            Config cfg;
            cfg.workload = w;
            cfg.n = n;
            cfg.iterations = 2;
            std::string out = run(cfg);
            EXPECT_EQ(int_key(out, "primed"), std::min<std::int64_t>(n, 1000)) << out;
            EXPECT_EQ(int_list(out, "iter_ns").size(), 2u) << out;
            EXPECT_EQ(int_list(out, "results"), (std::vector<std::int64_t>{n, n})) << out;
            EXPECT_EQ(frames.live, 0u);
        }
    }
    Config cfg;
    cfg.workload = "skynet";
    cfg.n = 10;
    cfg.iterations = 1;
    EXPECT_EQ(prime(cfg), 0);
    EXPECT_EQ(run(cfg).find("primed"), std::string::npos);
}

// A Runner whose clock steps 1 ms a reading and whose workload answers
// answer(n); both log each call, in order.
Runner watched(std::vector<std::string>& log, std::int64_t (*answer)(std::int64_t)) {
    Runner r;
    auto t = std::make_shared<std::int64_t>(0);
    r.clock = [&log, t] {
        log.push_back("clock");
        return *t += 1'000'000;
    };
    r.workload = [&log, answer](const Config& cfg, std::int64_t*) {
        log.push_back(cfg.workload + " " + std::to_string(cfg.n));
        return answer(cfg.n);
    };
    return r;
}

TEST(Priming, RunsFirstUntimedAndOutsideEveryFigure) {
    for (std::string w : {"chain", "chain-await"}) {
        std::vector<std::string> log;
        Config cfg;
        cfg.workload = w;
        cfg.n = 2000;
        cfg.iterations = 2;
        cfg.warmup_ms = 1;  // one warm-up run: the fake clock gives it 1 ms
        std::string out = run(cfg, watched(log, [](std::int64_t n) { return n; }));
        std::vector<std::string> want = {
            w + " 1000",                       // the priming, before any clock reading
            "clock", w + " 2000", "clock",     // the warm-up run
            "clock", w + " 2000", "clock",     // iteration 1
            "clock", w + " 2000", "clock",     // iteration 2
        };
        EXPECT_EQ(log, want) << out;
        EXPECT_EQ(int_key(out, "primed"), 1000) << out;
        EXPECT_EQ(int_list(out, "iter_ns"), (std::vector<std::int64_t>{1'000'000, 1'000'000})) << out;
        EXPECT_EQ(int_list(out, "warmup_ns"), (std::vector<std::int64_t>{1'000'000})) << out;
        EXPECT_EQ(int_list(out, "results"), (std::vector<std::int64_t>{2000, 2000})) << out;
        EXPECT_EQ(int_list(out, "warmup_results"), (std::vector<std::int64_t>{2000})) << out;
    }
}

TEST(PrimingDeathTest, AWrongAnswerExits1WithOneLine) {
    Config cfg;
    cfg.workload = "chain";
    cfg.n = 5;
    cfg.iterations = 1;
    std::vector<std::string> log;
    EXPECT_EXIT(run(cfg, watched(log, [](std::int64_t n) { return n - 1; })), testing::ExitedWithCode(1),
                "bench: the priming chain of 5 links answered 4, want 5");
}

TEST(Workloads, WarmUpStopsAtTheRunCap) {
    Config cfg;
    cfg.workload = "bounded";
    cfg.n = 10;
    cfg.buffer = 1;
    cfg.iterations = 1;
    cfg.warmup_ms = 60'000;
    std::int64_t t0 = now_ns();
    Warmup w = warm_up(cfg, 3);
    EXPECT_EQ(w.ns.size(), 3u);
    EXPECT_EQ(w.results, (std::vector<std::int64_t>(3, triangle(10))));
    EXPECT_LT(now_ns() - t0, 5'000'000'000) << "the cap did not stop the warm-up";
    EXPECT_EQ(frames.live, 0u);
    EXPECT_EQ(kMaxWarmupRuns, 10000);
}

// ---- arguments

TEST(Args, GoodInput) {
    Parsed p = parse_args({"bounded", "--n", "5", "--iterations", "3", "--buffer", "0"});
    ASSERT_EQ(p.status, Parse::ok) << p.error;
    EXPECT_EQ(p.cfg.n, 5);
    EXPECT_EQ(p.cfg.iterations, 3);
    EXPECT_EQ(p.cfg.buffer, 0);
    EXPECT_EQ(p.cfg.warmup_ms, 0);
    for (std::int64_t w : {0, 50}) {
        p = parse_args({"chain", "--n", "5", "--warmup-ms", std::to_string(w), "--iterations", "1"});
        ASSERT_EQ(p.status, Parse::ok) << p.error;
        EXPECT_EQ(p.cfg.warmup_ms, w);
    }
    p = parse_args({"sleep", "--duration-ms", "20", "--n", "5", "--iterations", "1"});
    ASSERT_EQ(p.status, Parse::ok) << p.error;
    EXPECT_EQ(p.cfg.duration_ms, 20);
    EXPECT_EQ(parse_args({"skynet", "--n", "1000000", "--iterations", "1"}).status, Parse::ok);
    EXPECT_EQ(parse_args({"skynet", "--n", "1", "--iterations", "1"}).status, Parse::ok);
    EXPECT_EQ(parse_args({"chain", "--n", "9223372036854775807", "--iterations", "1"}).status, Parse::ok);
}

TEST(Args, Help) {
    for (auto args : std::vector<std::vector<std::string>>{{"--help"}, {"-h"}, {"chain", "--help"}})
        EXPECT_EQ(parse_args(args).status, Parse::help);
}

// docs/protocol.md's one table of bad input (docs/protocol-bad-input.json,
// which harness/tests/test_conformance.py runs against the built program), as
// docs/protocol-bad-input.tsv, its line-per-case form for tests without a JSON
// reader (BENCH_BAD_INPUT_TSV, from CMakeLists.txt): the cases for the
// workloads we declare (impls.toml). "{w}" is a workload's name, "{required}"
// its other required options (spliced).
std::vector<std::vector<std::string>> bad_input_table(const std::vector<std::string>& declared) {
    std::ifstream f(BENCH_BAD_INPUT_TSV);
    if (!f) {
        std::fprintf(stderr, "cannot read %s\n", BENCH_BAD_INPUT_TSV);
        std::abort();
    }
    std::map<std::string, std::vector<std::string>> required;
    std::vector<std::vector<std::string>> cases;  // WHEN, then ARG...
    for (std::string line; std::getline(f, line);) {
        std::vector<std::string> fields;
        std::istringstream ss(line);
        for (std::string field; std::getline(ss, field, '\t');) fields.push_back(field);
        if (fields.size() >= 2 && fields[0] == "required")
            required[fields[1]].assign(fields.begin() + 2, fields.end());
        else if (fields.size() >= 3 && fields[0] == "case")
            cases.emplace_back(fields.begin() + 2, fields.end());
    }
    auto is_declared = [&](const std::string& w) {
        return std::find(declared.begin(), declared.end(), w) != declared.end();
    };
    std::vector<std::vector<std::string>> out;
    for (const auto& c : cases) {
        const std::string& when = c[0];
        std::vector<std::string> workloads;
        if (when == "declared" || when == "undeclared") {
            for (const auto& entry : required)
                if (is_declared(entry.first) == (when == "declared")) workloads.push_back(entry.first);
        } else if (when == "always" || is_declared(when)) {
            workloads.push_back("");
        }
        for (const auto& w : workloads) {
            std::vector<std::string> args;
            for (auto a = c.begin() + 1; a != c.end(); ++a) {
                if (*a == "{w}")
                    args.push_back(w);
                else if (*a == "{required}")
                    args.insert(args.end(), required[w].begin(), required[w].end());
                else
                    args.push_back(*a);
            }
            out.push_back(args);
        }
    }
    if (out.size() <= 20) {
        std::fprintf(stderr, "%s: only %zu cases\n", BENCH_BAD_INPUT_TSV, out.size());
        std::abort();
    }
    return out;
}

// The table, then ours.
const std::vector<std::vector<std::string>> kBad = [] {
    std::vector<std::vector<std::string>> bad = bad_input_table({"sleep", "chain", "chain-await", "bounded", "skynet"});
    std::vector<std::vector<std::string>> ours = {
        {"serve", "--port", "0", "--delay-ms", "10"},  // no http here
        {"sleep", "--n", "10", "--iterations", "1", "--duration-ms", "99999999999999999"},
        {"skynet", "--n", "20", "--iterations", "1"},
        {"skynet", "--n", "1001", "--iterations", "1"},
        {"chain", "--n", "010x", "--iterations", "1"},
        {"chain", "--n", "0x10", "--iterations", "1"},
        {"chain", "--n", "+5", "--iterations", "1"},
        {"chain", "--n", "", "--iterations", "1"},
        {"chain", "--n", "-", "--iterations", "1"},
        {"chain", "--n", " 5", "--iterations", "1"},
        {"chain", "--n", "9223372036854775808", "--iterations", "1"},
        {"chain", "--n", "-9223372036854775809", "--iterations", "1"},
        {"chain", "--n", "10", "--iterations", "1", "extra"},
        {"chain", "--n", "10", "--n", "11", "--iterations", "1"},
        {"chain", "--n=10", "--iterations", "1"},
        {"bounded", "--n", "10", "--iterations", "1", "--buffer", "1", "--warmup-ms", "1.5"},
        {"chain", "--n", "10", "--iterations", "1", "--warmup-ms", "99999999999999999"},  // W ms in ns overflow
        {"chain", "--n", "10", "--iterations", "1", "--warmup-ms", "9223372036854775808"},
        {"chain", "--n", "10", "--iterations", "1", "--warmup-ms", "5", "--warmup-ms", "5"},
    };
    for (std::string w : {"sleep", "chain", "chain-await", "bounded", "skynet"})
        ours.push_back({w, "--n", "10", "--iterations"});
    bad.insert(bad.end(), ours.begin(), ours.end());
    return bad;
}();

std::string show(const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args) s += "'" + a + "' ";
    return s;
}

TEST(Args, BadInputIsOneLineError) {
    for (const auto& args : kBad) {
        Parsed p = parse_args(args);
        EXPECT_EQ(p.status, Parse::error) << show(args);
        EXPECT_FALSE(p.error.empty()) << show(args);
        EXPECT_EQ(p.error.find('\n'), std::string::npos) << show(args);
    }
}

// ---- the built program

struct Proc {
    int code;
    std::string out, err;
};

std::string slurp(const std::string& path) {
    std::ifstream f(path);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

Proc run_bench(const std::vector<std::string>& args) {
    std::string cmd = BENCH_PATH;
    for (const auto& a : args) {
        std::string q = "'";
        for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
        cmd += " " + q + "'";
    }
    std::string out = testing::TempDir() + "bench_out", err = testing::TempDir() + "bench_err";
    int status = std::system((cmd + " >" + out + " 2>" + err + " </dev/null").c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

int lines(const std::string& s) {
    int n = 0;
    for (char c : s) n += c == '\n';
    return n;
}

TEST(Program, BadInputExits2WithOneStderrLine) {
    for (const auto& args : kBad) {
        Proc p = run_bench(args);
        EXPECT_EQ(p.code, 2) << show(args);
        EXPECT_EQ(p.out, "") << show(args);
        EXPECT_EQ(lines(p.err), 1) << show(args) << p.err;
    }
    Proc p = run_bench({"chain", "--n", "1\n2", "--iterations", "1"});  // a newline in the input
    EXPECT_EQ(p.code, 2);
    EXPECT_EQ(lines(p.err), 1) << p.err;
}

TEST(Program, HelpExits0OnStdout) {
    for (std::string h : {"--help", "-h"}) {
        Proc p = run_bench({h});
        EXPECT_EQ(p.code, 0);
        EXPECT_EQ(p.err, "");
        EXPECT_EQ(p.out.rfind("usage: ", 0), 0u) << p.out;
    }
}

TEST(Program, GoodInputPrintsOneJSONLine) {
    Proc p = run_bench({"skynet", "--n", "100", "--iterations", "2"});
    EXPECT_EQ(p.code, 0) << p.err;
    EXPECT_EQ(p.err, "");
    EXPECT_EQ(lines(p.out), 1) << p.out;
    EXPECT_EQ(p.out.rfind("{\"workload\": \"skynet\", \"n\": 100, \"buffer\": null, \"result\": 4950, "
                          "\"results\": [4950, 4950], \"iter_ns\": [", 0),
              0u)
        << p.out;
    EXPECT_NE(p.out.find("\"warmup_ns\": [], \"warmup_results\": []"), std::string::npos) << p.out;
    p = run_bench({"bounded", "--n", "10", "--buffer", "0", "--iterations", "2", "--warmup-ms", "5"});
    EXPECT_EQ(p.code, 0) << p.err;
    EXPECT_EQ(p.err, "");
    EXPECT_EQ(lines(p.out), 1) << p.out;
    EXPECT_FALSE(int_list(p.out, "warmup_ns").empty()) << p.out;
    EXPECT_EQ(int_list(p.out, "warmup_results").size(), int_list(p.out, "warmup_ns").size()) << p.out;
    EXPECT_EQ(int_list(p.out, "iter_ns").size(), 2u) << p.out;
    EXPECT_EQ(p.out.find("primed"), std::string::npos) << p.out;  // bounded does not prime
}

TEST(Program, ChainsReportTheirPriming) {
    for (std::string w : {"chain", "chain-await"}) {
        for (std::int64_t n : {5, 2000}) {
            Proc p = run_bench({w, "--n", std::to_string(n), "--iterations", "2"});
            EXPECT_EQ(p.code, 0) << p.err;
            EXPECT_EQ(p.err, "");
            EXPECT_EQ(lines(p.out), 1) << p.out;
            EXPECT_EQ(int_key(p.out, "primed"), std::min<std::int64_t>(n, 1000)) << p.out;
            EXPECT_EQ(int_list(p.out, "iter_ns").size(), 2u) << p.out;
            EXPECT_EQ(int_list(p.out, "results"), (std::vector<std::int64_t>{n, n})) << p.out;
        }
    }
}

}  // namespace
