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
