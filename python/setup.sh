#!/bin/sh
# Creates python/.venv with the python3 on PATH (the interpreter `detect`
# reports) and installs the pinned requirements. Idempotent: a stamp holding the
# interpreter version and the requirements' checksum skips the work when
# nothing changed, and a changed interpreter or pin rebuilds the venv.
# First, pypy.sh links PyPy for python-pypy (installing Debian's pypy3 with
# apt-get if missing, unless BENCH_NO_SYSTEM_INSTALL=1); it never fails the
# set-up: without PyPy, only python-pypy is skipped (its check says why).
set -eu
cd "$(dirname "$0")"
./pypy.sh setup
want="$(python3 -c 'import sys; print(sys.version)') $(cksum < requirements.txt)"
stamp=.venv/.installed
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
rm -rf .venv
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt
printf '%s\n' "$want" > "$stamp"
