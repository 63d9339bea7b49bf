#include "workloads.hpp"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime.hpp"

namespace fl {
namespace {

template <class T>
T run_or_die(Task<T> root) {
    bool ok = false;
    T v = run_root(std::move(root), &ok);
    if (!ok) {
        std::fputs("bench: internal error: the scheduler ran dry before the workload ended\n", stderr);
        std::exit(1);
    }
    return v;
}

// ---- sleep

Detached sleeper(std::int64_t duration_ns, Latch& done) {
    co_await sleep_for(duration_ns);
    done.arrive();
}

Task<std::int64_t> sleep_main(std::int64_t n, std::int64_t duration_ns, std::int64_t* spawn_ns) {
    Latch done{std::size_t(n)};
    std::int64_t t0 = now_ns();
    // Started inline: each sleeper runs at once to its co_await, which arms
    // its timer; nothing can fire before this loop ends (one thread), so the
    // tasks overlap whatever the start time ("after-spawning" in impls.toml).
    for (std::int64_t i = 0; i < n; ++i) sleeper(duration_ns, done).start();
    *spawn_ns = now_ns() - t0;
    co_await done.wait();
    co_return std::int64_t(done.count());
}

// ---- chain

Detached relay(Rendezvous<std::int64_t>& in, Rendezvous<std::int64_t>& out) {
    std::int64_t x = co_await in.recv();
    co_await out.send(x + 1);
}

Task<std::int64_t> chain_main(std::int64_t n) {
    std::vector<Rendezvous<std::int64_t>> c(std::size_t(n) + 1);
    for (std::int64_t i = 0; i < n; ++i) relay(c[i], c[i + 1]).spawn();
    co_await c[0].send(0);
    co_return co_await c[n].recv();
}

// ---- chain-await

Task<std::int64_t> first_link(Event<std::int64_t>& source) {
    std::int64_t x = co_await source;
    co_await yield_now();
    co_return x + 1;
}

Task<std::int64_t> link(Task<std::int64_t> prev) {
    std::int64_t x = co_await std::move(prev);  // frees prev's frame once it has the value
    co_await yield_now();
    co_return x + 1;
}

Task<std::int64_t> chain_await_main(std::int64_t n) {
    Event<std::int64_t> source;
    Task<std::int64_t> last = first_link(source);
    last.start();  // hot, as a C# Task: runs to its await on the pending source
    for (std::int64_t i = 1; i < n; ++i) {
        last = link(std::move(last));
        last.start();
    }
    source.set(0);
    co_return co_await std::move(last);
}

// ---- bounded

Task<std::int64_t> consumer(Channel<std::int64_t>& ch, std::int64_t n) {
    std::int64_t sum = 0;
    for (std::int64_t i = 0; i < n; ++i) sum += co_await ch.recv();
    co_return sum;
}

Detached producer(Channel<std::int64_t>& ch, std::int64_t i, Latch& done) {
    co_await ch.send(i);
    done.arrive();
}

Task<std::int64_t> bounded_main(std::int64_t n, std::int64_t buffer) {
    Channel<std::int64_t> ch{std::size_t(buffer)};
    Latch producers{std::size_t(n)};
    Task<std::int64_t> sum = consumer(ch, n);
    sum.spawn();
    for (std::int64_t i = 0; i < n; ++i) producer(ch, i, producers).spawn();
    std::int64_t total = co_await std::move(sum);
    co_await producers.wait();
    co_return total;
}

// ---- skynet
//
// A leaf is its own coroutine: a frame's size is fixed per coroutine function
// (the largest state), and a node's carries its 10 children's handles, which
// a leaf never uses. Every node, leaves included, is still a spawned task:
// the split only keeps the 1M leaves' frames at the leaf's own size (56 bytes
// against 232; measured at N = 1M: peak RSS 99 MB against 271 MB, and about
// twice as fast, since the FIFO scheduler holds the whole tree at once).

Task<std::int64_t> leaf(std::int64_t num) { co_return num; }

Task<std::int64_t> node(std::int64_t num, std::int64_t size);

Task<std::int64_t> tree(std::int64_t num, std::int64_t size) {
    return size == 1 ? leaf(num) : node(num, size);
}

Task<std::int64_t> node(std::int64_t num, std::int64_t size) {
    std::int64_t step = size / 10;
    Task<std::int64_t> kids[10];
    for (int k = 0; k < 10; ++k) {
        kids[k] = tree(num + k * step, step);
        kids[k].spawn();  // all 10 queued before the first is awaited
    }
    std::int64_t sum = 0;
    for (auto& kid : kids) sum += co_await std::move(kid);
    co_return sum;
}

}  // namespace

std::int64_t sleep_tasks(std::int64_t n, std::int64_t duration_ns, std::int64_t* spawn_ns) {
    return run_or_die(sleep_main(n, duration_ns, spawn_ns));
}

std::int64_t chain(std::int64_t n) { return run_or_die(chain_main(n)); }

std::int64_t chain_await(std::int64_t n) { return run_or_die(chain_await_main(n)); }

std::int64_t bounded(std::int64_t n, std::int64_t buffer) { return run_or_die(bounded_main(n, buffer)); }

std::int64_t skynet(std::int64_t n) { return run_or_die(tree(0, n)); }

}  // namespace fl
