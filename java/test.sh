#!/bin/sh
# Builds the program, then runs test/MainTest.java against classes/.
set -eu
cd "$(dirname "$0")"
./build.sh
rm -rf build/test-classes
build/jdk/bin/javac --release 21 -Xlint:all,-serial -Werror -cp classes -d build/test-classes test/*.java
exec build/jdk/bin/java -cp classes:build/test-classes MainTest
