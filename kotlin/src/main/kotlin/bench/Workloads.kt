package bench

import java.util.concurrent.atomic.LongAdder
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.async
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.delay
import kotlinx.coroutines.launch
import kotlinx.coroutines.yield

/**
 * The workloads of docs/protocol.md, one coroutine per task. Each runs in a
 * [coroutineScope] of the caller (Main runs them on Dispatchers.Default), so every
 * task is a child coroutine on the same multi-threaded dispatcher, and the scope
 * returns only when every child has finished: structured concurrency is the join.
 */
object Workloads {

    class SleepRun(val completed: Long, val spawnNs: Long)

    /** N coroutines each `delay(D)`, then count themselves done; the scope waits for all N. */
    suspend fun sleep(n: Int, durationMs: Long): SleepRun {
        val completed = LongAdder()
        var spawnNs = 0L
        coroutineScope {
            val start = System.nanoTime()
            repeat(n) {
                launch {
                    delay(durationMs)
                    completed.increment()
                }
            }
            spawnNs = System.nanoTime() - start
        }
        return SleepRun(completed.sum(), spawnNs)
    }

    /** N coroutines linked by N+1 rendezvous channels; coroutine i receives x on c[i] and sends x+1 on c[i+1]. */
    suspend fun chain(n: Int): Long = coroutineScope {
        val first = Channel<Int>(Channel.RENDEZVOUS)
        var input = first
        repeat(n) {
            val from = input
            val to = Channel<Int>(Channel.RENDEZVOUS)
            launch { to.send(from.receive() + 1) }
            input = to
        }
        first.send(0)
        input.receive().toLong()
    }

    /**
     * N `async` coroutines, coroutine i awaits coroutine i-1 (the first awaits a
     * pending CompletableDeferred), adds 1, yields once and returns the sum. With
     * all N suspended, the source is completed with 0 and the last one awaited.
     */
    suspend fun chainAwait(n: Int): Long = coroutineScope {
        val source = CompletableDeferred<Long>()
        var last: Deferred<Long> = source
        repeat(n) {
            val previous = last
            last = async {
                val x = previous.await() + 1
                yield()
                x
            }
        }
        source.complete(0L)
        last.await()
    }

    /**
     * N producer coroutines each send their index into one channel of capacity
     * [buffer] (0: a rendezvous). The consumer is a coroutine like them, started
     * first; the scope waits for its sum and for every producer.
     */
    suspend fun bounded(n: Int, buffer: Int): Long = coroutineScope {
        // Channel(0) is Channel.RENDEZVOUS; B > 0 suspends senders when full. (B = Int.MAX_VALUE
        // is Channel.UNLIMITED, the same thing for N <= Int.MAX_VALUE sends.)
        val channel = Channel<Long>(if (buffer == 0) Channel.RENDEZVOUS else buffer)
        val sum = async {
            var s = 0L
            repeat(n) { s += channel.receive() }
            s
        }
        repeat(n) { i ->
            launch { channel.send(i.toLong()) }
        }
        sum.await()
    }

    /** The skynet tree over leaves 0..N-1: the root is spawned too, every node is an `async` coroutine. */
    suspend fun skynet(n: Int): Long = coroutineScope { node(0L, n.toLong()).await() }

    /**
     * A node covering [size] leaves from [num]: a leaf returns num; an inner node
     * starts its 10 children (children of its own coroutine, so no extra scope per
     * node), then sums their results.
     */
    private fun CoroutineScope.node(num: Long, size: Long): Deferred<Long> = async {
        if (size == 1L) {
            num
        } else {
            val child = size / 10
            val children = List(10) { k -> node(num + k * child, child) }
            children.sumOf { it.await() }
        }
    }
}
