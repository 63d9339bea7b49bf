#!/bin/sh
# Compiles src/ into classes/ with the JDK that jdk.sh picks, and links that JDK
# as build/jdk so the run command in impls.toml starts its java binary directly.
set -eu
cd "$(dirname "$0")"
home=$(./jdk.sh --home)
mkdir -p build
ln -sfn "$home" build/jdk
rm -rf classes
build/jdk/bin/javac --release 21 -Xlint:all,-serial -Werror -d classes src/*.java
