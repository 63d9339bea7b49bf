package main

import (
	"sync"
	"sync/atomic"
	"time"
)

// sleepTasks starts n goroutines that each sleep for d, waits for all of
// them and returns how many finished plus the time the start loop took.
func sleepTasks(n int, d time.Duration) (int64, time.Duration) {
	var wg sync.WaitGroup
	var done atomic.Int64
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func() {
			defer wg.Done()
			time.Sleep(d)
			done.Add(1)
		}()
	}
	spawn := time.Since(start)
	wg.Wait()
	return done.Load(), spawn
}

// chain links n goroutines with n+1 unbuffered channels; each adds 1 to the
// value passing through, so the last channel yields n.
func chain(n int) int64 {
	first := make(chan int64)
	left := first
	for i := 0; i < n; i++ {
		right := make(chan int64)
		go func(left <-chan int64, right chan<- int64) {
			right <- 1 + <-left
		}(left, right)
		left = right
	}
	first <- 0
	return <-left
}

// bounded has n producers send their index into one channel of capacity
// buffer (0: unbuffered) and one consumer goroutine sum them. As the protocol
// says, the consumer is a goroutine like the producers, started before them:
// it drains the channel while the producers are being started. (The main
// goroutine is an ordinary goroutine too, and consuming on it after the
// start loop measured no faster than a consumer spawned at the same point;
// starting the consumer first halved the time at N = 10000: README.md.)
func bounded(n, buffer int) int64 {
	ch := make(chan int64, buffer)
	total := make(chan int64, 1)
	go func() {
		var sum int64
		for range n {
			sum += <-ch
		}
		total <- sum
	}()
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		go func() {
			defer wg.Done()
			ch <- int64(i)
		}()
	}
	sum := <-total
	wg.Wait()
	return sum
}

// skynetRoot runs the skynet tree over leaves 0..n-1 (n a power of ten):
// the root is a goroutine like every other node, and the main goroutine
// reads its sum.
func skynetRoot(n int) int64 {
	c := make(chan int64, 1)
	go skynet(c, 0, n)
	return <-c
}

// skynet is one node of the tree, as in the original skynet Go program: a
// leaf sends its index; a node of size > 1 starts 10 child goroutines over
// size/10 leaves each, all sending into one channel of capacity 10 (so no
// child waits for its parent to receive), then sums the 10 values and sends
// the sum to its own parent.
func skynet(c chan<- int64, num, size int) {
	if size == 1 {
		c <- int64(num)
		return
	}
	const div = 10
	rc := make(chan int64, div)
	step := size / div
	for i := range div {
		go skynet(rc, num+i*step, step)
	}
	var sum int64
	for range div {
		sum += <-rc
	}
	c <- sum
}
