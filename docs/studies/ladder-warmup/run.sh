#!/usr/bin/env bash
# The ladder's warm-up (docs/protocol.md, "The rate ladder"): java-virtual's
# when-all at D = 10 ms, the server on core 0 (one JVM CPU), the load
# generator on core 1, as a seed004 step has them. Writes the generator's
# summaries (JSON) into this folder. Run from the repository's root on a
# quiet 2-core machine, after a build (./run.sh or make build).
set -eu
here=docs/studies/ladder-warmup
java=java/build/jdk/bin/java
gen=.tools/bin/loadgen
serve() {
    JDK_JAVA_OPTIONS=-XX:ActiveProcessorCount=1 taskset -c 0 \
        "$java" -cp java/classes Main virtual serve --port 18080 --delay-ms 10 >/dev/null 2>&1 &
    server=$!
    sleep 1.5
}
load() {  # RATE WARMUP_S OUT
    taskset -c 1 "$gen" -base http://127.0.0.1:18080/when-all/ -workers "$1" -rate "$1" \
        -step-s 5 -grace-s 5 -warmup-s "$2" -out "$3"
}
# One server process loaded four times over, 5 s at 1,600 a second, no warm-up.
serve
for i in 1 2 3 4; do load 1600 0 "$here/same-server-$i.json"; done
kill "$server"; wait "$server" || true
# A fresh server for each rate, its step after the 1 s warm-up.
for rate in 1600 3200 4800; do
    serve
    load "$rate" 1 "$here/warmed-$rate.json"
    kill "$server"; wait "$server" || true
done
