// The floor runtime: C++20 coroutines and a hand-rolled single-threaded
// scheduler, nothing else.
//
// Why no third-party library (no cppcoro, libunifex, Asio, folly, seastar):
// this implementation is the unit the report reads every other runtime
// against, the cheapest a sleeping task, a channel hop or a spawned task can
// be on this machine. That figure must be nothing but the coroutine frames
// (allocated with the default operator new, as every coroutine's is) and the
// scheduler below: a FIFO ring of ready handles and a binary min-heap of
// timers. Any library would add its own bookkeeping (type-erased callbacks,
// reference counts, cancellation state, thread safety) to what is measured.
//
// Single-threaded on purpose: no atomics, no locks, no cross-thread wake-ups.
// Every primitive here keeps its waiters inside the waiting coroutine's frame
// (the awaiter object lives there while the coroutine is suspended), so a
// suspension allocates nothing.
#pragma once

#include <algorithm>
#include <cerrno>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <exception>
#include <new>
#include <utility>
#include <vector>

namespace fl {

inline std::int64_t now_ns() noexcept {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// ---------------------------------------------------------------- frames

// Every coroutine frame in this program is counted: `live` must be back to 0
// after each workload (main.cpp checks it on every iteration, the tests and
// valgrind too). `last_bytes` is the size the compiler asked for the most
// recent frame: in every workload the last frame allocated is a worker's (a
// sleeper, a relay, a producer, a skynet leaf), reported as "frame_bytes".
// Both are plain stores (single thread); the allocation itself is the default
// ::operator new, which is what the floor measures.
struct FrameStats {
    std::size_t live = 0;
    std::size_t last_bytes = 0;
};
inline FrameStats frames;

struct CountedFrame {
    static void* operator new(std::size_t n) {
        ++frames.live;
        frames.last_bytes = n;
        return ::operator new(n);
    }
    static void operator delete(void* p, std::size_t n) noexcept {
        --frames.live;
        ::operator delete(p, n);
    }
};

// ------------------------------------------------------------- scheduler

// A FIFO of ready coroutine handles: a power-of-two ring that doubles when
// full and keeps its storage between runs.
class ReadyQueue {
public:
    bool empty() const noexcept { return size_ == 0; }
    void push(std::coroutine_handle<> h) {
        if (size_ == buf_.size()) grow();
        buf_[(head_ + size_) & (buf_.size() - 1)] = h;
        ++size_;
    }
    std::coroutine_handle<> pop() noexcept {
        std::coroutine_handle<> h = buf_[head_];
        head_ = (head_ + 1) & (buf_.size() - 1);
        --size_;
        return h;
    }

private:
    void grow() {
        std::vector<std::coroutine_handle<>> bigger(buf_.empty() ? 256 : buf_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
        buf_.swap(bigger);
        head_ = 0;
    }
    std::vector<std::coroutine_handle<>> buf_;
    std::size_t head_ = 0, size_ = 0;
};

// The scheduler: ready coroutines run in FIFO order; timers are a binary
// min-heap of (deadline, handle), a general timer (any deadline in any
// order), 16 bytes an armed timer. When nothing is ready the loop sleeps in
// clock_nanosleep until the earliest deadline, then resumes every expired
// timer in deadline order.
class Scheduler {
public:
    void ready(std::coroutine_handle<> h) { ready_.push(h); }

    void add_timer(std::int64_t deadline, std::coroutine_handle<> h) {
        timers_.push_back({deadline, h});
        std::push_heap(timers_.begin(), timers_.end(), later);
    }

    // Runs until nothing is ready and no timer is armed.
    void run() {
        for (;;) {
            while (!ready_.empty()) ready_.pop().resume();
            if (timers_.empty()) return;
            fire_timers();
        }
    }

    std::size_t timers_armed() const noexcept { return timers_.size(); }

private:
    struct Timer {
        std::int64_t deadline;
        std::coroutine_handle<> h;
    };
    static bool later(const Timer& a, const Timer& b) noexcept { return a.deadline > b.deadline; }

    static void sleep_until(std::int64_t deadline) noexcept {
        timespec ts{time_t(deadline / 1'000'000'000), long(deadline % 1'000'000'000)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
        }
    }

    void fire_timers() {
        std::int64_t now = now_ns();
        if (timers_.front().deadline > now) {
            sleep_until(timers_.front().deadline);
            now = now_ns();
        }
        // A woken coroutine may arm timers or ready others: both are fine here,
        // the heap is re-read on every step and the ready ones run next round.
        while (!timers_.empty() && timers_.front().deadline <= now) {
            std::coroutine_handle<> h = timers_.front().h;
            std::pop_heap(timers_.begin(), timers_.end(), later);
            timers_.pop_back();
            h.resume();
        }
    }

    ReadyQueue ready_;
    std::vector<Timer> timers_;
};

inline Scheduler sched;

// ------------------------------------------------------------- awaitables

// co_await sleep_for(ns): arms one timer at now + ns.
struct SleepFor {
    std::int64_t ns;
    bool await_ready() const noexcept { return ns <= 0; }
    void await_suspend(std::coroutine_handle<> h) { sched.add_timer(now_ns() + ns, h); }
    void await_resume() const noexcept {}
};
inline SleepFor sleep_for(std::int64_t ns) noexcept { return {ns}; }

// co_await yield_now(): back of the ready queue.
struct YieldNow {
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) { sched.ready(h); }
    void await_resume() const noexcept {}
};
inline YieldNow yield_now() noexcept { return {}; }

// ------------------------------------------------------------------ tasks

// Task<T>: a coroutine that returns a T to one awaiter. Lazy; it can be
//  - awaited directly (co_await std::move(t)): started by symmetric transfer,
//  - started inline (t.start()): runs now until its first suspension, a "hot"
//    task as in C# or JavaScript,
//  - spawned (t.spawn()): queued on the scheduler, which runs it later.
// On completion it transfers straight to its awaiter (symmetric transfer), or
// stays suspended at its final point until its owner reads the value. The
// awaiter that co_awaits an rvalue Task takes the frame and frees it as soon
// as it has the value, so chains of tasks never free recursively.
// The promise holds the awaiter's handle and the value: 16 bytes for T = long;
// a Task object is one pointer.
// An exception escaping a task ends the program (std::terminate): the frame
// keeps no exception_ptr.
template <class T>
class Task {
public:
    struct promise_type : CountedFrame {
        std::coroutine_handle<> continuation;
        T value{};

        Task get_return_object() noexcept {
            return Task(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        struct Final {
            bool await_ready() const noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> h) noexcept {
                std::coroutine_handle<> c = h.promise().continuation;
                return c ? c : std::noop_coroutine();
            }
            void await_resume() const noexcept {}
        };
        Final final_suspend() const noexcept { return {}; }
        void return_value(T v) noexcept { value = std::move(v); }
        [[noreturn]] void unhandled_exception() const noexcept { std::terminate(); }
    };
    using handle = std::coroutine_handle<promise_type>;

    Task() noexcept = default;
    Task(Task&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    Task& operator=(Task&& o) noexcept {
        if (this != &o) {
            reset();
            h_ = std::exchange(o.h_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() { reset(); }

    // Started tasks carry noop_coroutine() as their continuation until an
    // awaiter replaces it: that is how an awaiter tells a running task from a
    // lazy one, without a flag in the Task or the frame.
    void start() {
        h_.promise().continuation = std::noop_coroutine();
        h_.resume();
    }
    void spawn() {
        h_.promise().continuation = std::noop_coroutine();
        sched.ready(h_);
    }
    bool done() const noexcept { return h_ && h_.done(); }
    T& result() noexcept { return h_.promise().value; }

    struct Awaiter {
        handle h;
        explicit Awaiter(handle h_) noexcept : h(h_) {}
        Awaiter(const Awaiter&) = delete;
        Awaiter& operator=(const Awaiter&) = delete;
        ~Awaiter() {
            if (h) h.destroy();
        }
        bool await_ready() const noexcept { return h.done(); }
        std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept {
            bool started = bool(h.promise().continuation);
            h.promise().continuation = caller;
            if (started) return std::noop_coroutine();  // it runs on its own; it will come back here
            return h;                                   // lazy: start it now
        }
        T await_resume() noexcept { return std::move(h.promise().value); }
    };
    Awaiter operator co_await() && noexcept { return Awaiter(std::exchange(h_, {})); }

private:
    explicit Task(handle h) noexcept : h_(h) {}
    void reset() noexcept {
        if (h_) h_.destroy();
        h_ = {};
    }
    handle h_;
};

// Detached: a fire-and-forget coroutine whose frame frees itself when it
// ends. Start it inline (std::move(d).start()) or spawn it on the scheduler
// (std::move(d).spawn()). Its promise holds nothing.
class Detached {
public:
    struct promise_type : CountedFrame {
        Detached get_return_object() noexcept {
            return Detached(std::coroutine_handle<promise_type>::from_promise(*this));
        }
        std::suspend_always initial_suspend() const noexcept { return {}; }
        std::suspend_never final_suspend() const noexcept { return {}; }
        void return_void() const noexcept {}
        [[noreturn]] void unhandled_exception() const noexcept { std::terminate(); }
    };

    Detached(Detached&& o) noexcept : h_(std::exchange(o.h_, {})) {}
    Detached(const Detached&) = delete;
    ~Detached() {
        if (h_) h_.destroy();  // never started
    }
    void start() && { std::exchange(h_, {}).resume(); }
    void spawn() && { sched.ready(std::exchange(h_, {})); }

private:
    explicit Detached(std::coroutine_handle<promise_type> h) noexcept : h_(h) {}
    std::coroutine_handle<promise_type> h_;
};

// --------------------------------------------------------- synchronisation

// Event<T>: a manually completed source (a TaskCompletionSource) with one
// awaiter, which set() readies on the scheduler.
template <class T>
class Event {
public:
    void set(T v) {
        value_ = std::move(v);
        set_ = true;
        if (waiter_) sched.ready(std::exchange(waiter_, {}));
    }
    struct Awaiter {
        Event& e;
        bool await_ready() const noexcept { return e.set_; }
        void await_suspend(std::coroutine_handle<> h) noexcept { e.waiter_ = h; }
        T await_resume() const noexcept { return e.value_; }
    };
    Awaiter operator co_await() noexcept { return {*this}; }

private:
    std::coroutine_handle<> waiter_;
    T value_{};
    bool set_ = false;
};

// Latch: counts arrivals; one coroutine waits until `target` have arrived.
class Latch {
public:
    explicit Latch(std::size_t target) noexcept : target_(target) {}
    void arrive() {
        if (++count_ == target_ && waiter_) sched.ready(std::exchange(waiter_, {}));
    }
    std::size_t count() const noexcept { return count_; }
    struct Awaiter {
        Latch& l;
        bool await_ready() const noexcept { return l.count_ >= l.target_; }
        void await_suspend(std::coroutine_handle<> h) noexcept { l.waiter_ = h; }
        void await_resume() const noexcept {}
    };
    Awaiter wait() noexcept { return {*this}; }

private:
    std::size_t target_, count_ = 0;
    std::coroutine_handle<> waiter_;
};

// Rendezvous<T>: a single-slot unbuffered channel between one sender and one
// receiver: whichever side arrives first parks its handle and a pointer to
// the value (held in its awaiter, in its frame); the second side completes
// the exchange without suspending and readies the first. Go's unbuffered
// hand-off: the arriving side keeps running, the parked one is queued.
template <class T>
class Rendezvous {
public:
    struct SendAwaiter {
        Rendezvous& c;
        T v;
        bool await_ready() {
            if (c.waiter_ && c.receiver_waiting_) {
                *c.slot_ = std::move(v);
                sched.ready(std::exchange(c.waiter_, {}));
                return true;
            }
            return false;
        }
        void await_suspend(std::coroutine_handle<> h) noexcept {
            c.waiter_ = h;
            c.slot_ = &v;
            c.receiver_waiting_ = false;
        }
        void await_resume() const noexcept {}
    };
    struct RecvAwaiter {
        Rendezvous& c;
        T v{};
        bool await_ready() {
            if (c.waiter_ && !c.receiver_waiting_) {
                v = std::move(*c.slot_);
                sched.ready(std::exchange(c.waiter_, {}));
                return true;
            }
            return false;
        }
        void await_suspend(std::coroutine_handle<> h) noexcept {
            c.waiter_ = h;
            c.slot_ = &v;
            c.receiver_waiting_ = true;
        }
        T await_resume() noexcept { return std::move(v); }
    };
    SendAwaiter send(T v) noexcept { return {*this, std::move(v)}; }
    RecvAwaiter recv() noexcept { return {*this}; }

private:
    std::coroutine_handle<> waiter_;  // the side that arrived first, if any
    T* slot_ = nullptr;               // its value (sender) or where to put it (receiver)
    bool receiver_waiting_ = false;
};

// Channel<T>: a channel of capacity B (B = 0: rendezvous) with FIFO queues of
// waiting senders and waiting receivers, Go's semantics:
//  - send: a waiting receiver gets the value directly and is readied; else a
//    free buffer slot takes it; else the sender parks with its value.
//  - recv: the oldest buffered value, refilled from the oldest parked sender
//    (readied); else (B = 0) straight from a parked sender; else park.
// The buffer is a power-of-two ring that grows by doubling up to B (a channel
// never holds more values than were sent); the waiter queues are intrusive
// lists through the awaiters, which live in the parked coroutines' frames.
template <class T>
class Channel {
    struct Waiter {
        std::coroutine_handle<> h;
        T value{};
        Waiter* next = nullptr;
    };
    struct WaitList {
        Waiter *head = nullptr, *tail = nullptr;
        bool empty() const noexcept { return head == nullptr; }
        void push(Waiter* w) noexcept {
            w->next = nullptr;
            (tail ? tail->next : head) = w;
            tail = w;
        }
        Waiter* pop() noexcept {
            Waiter* w = head;
            head = w->next;
            if (!head) tail = nullptr;
            return w;
        }
    };

public:
    explicit Channel(std::size_t capacity) : cap_(capacity) {}
    std::size_t capacity() const noexcept { return cap_; }

    struct SendAwaiter {
        Channel& c;
        Waiter w;
        bool await_ready() {
            if (!c.receivers_.empty()) {
                Waiter* r = c.receivers_.pop();
                r->value = std::move(w.value);
                sched.ready(r->h);
                return true;
            }
            if (c.count_ < c.cap_) {
                c.push_buf(std::move(w.value));
                return true;
            }
            return false;
        }
        void await_suspend(std::coroutine_handle<> h) noexcept {
            w.h = h;
            c.senders_.push(&w);
        }
        void await_resume() const noexcept {}
    };
    struct RecvAwaiter {
        Channel& c;
        Waiter w;
        bool await_ready() {
            if (c.count_ > 0) {
                w.value = c.pop_buf();
                if (!c.senders_.empty()) {
                    Waiter* s = c.senders_.pop();
                    c.push_buf(std::move(s->value));
                    sched.ready(s->h);
                }
                return true;
            }
            if (!c.senders_.empty()) {
                Waiter* s = c.senders_.pop();
                w.value = std::move(s->value);
                sched.ready(s->h);
                return true;
            }
            return false;
        }
        void await_suspend(std::coroutine_handle<> h) noexcept {
            w.h = h;
            c.receivers_.push(&w);
        }
        T await_resume() noexcept { return std::move(w.value); }
    };
    SendAwaiter send(T v) noexcept { return {*this, Waiter{{}, std::move(v), nullptr}}; }
    RecvAwaiter recv() noexcept { return {*this, Waiter{}}; }

private:
    void push_buf(T v) {
        if (count_ == buf_.size()) grow();
        buf_[(head_ + count_) & (buf_.size() - 1)] = std::move(v);
        ++count_;
    }
    T pop_buf() noexcept {
        T v = std::move(buf_[head_]);
        head_ = (head_ + 1) & (buf_.size() - 1);
        --count_;
        return v;
    }
    void grow() {
        std::size_t want = buf_.empty() ? 16 : buf_.size() * 2;
        std::vector<T> bigger(want);
        for (std::size_t i = 0; i < count_; ++i) bigger[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
        buf_.swap(bigger);
        head_ = 0;
    }

    std::size_t cap_;
    std::vector<T> buf_;
    std::size_t head_ = 0, count_ = 0;
    WaitList senders_, receivers_;
};

// Runs `root` as the scheduler's first task until nothing is left to run,
// and returns its value. false in *ok when the root never finished (a
// deadlock: nothing ready, no timer armed).
template <class T>
T run_root(Task<T> root, bool* ok = nullptr) {
    root.spawn();
    sched.run();
    if (ok) *ok = root.done();
    return root.done() ? root.result() : T{};
}

}  // namespace fl
