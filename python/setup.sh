#!/bin/sh
# Creates python/.venv with the python3 on PATH (the interpreter `detect`
# reports) and installs the pinned requirements. Idempotent: a stamp holding the
# interpreter version and the requirements' checksum skips the work when
# nothing changed, and a changed interpreter or pin rebuilds the venv.
set -eu
cd "$(dirname "$0")"
want="$(python3 -c 'import sys; print(sys.version)') $(cksum < requirements.txt)"
stamp=.venv/.installed
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    exit 0
fi
rm -rf .venv
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-input -r requirements.txt
printf '%s\n' "$want" > "$stamp"
