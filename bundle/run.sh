#!/usr/bin/env bash
# Runs on the GPU host (no JVM, no Maven needed): the device-tier suite against the cuda backend,
# the GPU-only tests, a check of each CUDA library through native loading, the benchmark, then a
# deliberate sticky error in a JVM of its own. Everything lands in the output folder given.
#
# usage: bash run.sh <output dir>
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/out}"
mkdir -p "$out"
java="$here/runtime/bin/java"
cp=""
for j in "$here"/lib/*.jar; do cp="$cp${cp:+:}$j"; done
# The device-tier tests run as in their module: without the library verticles on the class path
# (they would deploy with every context and answer where the tests expect no library).
devcp=""
for j in "$here"/lib/*.jar; do
  case "$(basename "$j")" in vertx-cuda-libraries-*|vertx-cuda-samples-*) ;; *) devcp="$devcp${devcp:+:}$j" ;; esac
done
# Each stage has a time limit; past it the JVM prints its threads (SIGQUIT), then is killed.
limit() { timeout --signal=QUIT --kill-after=10 "$@"; }
launcher=(org.junit.platform.console.ConsoleLauncher --disable-banner --details=tree --disable-ansi-colors)

{
  echo "commit: $(cat "$here/COMMIT" | tr '\n' ' ')"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not available"
  "$java" -version 2>&1
} > "$out/host.txt"
cat "$out/host.txt"

# The suite runs against cuda where a GPU is usable; elsewhere on host, with the GPU tests skipped.
probe="$("$java" -cp "$cp" com.vertxcuda.device.cuda.CudaBackend 2>&1)"
if [ "$probe" = cuda ]; then backend=cuda; else backend=host; fi
echo "backend: $backend ($probe)" | tee "$out/summary.txt"

# ClusterTest needs Hazelcast, which the bundle leaves out.
echo "== (a) device-tier suite, backend $backend"
limit 200 "$java" -Xmx6g -Dvertxcuda.test.backend=$backend -cp "$devcp" "${launcher[@]}" \
  --select-package com.vertxcuda.device --exclude-tag gpu --exclude-classname ".*ClusterTest" --fail-if-no-tests --reports-dir "$out/suite-cuda" \
  > "$out/suite-cuda.txt" 2>&1
echo "suite rc=$?" | tee -a "$out/summary.txt"
tail -n 25 "$out/suite-cuda.txt"

echo "== (b) GPU-only tests"
limit 150 "$java" -Xmx8g -Dvertxcuda.test.backend=$backend -cp "$devcp" "${launcher[@]}" \
  --select-package com.vertxcuda.device --include-tag gpu --reports-dir "$out/gpu-tests" \
  > "$out/gpu-tests.txt" 2>&1
echo "gpu tests rc=$?" | tee -a "$out/summary.txt"
tail -n 25 "$out/gpu-tests.txt"

echo "== (c) native libraries through NativeLoading (forwarders where needed)"
limit 60 "$java" -Xmx1g -cp "$cp" com.vertxcuda.samples.bench.NativeLibrariesCheck "$out/bench" > "$out/native-libraries.txt" 2>&1
echo "native libraries rc=$?" | tee -a "$out/summary.txt"
cat "$out/native-libraries.txt"

echo "== (d) benchmark"
limit 150 "$java" -Xmx4g -cp "$cp" com.vertxcuda.samples.bench.DeviceBench "$out/bench" > "$out/bench.txt" 2>&1
echo "bench rc=$?" | tee -a "$out/summary.txt"
cat "$out/bench.txt"

echo "== (e) a sticky error, on purpose, in a process of its own"
limit 60 "$java" -Xmx1g -cp "$cp" com.vertxcuda.samples.bench.StickyErrorCheck "$out/bench" > "$out/sticky-error.txt" 2>&1
echo "sticky error rc=$?" | tee -a "$out/summary.txt"
cat "$out/sticky-error.txt"
