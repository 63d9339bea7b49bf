#!/bin/sh
# Finds a JDK of at least release 21 (virtual threads): JAVA_HOME if set and new
# enough, else the newest JDK under /usr/lib/jvm. Prints its exact version, or
# its home with --home. Exits 1 with a one-line reason on stderr if there is none.
set -eu
min=21

# Feature release of the JDK at $1 (a folder with bin/java, bin/javac and the
# release file every JDK ships), or nothing if it is not a usable JDK.
feature() {
    [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] && [ -f "$1/release" ] || return 0
    sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release"
}

home=
if [ -n "${JAVA_HOME:-}" ]; then
    f=$(feature "$JAVA_HOME")
    if [ -n "$f" ] && [ "$f" -ge "$min" ]; then
        home=$JAVA_HOME
    else
        echo "note: JAVA_HOME=$JAVA_HOME is not a JDK >= $min; looking in /usr/lib/jvm" >&2
    fi
fi
if [ -z "$home" ]; then
    best=0
    for dir in /usr/lib/jvm/*; do
        f=$(feature "$dir")
        if [ -n "$f" ] && [ "$f" -gt "$best" ]; then
            best=$f
            home=$(readlink -f "$dir")
        fi
    done
    if [ "$best" -lt "$min" ]; then
        echo "no JDK >= $min found (JAVA_HOME unset or older, none in /usr/lib/jvm)" >&2
        exit 1
    fi
fi

if [ "${1:-}" = --home ]; then
    echo "$home"
else
    # e.g. "JDK 25.0.3+9-LTS (Eclipse Adoptium)"
    prop() { sed -n "s/^$1=\"\(.*\)\"$/\1/p" "$home/release"; }
    echo "JDK $(prop JAVA_RUNTIME_VERSION) ($(prop IMPLEMENTOR))"
fi
