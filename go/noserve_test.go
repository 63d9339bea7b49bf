//go:build !serve

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The workloads' binary does not link the HTTP server: net/http is not among
// the package's dependencies without -tags serve, and is with it.
func TestTheWorkloadBinaryDoesNotLinkTheServer(t *testing.T) {
	deps := func(tags ...string) string {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, tags...), ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", tags, err)
		}
		return "\n" + string(out)
	}
	if strings.Contains(deps(), "\nnet/http\n") {
		t.Error("bin/bench depends on net/http")
	}
	if !strings.Contains(deps("-tags", "serve"), "\nnet/http\n") {
		t.Error("bin/serve does not depend on net/http")
	}
}

// Without bin/serve beside it, `bench serve` says so in one line and exits 1.
func TestServeWithoutTheServerBinarySaysSo(t *testing.T) {
	code, stdout, stderr := runMain(t, "serve", "--port", "0", "--delay-ms", "1")
	if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 ||
		!strings.Contains(stderr, "built by `go build -tags serve`") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
