module github.com/concurrency-bench/go-bench

go 1.22
