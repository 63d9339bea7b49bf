#!/bin/sh
# Compiles src/ into classes/ with the JDK that jdk.sh picks, and links that JDK
# as build/jdk so the run command in impls.toml starts its java binary directly.
set -eu
cd "$(dirname "$0")"
home=$(./jdk.sh --home)
mkdir -p build
ln -sfn "$home" build/jdk
# Compiled beside classes/ and swapped in: a server or test started during a
# rebuild (the harness's tests run two at once) finds the old classes or the
# new ones, never an empty folder.
rm -rf classes.new classes.old
build/jdk/bin/javac --release 21 -Xlint:all,-serial -Werror -d classes.new src/*.java
if [ -d classes ]; then mv classes classes.old; fi
mv classes.new classes
rm -rf classes.old
