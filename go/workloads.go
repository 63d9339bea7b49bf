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
// buffer; the calling goroutine is the consumer, as the protocol requires.
func bounded(n, buffer int) int64 {
	ch := make(chan int64, buffer)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(v int64) {
			defer wg.Done()
			ch <- v
		}(int64(i))
	}
	var sum int64
	for i := 0; i < n; i++ {
		sum += <-ch
	}
	wg.Wait()
	return sum
}
