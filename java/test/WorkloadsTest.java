import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.ThreadFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Every workload at small N, on both kinds of thread. */
@Timeout(60)
class WorkloadsTest {

    private static Workloads on(String kind) {
        ThreadFactory threads = kind.equals("virtual") ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        return new Workloads(threads);
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void sleepCountsEveryTask(String kind) throws InterruptedException {
        var run = on(kind).sleep(200, Duration.ofMillis(50));
        assertEquals(200, run.completed());
        assertTrue(run.spawnNs() > 0);
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void sleepTakesAtLeastItsDuration(String kind) throws InterruptedException {
        long start = System.nanoTime();
        on(kind).sleep(10, Duration.ofMillis(100));
        assertTrue(System.nanoTime() - start >= 100_000_000L);
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void chainAddsOnePerTask(String kind) throws InterruptedException {
        var w = on(kind);
        assertEquals(300, w.chain(300));
        assertEquals(1, w.chain(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void chainAwaitAddsOnePerStage(String kind) {
        var w = on(kind);
        assertEquals(300, w.chainAwait(300));
        assertEquals(1, w.chainAwait(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void boundedSumsEveryIndex(String kind) throws InterruptedException {
        var w = on(kind);
        for (int buffer : new int[] {0, 1, 7, 300, 1000}) {
            assertEquals(300L * 299 / 2, w.bounded(300, buffer), "B=" + buffer);
        }
        assertEquals(0, w.bounded(1, 0));
    }

    /** The consumer is a thread of the tasks' kind, not the caller (docs/protocol.md, bounded). */
    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void boundedConsumesOnAThreadOfTheSameKind(String kind) throws InterruptedException {
        var consumers = new java.util.concurrent.ConcurrentLinkedQueue<Thread>();
        ThreadFactory base = kind.equals("virtual") ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        ThreadFactory recording = task -> {
            Thread t = base.newThread(task);
            consumers.add(t);
            return t;
        };
        assertEquals(45, new Workloads(recording).bounded(10, 1));
        assertEquals(11, consumers.size(), "10 producers and one consumer");
        assertTrue(consumers.stream().allMatch(t -> t.isVirtual() == kind.equals("virtual")));
    }

    /** Every node a thread: at N = 100, 1 root + 10 + 100 leaves; the sum is N(N-1)/2. */
    @ParameterizedTest
    @ValueSource(strings = {"virtual", "platform"})
    void skynetSumsEveryLeafOnAThreadPerNode(String kind) throws InterruptedException {
        var nodes = new java.util.concurrent.atomic.AtomicInteger();
        ThreadFactory base = kind.equals("virtual") ? Thread.ofVirtual().factory() : Thread.ofPlatform().factory();
        var w = new Workloads(task -> {
            nodes.incrementAndGet();
            return base.newThread(task);
        });
        assertEquals(100L * 99 / 2, w.skynet(100));
        assertEquals(111, nodes.get());
        assertEquals(0, w.skynet(1));
        assertEquals(45, w.skynet(10));
    }

    @org.junit.jupiter.api.Test
    void skynetSumsBeyondAnInt() throws InterruptedException {
        // N(N-1)/2 passes 2^31 from N = 10^5 on: the sums are longs.
        assertEquals(100_000L * 99_999 / 2, on("virtual").skynet(100_000));
    }
}
