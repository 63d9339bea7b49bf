import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.LongAdder;

/**
 * The workloads of docs/protocol.md, one thread per task. The same code runs on
 * virtual or platform threads: only the factory differs.
 */
final class Workloads {

    /** A task body; nothing interrupts the tasks, so an interrupt is a bug. */
    @FunctionalInterface
    interface Task {
        void run() throws InterruptedException;
    }

    record SleepRun(long completed, long spawnNs) {}

    private final ThreadFactory threads;
    /** Runs every continuation of chain-await on a thread of its own from the same factory. */
    private final Executor threadPerTask;

    Workloads(ThreadFactory threads) {
        this.threads = threads;
        this.threadPerTask = command -> threads.newThread(command).start();
    }

    /** N tasks each sleep for {@code duration}; returns how many finished, and how long starting them took. */
    SleepRun sleep(int n, Duration duration) throws InterruptedException {
        var completed = new LongAdder();
        Task task = () -> {
            Thread.sleep(duration);
            completed.increment();
        };
        var tasks = new Thread[n];
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            tasks[i] = start(task);
        }
        long spawnNs = System.nanoTime() - start;
        for (Thread t : tasks) {
            t.join();
        }
        return new SleepRun(completed.sum(), spawnNs);
    }

    /** N tasks linked by N+1 rendezvous queues; task i takes x from queue i and puts x+1 into queue i+1. */
    long chain(int n) throws InterruptedException {
        var first = new SynchronousQueue<Long>();
        var in = first;
        for (int i = 0; i < n; i++) {
            var from = in;
            var to = new SynchronousQueue<Long>();
            start(() -> to.put(from.take() + 1));
            in = to;
        }
        first.put(0L);
        return in.take();
    }

    /**
     * N future stages, stage i adds 1 to the result of stage i-1, chained onto a
     * pending source. Each stage runs asynchronously (the yield the protocol asks
     * for), so completing the source does not recurse N frames deep.
     */
    long chainAwait(int n) {
        var source = new CompletableFuture<Long>();
        CompletableFuture<Long> last = source;
        for (int i = 0; i < n; i++) {
            last = last.thenApplyAsync(x -> x + 1, threadPerTask);
        }
        source.complete(0L);
        return last.join();
    }

    /**
     * N producers each put their index into one queue of capacity {@code buffer}
     * (0: a rendezvous); the calling thread takes and sums N values, then waits
     * for every producer to finish.
     */
    long bounded(int n, int buffer) throws InterruptedException {
        BlockingQueue<Long> channel = buffer == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(buffer);
        var producers = new Thread[n];
        for (int i = 0; i < n; i++) {
            long value = i;
            producers[i] = start(() -> channel.put(value));
        }
        long sum = 0;
        for (int i = 0; i < n; i++) {
            sum += channel.take();
        }
        for (Thread p : producers) {
            p.join();
        }
        return sum;
    }

    private Thread start(Task task) {
        Thread thread = threads.newThread(() -> {
            try {
                task.run();
            } catch (InterruptedException e) {
                throw new IllegalStateException("task interrupted", e);
            }
        });
        thread.start();
        return thread;
    }
}
