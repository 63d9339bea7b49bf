#!/bin/sh
# IMPL@path:DIR for the Python implementations: DIR is a Python interpreter,
# or a prefix with bin/python3 (a CPython or PyPy build), linked as
# CACHE/python, so the measured process is that interpreter itself. The
# programs import only the standard library.
# Usage: local-build.sh CACHE DIR
set -eu
cache=$1 dir=$2
if [ -f "$dir" ]; then p=$dir; else p=$dir/bin/python3; fi
if [ ! -x "$p" ]; then
    echo "error: $dir is neither a Python interpreter nor a prefix with bin/python3" >&2
    exit 1
fi
ln -s "$p" "$cache/python"
"$cache/python" --version
