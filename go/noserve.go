//go:build !serve

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

func init() { serveMain = execServe }

// execServe replaces this process with bin/serve, the same program built
// with the server (-tags serve), beside this binary: the process the
// harness started, and measures, becomes the server itself (same PID).
func execServe(args []string) int {
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: serve:", err)
		return 1
	}
	path := filepath.Join(filepath.Dir(self), "serve")
	err = syscall.Exec(path, append([]string{path, "serve"}, args...), os.Environ())
	fmt.Fprintf(os.Stderr, "bench: serve: cannot start %s (built by `go build -tags serve`): %v\n", path, err)
	return 1
}
