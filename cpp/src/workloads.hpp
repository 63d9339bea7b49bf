// The five workloads of docs/protocol.md on the floor runtime (runtime.hpp).
// Each runs one iteration to the end: when it returns, every coroutine frame
// it made has been freed (fl::frames.live is back to where it was).
#pragma once

#include <cstdint>

namespace fl {

// N sleepers, each co_await sleep_for(duration_ns) then counts itself done;
// returns how many did. *spawn_ns: the time the start loop took.
std::int64_t sleep_tasks(std::int64_t n, std::int64_t duration_ns, std::int64_t* spawn_ns);

// N relays linked by N+1 rendezvous channels; returns the value read from c[N].
std::int64_t chain(std::int64_t n);

// N hot tasks, task i awaits task i-1 (task 0 a pending Event), yields once,
// returns x+1; returns the last task's value.
std::int64_t chain_await(std::int64_t n);

// One channel of capacity `buffer`, a consumer task summing N values, N
// producer tasks each sending its index; returns the sum.
std::int64_t bounded(std::int64_t n, std::int64_t buffer);

// The skynet tree over N leaves (N a power of ten); returns the sum.
std::int64_t skynet(std::int64_t n);

}  // namespace fl
