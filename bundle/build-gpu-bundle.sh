#!/usr/bin/env bash
# Builds the self-contained GPU bundle under target/gpu-bundle/: a jlink runtime, the jars (the
# forwarders are inside vertx-cuda-device), the test classes with the JUnit console launcher, the
# benchmark, and run.sh. The bundle needs no JVM and no Maven on the GPU host.
#
# usage: bash bundle/build-gpu-bundle.sh        then on the GPU host: bash gpu-bundle/run.sh <output dir>
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
out="$root/target/gpu-bundle"
junit_console=1.9.3   # the JUnit platform version vertx-junit5 5.0.7 brings
rm -rf "$out"
mkdir -p "$out/lib"

# One reactor build: every module's jar and test jar, and every test-scope dependency beside them.
# Hazelcast comes along for the cluster benchmark (ClusterBench: a client JVM and a GPU-node JVM);
# JUnit comes as the console launcher.
# The JMH module (CPU-only, run by CI), the RxJava 3 module, Infinispan (the encrypted cluster
# manager, tested in CI), ArchUnit (the CLI module's LayeringTest, which runs in CI) and the JSON Schema
# validator of the bench's tests stay out.
mvn -B -q -DskipTests -pl '!bench-jmh,!rx-java3' clean package dependency:copy-dependencies \
  -DincludeScope=test -DoutputDirectory="$out/lib" \
  -DexcludeArtifactIds=jackson-annotations,vertx-infinispan,vertx-rx-java3 \
  -DexcludeGroupIds=com.tngtech.archunit,org.junit.jupiter,org.junit.platform,org.opentest4j,org.apiguardian,com.networknt,tools.jackson.core,tools.jackson.dataformat,org.snakeyaml,com.ethlo.time,org.slf4j,org.infinispan,org.jgroups,io.reactivex.rxjava3,org.reactivestreams
for m in client device-verticle library-verticles samples bench; do
  cp "$m"/target/*.jar "$out/lib/"
done
# Reactor jars copied as dependencies come from target/ already; drop any duplicates of ours.
rm -f "$out"/lib/vertx-cuda-*-SNAPSHOT-sources.jar "$out"/lib/vertx-cuda-*-SNAPSHOT-javadoc.jar
mvn -B -q dependency:copy -Dartifact=org.junit.platform:junit-platform-console-standalone:$junit_console \
  -DoutputDirectory="$out/lib"

# JCuda's 24 MB PTX compiler native is not used by this toolkit.
for j in "$out"/lib/jcuda-natives-*.jar; do
  zip -q -d "$j" 'lib/libJNvPTXCompiler*' || true
done

# java.xml and jdk.zipfs: the JUnit console launcher writes XML reports and scans the test jar with them.
# jdk.jfr: profiles taken on the GPU host (JDK Flight Recorder, with bundle/sampling-1ms.jfc).
# java.transaction.xa: Hazelcast (ClusterBench's nodes) fails to start without it; jdk.net: its TCP keep-alive options.
# No java.desktop (it is large): BenchReport draws its charts and writes PNGs with java.base alone.
jlink --add-modules java.base,java.logging,java.naming,java.management,jdk.unsupported,jdk.crypto.ec,java.xml,jdk.zipfs,jdk.jfr,java.transaction.xa,jdk.net \
  --strip-debug --no-header-files --no-man-pages --output "$out/runtime"
# No --compress: xz packs the plain module image far tighter than the zipped one, and the bundle
# must travel beside the working tree within the device tool's 64 MiB.
# jlink leaves out the JDK's default class-data sharing archive; run.sh makes it on the GPU host
# before anything else (-Xshare:dump, about a second), so the archive (several MB) does not travel.

# The jars stored, not deflated: xz then packs their classes together, far tighter than it can
# pack deflated entries (the archive's lib share about halves), and the bundle must leave room in the
# device tool's 64 MiB for the working tree and its committed results. Entry order and bytes unchanged.
python3 - "$out"/lib/*.jar <<'PY'
import os, sys, zipfile
for path in sys.argv[1:]:
    tmp = path + ".stored"
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            data = src.read(info)
            info.compress_type = zipfile.ZIP_STORED
            dst.writestr(info, data)
    os.replace(tmp, path)
PY

cp "$root/bundle/run.sh" "$out/run.sh"
cp "$root/bundle/sampling-1ms.jfc" "$out/sampling-1ms.jfc"
cp "$root/bench/pytorch_bench.py" "$out/pytorch_bench.py"
cp "$root/bundle/compare.py" "$out/compare.py"
cp "$root/bench/src/main/resources/com/vertxcuda/bench/bench-result.schema.json" "$out/"
cp "$root/docs/grafana-dashboard.json" "$out/"
chmod +x "$out/run.sh"
git -C "$root" rev-parse HEAD > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
if ! git -C "$root" diff --quiet HEAD 2>/dev/null; then echo "(with uncommitted changes)" >> "$out/COMMIT"; fi
du -sh "$out" "$out/runtime" "$out/lib"
# What travels to the GPU host: the bundle as one xz archive (the JVM's own library shrinks to a
# third), unpacked there with: tar xJf target/gpu-bundle.tar.xz -C target
tar -C "$root/target" -cf - gpu-bundle | xz -T2 -6 > "$root/target/gpu-bundle.tar.xz"
du -sh "$root/target/gpu-bundle.tar.xz"
