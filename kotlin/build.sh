#!/bin/sh
# Builds the measured program: links the JDK that ../java/jdk.sh picks (>= 21, the
# same JDK as java/) as build/jdk, then runs Maven up to process-classes, which
# compiles src/main/kotlin into target/classes and copies the runtime jars into
# target/lib. With an argument, runs that Maven phase instead (`./build.sh test`).
#
# First use downloads from Maven Central into ~/.m2 (about 90 MB): the Kotlin
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
    echo "kotlin: first build: Maven downloads the Kotlin $kotlin compiler, kotlinx.coroutines, JUnit and the Maven plugins into ~/.m2 (about 90 MB, once)" >&2
fi
rm -rf target/lib
exec mvn -B -q "${1:-process-classes}"
