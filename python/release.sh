#!/bin/sh
# Installs another uvloop release for python-uvloop@VERSION (impls.toml's
# [impl.versions]): a virtualenv of its own in CACHE/venv, made from the same
# interpreter as the stock python/.venv (the harness runs this after setup.sh),
# holding the stock requirements.txt pins with only uvloop changed.
# Usage: release.sh CACHE VERSION
# uvloop is installed from binary wheels only (--only-binary :all:): a release
# with no wheel for this CPython (uvloop < 0.17.0 has none for 3.11) fails in
# seconds with one "error: ..." line, instead of a long C compile of libuv
# that would need Cython and a C toolchain. pip's own output goes to the
# build log (stdout); only the announcement and the error line go to stderr.
set -eu
cd "$(dirname "$0")"
[ $# -eq 2 ] || { echo "usage: release.sh CACHE VERSION" >&2; exit 2; }
cache=$1 version=$2

[ -x .venv/bin/python ] || { echo "error: no python/.venv (python/setup.sh makes it first)" >&2; exit 1; }
base=$(.venv/bin/python -c 'import sys; print(sys._base_executable)')
pyver=$(.venv/bin/python -c 'import platform; print(platform.python_version())')
echo "python: a virtualenv for uvloop $version (CPython $pyver, as python/.venv) with" \
     "the other pins of requirements.txt (aiohttp, pytest and their dependencies), from PyPI" \
     "or pip's cache: about 4 MB of uvloop wheel and 10 MB of others, 75 MB installed" >&2

pip() {
    "$cache/venv/bin/python" -m pip --disable-pip-version-check --no-input "$@"
}

"$base" -m venv "$cache/venv"
out="$cache/pip-uvloop.txt"
# uvloop has no dependencies; alone first, so a release without a wheel fails
# before anything else is downloaded.
if ! pip install --only-binary :all: --no-deps "uvloop==$version" > "$out" 2>&1; then
    cat "$out"
    if grep -q "No matching distribution" "$out"; then
        echo "error: uvloop $version has no binary wheel for CPython $pyver on $(uname -s | tr A-Z a-z) $(uname -m) on PyPI (source builds are not tried: --only-binary :all:)" >&2
    else
        echo "error: pip could not install uvloop $version: $(grep '^ERROR' "$out" | tail -n 1)" >&2
    fi
    exit 1
fi
cat "$out"
grep -v '^uvloop==' requirements.txt > "$cache/requirements.txt"
if ! pip install -r "$cache/requirements.txt" > "$out" 2>&1; then
    cat "$out"
    echo "error: pip could not install the other pins of requirements.txt: $(grep '^ERROR' "$out" | tail -n 1)" >&2
    exit 1
fi
cat "$out"
rm -f "$out"
# The release imports and reports itself as bench.py sees it.
"$cache/venv/bin/python" bench.py --loop uvloop --version
