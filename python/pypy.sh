#!/bin/sh
# PyPy for the python-pypy implementation (impls.toml): the same bench.py as
# python-asyncio, run by Debian's pypy3 (7.3.11, Python 3.9) instead of CPython.
# Usage: pypy.sh setup|check
#   setup  installs pypy3 system-wide with apt-get when it is missing (saying
#          what and how big first; BENCH_NO_SYSTEM_INSTALL=1 refuses), then
#          links the real interpreter binary as .pypy/pypy3, the argv[0] of
#          python-pypy's run command. Never fails: a machine without PyPy still
#          runs the CPython rows; the reason is kept in .pypy/missing.
#   check  impls.toml's check: exit 0 if .pypy/pypy3 runs, else exit 1 with
#          the reason as the last stderr line (the harness then skips only
#          python-pypy).
# /usr/bin/pypy3 is a chain of symlinks on Debian; readlink -f resolves it to
# the ELF binary, so the measured process is pypy itself, with no wrapper.
set -eu
cd "$(dirname "$0")"
LINK=.pypy/pypy3
MISSING=.pypy/missing

missing() {
    echo "python: $1" >&2
    rm -f "$LINK"
    printf '%s\n' "$1" > "$MISSING"
    exit 0
}

setup() {
    mkdir -p .pypy
    if ! command -v pypy3 >/dev/null 2>&1; then
        if [ "${BENCH_NO_SYSTEM_INSTALL:-}" = 1 ]; then
            missing "no pypy3 on PATH, and BENCH_NO_SYSTEM_INSTALL=1 refuses to apt-get install it"
        fi
        command -v apt-get >/dev/null 2>&1 || missing "no pypy3 on PATH, and no apt-get to install it"
        echo "python: installing Debian's pypy3 system-wide with apt-get (PyPy 7.3.11, for python-pypy; about 13 MB to download, 75 MB installed with pypy3-lib; BENCH_NO_SYSTEM_INSTALL=1 refuses it)" >&2
        sudo=""
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        if ! { $sudo apt-get update -qq &&
               DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends pypy3; } >&2; then
            missing "apt-get install pypy3 failed (see the set-up log)"
        fi
        command -v pypy3 >/dev/null 2>&1 || missing "apt-get installed pypy3, but no pypy3 is on PATH"
    fi
    real=$(readlink -f "$(command -v pypy3)")
    # An ELF binary, not a script that would stay alive as the measured process.
    [ "$(head -c 4 "$real" | od -An -c | tr -d ' ')" = "177ELF" ] ||
        missing "pypy3 resolves to $real, which is not a binary (a wrapper script?)"
    ln -sfn "$real" "$LINK"
    rm -f "$MISSING"
    "$LINK" -c 'import sys; assert sys.implementation.name == "pypy"' ||
        missing "$real does not run as PyPy"
}

check() {
    if [ -x "$LINK" ] && "$LINK" -c 'import asyncio' 2>/dev/null; then
        exit 0
    fi
    if [ -f "$MISSING" ]; then
        cat "$MISSING" >&2
    else
        echo "no PyPy: python/pypy.sh setup has not linked one as python/.pypy/pypy3" >&2
    fi
    exit 1
}

case "${1:-}" in
    setup) setup ;;
    check) check ;;
    *) echo "usage: pypy.sh setup|check" >&2; exit 2 ;;
esac
