#!/bin/sh
# detect: the Kotlin toolchain is Maven (which fetches the Kotlin compiler itself)
# plus a JDK >= 21 found by ../java/jdk.sh, the same JDK the Java programs run on.
# Prints "Kotlin K, kotlinx.coroutines C (Maven), JDK ..." or exits 1 with one reason.
set -eu
cd "$(dirname "$0")"
command -v mvn >/dev/null 2>&1 || { echo "mvn not found (Maven builds the Kotlin program)" >&2; exit 1; }
jdk=$(../java/jdk.sh)
prop() { sed -n "s|.*<$1>\(.*\)</$1>.*|\1|p" pom.xml; }
echo "Kotlin $(prop kotlin.version), kotlinx.coroutines $(prop coroutines.version) (Maven), $jdk"
