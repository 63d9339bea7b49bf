#!/usr/bin/env bash
# How long a first `./run.sh --quick` takes on a new machine
# (docs/studies/first-run.md), as near as one machine can make it:
#
#   benchmarks/first_run.sh --yes DIR
#
# moves away every cache the README's set-up table names (into
# DIR.caches/, to put back by hand: they are not needed again), removes the
# system-wide packages the set-ups install (apt-get remove erlang-base
# erlang-eunit elixir mono-mcs pypy3, then autoremove and clean), clones
# this repository's HEAD into DIR, and times `./run.sh --quick` there. The
# CPU's use is sampled each second from /proc/stat into DIR.cpu (time,
# share of both cores busy). Prints the phases: the harness's venv and the
# plan, the builds before the first run, then the runs (beside the builds
# still going on) to the report's end; then the line to add to
# docs/studies/first-run.tsv, from which README's figure is generated.
#
# Root only, and on a machine you can spare: it changes the system.
# Without --yes it says what it would do and exits 2.
set -euo pipefail

if [ "${1:-}" != "--yes" ] || [ -z "${2:-}" ]; then
    sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
fi
dest=$(realpath -m "$2")
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$dest" ]; then
    echo "first_run.sh: $dest exists: give a new folder" >&2
    exit 2
fi
if [ "$(id -u)" != 0 ]; then
    echo "first_run.sh: run it as root (it removes system packages)" >&2
    exit 2
fi

moved="$dest.caches"
mkdir -p "$moved"
for cache in ~/.m2 ~/.cargo/registry ~/.npm ~/.cache/pip ~/.cache/deno ~/.bun \
             "$(go env GOMODCACHE 2>/dev/null || echo ~/go/pkg/mod)" \
             "$(go env GOCACHE 2>/dev/null || echo ~/.cache/go-build)" ~/.cache/matplotlib; do
    if [ -e "$cache" ]; then
        mv "$cache" "$moved/$(echo "$cache" | tr / _)"
    fi
done
export DEBIAN_FRONTEND=noninteractive
apt-get remove -y -qq erlang-base erlang-eunit elixir mono-mcs pypy3 >/dev/null 2>&1 || true
apt-get autoremove -y -qq >/dev/null 2>&1 || true
apt-get clean
git clone -q "$repo" "$dest"
cd "$dest"

# the share of both cores busy, each second
(last_total="" last_spare=""
 while true; do
     read -r _ user nice system idle iowait _ < /proc/stat
     total=$((user + nice + system + idle + iowait)) spare=$((idle + iowait))
     if [ -n "$last_total" ] && [ "$total" -gt "$last_total" ]; then
         busy=$(( (total - last_total - spare + last_spare) * 100 / (total - last_total) ))
         echo "$(date +%s) $busy%"
     fi
     last_total=$total last_spare=$spare
     sleep 1
 done) > "$dest.cpu" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT

start=$(date +%s)
status=0
/usr/bin/time -f "cpu: %U s user, %S s system" ./run.sh --quick > "$dest.log" 2>&1 || status=$?
end=$(date +%s)

run=$(find results -mindepth 1 -maxdepth 1 -name '2*' -type d | sort | tail -1)
first=$(stat -c %Y "$run/.lock")
runs=$(python3 -c "
import csv, datetime, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(int(datetime.datetime.fromisoformat(rows[0]['started_at']).timestamp()))
" "$run/runs.csv")
report=$(stat -c %Y "$run/report.html")
echo "./run.sh --quick exited $status after $((end - start)) s ($dest.log)"
echo "  the harness's venv and the plan: $((first - start)) s"
echo "  from the plan to the first run: $((runs - first)) s (builds)"
echo "  from the first run to the report's end: $((report - runs)) s (runs beside the builds left)"
echo "  $(tail -1 "$dest.log")"
# the study's line (docs/studies/first-run.tsv, in the order measured): the
# machine as the run's env.json names it, as the results pages do
python3 - "$run/env.json" "$(git rev-parse --short HEAD)" "$((end - start))" "$dest.log" <<'PY'
import datetime, json, re, sys
host = json.load(open(sys.argv[1]))["host"]
cpu = re.search(r"cpu: ([\d.]+) s user, ([\d.]+) s system", open(sys.argv[4]).read())
print("line for docs/studies/first-run.tsv:")
print("\t".join([datetime.date.today().isoformat(), sys.argv[2],
                 f"{host.get('cpu_model', 'unknown CPU')}, {host.get('cores', '?')} cores",
                 sys.argv[3], *(cpu.groups() if cpu else ("", ""))]))
PY
echo "caches moved to $moved; CPU use each second in $dest.cpu"
