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

    /**
     * A task body that may block. It is the thread's Runnable itself, so a task
     * costs one object (the lambda with its captures) and no wrapper; nothing
     * interrupts the tasks, so an interrupt is a bug and ends the run.
     */
    @FunctionalInterface
    interface Task extends Runnable {
        void body() throws InterruptedException;

        @Override
        default void run() {
            try {
                body();
            } catch (InterruptedException e) {
                throw new IllegalStateException("task interrupted", e);
            }
        }
    }

    record SleepRun(long completed, long spawnNs) {}

    private final ThreadFactory threads;
    /** Runs every continuation of chain-await on a thread of its own from the same factory. */
    private final Executor threadPerTask;

    Workloads(ThreadFactory threads) {
        this.threads = threads;
        this.threadPerTask = command -> threads.newThread(command).start();
    }

    /**
     * N tasks each sleep for {@code duration}; returns how many finished, and how
     * long starting them took. All N threads run one shared Runnable, so a sleeping
     * task is its thread and nothing else (1M tasks 2024's program, plus the count).
     */
    SleepRun sleep(int n, Duration duration) throws InterruptedException {
        var sleeper = new Sleeper(duration, new LongAdder());
        var tasks = new Thread[n];
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            tasks[i] = threads.newThread(sleeper);
            tasks[i].start();
        }
        long spawnNs = System.nanoTime() - start;
        for (Thread t : tasks) {
            t.join();
        }
        return new SleepRun(sleeper.completed.sum(), spawnNs);
    }

    /** The body of every sleeping task: sleep, then count itself done. One frame, no captures per thread. */
    private record Sleeper(Duration duration, LongAdder completed) implements Runnable {
        @Override
        public void run() {
            try {
                Thread.sleep(duration);
            } catch (InterruptedException e) {
                throw new IllegalStateException("task interrupted", e);
            }
            completed.increment();
        }
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
     * (0: a rendezvous). The consumer is a thread of the same kind as the producers,
     * started first; the calling thread waits for its sum, then for every producer.
     */
    long bounded(int n, int buffer) throws InterruptedException {
        BlockingQueue<Long> channel = buffer == 0 ? new SynchronousQueue<>() : new ArrayBlockingQueue<>(buffer);
        var sum = new long[1];
        Thread consumer = start(() -> {
            long s = 0;
            for (int i = 0; i < n; i++) {
                s += channel.take();
            }
            sum[0] = s; // published to the caller by join()
        });
        var producers = new Thread[n];
        for (int i = 0; i < n; i++) {
            long value = i;
            producers[i] = start(() -> channel.put(value));
        }
        consumer.join();
        for (Thread p : producers) {
            p.join();
        }
        return sum[0];
    }

    /**
     * The skynet tree over leaves 0..n-1 (n a power of ten): every node is a thread
     * of the factory's kind, the root included, and the caller joins the root.
     */
    long skynet(int n) throws InterruptedException {
        var root = new Node(0, n);
        start(root).join();
        return root.sum;
    }

    /**
     * One node of the tree and its thread's Runnable: it carries its range in and its
     * sum out, so a node costs this object and its thread, no lambda, array or future.
     * A parent starts all 10 children, then joins them in turn; Thread.join makes the
     * child's write of {@code sum} visible to the parent (JLS 17.4.5), so the field
     * needs no volatile. StructuredTaskScope would be the structured form, but it is
     * still a preview API in JDK 25 (JEP 505) and needs --enable-preview.
     */
    private final class Node implements Task {
        private final long num;
        private final int size;
        private Thread thread;
        private long sum;

        Node(long num, int size) {
            this.num = num;
            this.size = size;
        }

        @Override
        public void body() throws InterruptedException {
            if (size == 1) {
                sum = num;
                return;
            }
            int step = size / 10;
            var children = new Node[10];
            for (int k = 0; k < 10; k++) {
                children[k] = new Node(num + (long) k * step, step);
                children[k].thread = start(children[k]);
            }
            long total = 0;
            for (Node child : children) {
                child.thread.join();
                total += child.sum;
            }
            sum = total;
        }
    }

    private Thread start(Task task) {
        Thread thread = threads.newThread(task);
        thread.start();
        return thread;
    }
}
