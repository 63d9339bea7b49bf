#!/bin/sh
# Builds the Go program with another Go release for go@VERSION (impls.toml's
# [impl.versions]): the same `CGO_ENABLED=0 go build -trimpath` as the stock build, through
# GOTOOLCHAIN=goVERSION, into CACHE/bench.
# Usage: release.sh CACHE VERSION
#        release.sh CACHE path:GOROOT   (go@path:DIR: a built Go tree, bin/go inside,
#                                        or a checkout of Go's source, built first;
#                                        go@git:REV's worktree comes here too)
# The go on PATH fetches that release's toolchain (golang.org/toolchain on the
# Go module proxy) into Go's module cache once, where later builds reuse it.
# A release older than go.mod's `go` line refuses to build ("go: go.mod
# requires go >= ..."): the install then fails with that line as its
# "error: ..." line on stderr, the row's reason.
set -eu
cd "$(dirname "$0")"
[ $# -eq 2 ] || { echo "usage: release.sh CACHE VERSION" >&2; exit 2; }
cache=$1 version=$2

# build WHAT GO [VAR=VALUE...]: the two binaries with that go (and those
# variables), as the stock build; go's own output goes to the build log
# (stdout), so that the user sees only the announcement and, on failure,
# one "error: WHAT cannot build the program: ..." line: the first line that
# is not a download or a package heading, go's refusal ("go: go.mod
# requires go >= 1.22 (running go 1.21.13; ...)") or the compiler's first
# error.
build() {
    what=$1 go=$2
    shift 2
    log="$cache/go-build.txt"
    if env CGO_ENABLED=0 "$@" "$go" build -trimpath -o "$cache/bench" . 2> "$log" &&
       env CGO_ENABLED=0 "$@" "$go" build -trimpath -tags serve -o "$cache/serve" . 2>> "$log"; then
        cat "$log"
        rm -f "$log"
        exit 0
    fi
    cat "$log"
    reason=$(grep -v '^go: downloading \|^# ' "$log" | head -n 1)
    rm -f "$log"
    echo "error: $what cannot build the program: ${reason:-go build failed}" >&2
    exit 1
}

case $version in
path:*)
    goroot=${version#path:}
    if [ ! -x "$goroot/bin/go" ] && [ -f "$goroot/src/make.bash" ]; then
        # A checkout of Go's source (go@git:REV's worktree, kept by commit):
        # its toolchain is built in place by its own make.bash, bootstrapped
        # by the go on PATH, as Go's install-from-source page says.
        bootstrap=$(GOTOOLCHAIN=local go env GOROOT)
        echo "go: building the Go toolchain of $goroot with its src/make.bash (bootstrap: $bootstrap; a few minutes)" >&2
        if ! (cd "$goroot/src" && GOROOT_BOOTSTRAP="$bootstrap" GOTOOLCHAIN=local ./make.bash) \
                > "$cache/make-bash.txt" 2>&1; then
            cat "$cache/make-bash.txt"
            echo "error: make.bash of $goroot failed: $(grep -v '^Building\|^$' "$cache/make-bash.txt" | head -n 1)" >&2
            exit 1
        fi
        cat "$cache/make-bash.txt"
    fi
    if [ ! -x "$goroot/bin/go" ]; then
        echo "error: $goroot is not a built Go tree (no bin/go) nor Go's source (no src/make.bash): give go@path: a GOROOT" >&2
        exit 1
    fi
    # That tree's own go, and nothing fetched in its place.
    build "the go of $goroot" "$goroot/bin/go" GOROOT="$goroot" GOTOOLCHAIN=local
    ;;
esac

modcache=$(GOTOOLCHAIN=local go env GOMODCACHE)
platform=$(GOTOOLCHAIN=local go env GOOS)-$(GOTOOLCHAIN=local go env GOARCH)
# The go on PATH builds its own release itself, with nothing to fetch.
if [ "$(GOTOOLCHAIN=local go env GOVERSION)" != "go$version" ] &&
   [ ! -d "$modcache/golang.org/toolchain@v0.0.1-go$version.$platform" ]; then
    echo "go: the go on PATH fetches Go $version's toolchain from the Go module proxy" \
         "(golang.org/toolchain, about 80 MB) into its module cache, $modcache: about" \
         "340 MB there with the unpacked copy (reused by later builds; \`go clean -modcache\` removes it)" >&2
fi
build "go $version" go GOTOOLCHAIN="go$version"
