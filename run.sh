#!/usr/bin/env bash
# Set up, build every implementation whose toolchain is present, run the
# default suite (or --quick), and print where the results are.
#   ./run.sh            the default suite, until the questions it asks settle or its
#                       45-minute budget of runs ends (after the builds)
#   ./run.sh --quick    every implementation and workload at small N, a check (1.5 minutes;
#                       about 4 on a new machine, which downloads and builds everything,
#                       each language's runs starting as soon as it is built)
# Any other option goes to `python -m harness run` (e.g. --repeat 1, --n 1000,10000).
# Exit status: run's (3 when every implementation was skipped: nothing measured).
set -euo pipefail
cd "$(dirname "$0")"

suite=default
args=()
for arg in "$@"; do
    case "$arg" in
        --quick) suite=quick ;;
        -h|--help)
            sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
            exit 0 ;;
        *) args+=("$arg") ;;
    esac
done

make -s setup
exec .venv/bin/python -m harness run --suite "$suite" "${args[@]}"
