#!/bin/sh
# Builds the measured program: links the JDK that ../java/jdk.sh picks (>= 21, the
# same JDK as java/) as build/jdk, then runs Maven up to process-classes, which
# compiles src/main/kotlin into target/classes and copies the runtime jars into
# target/lib. With an argument, runs that Maven phase instead (`./build.sh test`).
#
# `./build.sh release VERSION CACHE` (impls.toml's [impl.versions] install, for
# kotlin-coroutines@VERSION) builds the same sources with the same pom, Kotlin
# compiler and JDK against that release of kotlinx-coroutines-core-jvm, into
# CACHE/target (mvn -Dcoroutines.version=VERSION -DbuildDir=CACHE/target), and
# names its coroutines jar there with the version (kotlinx-coroutines-core-jvm-
# VERSION.jar: releases before 1.6 carry their version nowhere else, and --version
# reads it from there). Maven's output goes to stderr (its "Downloading ..." lines
# are the harness's progress); a failed build's row shows Maven's first [ERROR]
# line, the compiler's first error.
#
# First use downloads from Maven Central into ~/.m2 (about 130 MB): the Kotlin
# compiler and kotlin-maven-plugin, kotlin-stdlib, kotlinx-coroutines-core-jvm,
# JUnit 5, and the maven-resources, compiler, dependency and surefire plugins.
# Every version is pinned in pom.xml, so later builds work offline.
set -eu
cd "$(dirname "$0")"
home=$(../java/jdk.sh --home)
mkdir -p build
ln -sfn "$home" build/jdk
kotlin=$(sed -n 's|.*<kotlin.version>\(.*\)</kotlin.version>.*|\1|p' pom.xml)
if [ ! -d "$HOME/.m2/repository/org/jetbrains/kotlin/kotlin-compiler-embeddable/$kotlin" ]; then
    echo "kotlin: first build: Maven downloads the Kotlin $kotlin compiler, kotlinx.coroutines, JUnit and the Maven plugins into ~/.m2 (about 130 MB, once)" >&2
fi

if [ "${1:-}" != release ]; then
    # target/lib is not emptied first: its jars' names carry no version
    # (stripVersion), so Maven overwrites them where the source is newer and
    # keeps them otherwise, and a program or test started during a rebuild
    # (the harness's tests run two at once) still finds them. A dependency
    # dropped from pom.xml leaves its jar there: remove target/lib once then.
    # Maven's own lines on stderr, uncoloured: the harness shows its downloads and
    # goals on one status line as they come (harness/execute/progress.py); all go to the log
    exec mvn -B -Dstyle.color=never "${1:-process-classes}" 1>&2
fi

[ $# -eq 3 ] || { echo "usage: ./build.sh release VERSION CACHE" >&2; exit 2; }
version=$2
cache=$(mkdir -p "$3" && cd "$3" && pwd)
target=$cache/target
jar=kotlinx-coroutines-core-jvm
if [ ! -d "$HOME/.m2/repository/org/jetbrains/kotlinx/$jar/$version" ]; then
    echo "kotlin: Maven downloads $jar $version and the Kotlin libraries its POM names (a few MB) from Maven Central into ~/.m2, then compiles src/main/kotlin against it with Kotlin $kotlin" >&2
fi
rm -rf "$target" "$cache/maven.exit"
# not -q: the transfer and goal lines are the harness's status line; all of it to
# stderr, line by line, without the colour resets Debian's Maven 3.8 prints even with -B.
# A failed build's row is known by Maven's first [ERROR] line (harness/execute/builder.py's
# first_error): the compiler's first error ("[ERROR] file:///.../Workloads.kt:12:5
# message"), or Maven's own (an unresolvable dependency).
{ mvn -B "-Dcoroutines.version=$version" "-DbuildDir=$target" process-classes 2>&1 ||
    echo $? >"$cache/maven.exit"; } | sed -u 's/\x1b\[[0-9;]*m//g' >&2
[ ! -e "$cache/maven.exit" ] || exit 1
mv "$target/lib/$jar.jar" "$target/lib/$jar-$version.jar"
