#!/usr/bin/env bash
# Runs on the GPU host (no JVM, no Maven needed). Phase 1, tests, three groups at once:
#   A  the device-tier suite against the backend, in-process and then in process isolation;
#   B  the library suite (BLAS, FFT, RAND, kernels), in-process and then in process isolation;
#   C  the GPU-only tests (device tier, kernels and the fault drill in process isolation), the
#      in-process fault drill in a JVM of its own, native loading, a deliberate sticky error.
# Phase 2, the benchmark, one JVM at a time (each wants the GPU to itself): BenchMain in-process (with
# raw JCuda), BenchMain in process isolation, then PyTorch on the same GPU (pytorch_bench.py, when
# python3 has torch and a GPU; otherwise it writes a note), each into one JSON file; BenchReport turns
# them into report/ (report.md, report.html, a PNG per chart: the headline points' spread over 3
# repeats, the hop tables of "Where the time goes"). Each run stops starting new points at its time
# budget, so the phase ends within about 7 minutes. Every log lands in a work folder; the
# output folder gets summary.txt (as it grows), tests.tgz after phase 1, the JSON files and report/
# as they are made, and at the end all.log and results.tgz (everything).
#
# usage: bash run.sh <output dir> [tests|bench|all|profile|quick|libcheck|gemmcheck|inprocess|linkcheck|pollcheck|pollhops|hops|cluster|graph|focus|web|tests+cluster|bench+cluster|bench+cluster+hops|final|bench+focus|bench+web|tests+web|gpucheck]
#   (any of them with +tail: first the process-isolation fill's tail under JFR in both JVMs, tail.tgz)
#   final (little device time left): the suites but the device tier's in process isolation, the
#   benchmark (callers on the quickstart's PollingTransport, GPU clocks logged), the footprint, then the
#   hop tables with NIO loops polling 100 µs and with the JIT compiling early, and the caller's last
#   hop (about 8.5 minutes).
#   focus: the request path's ordering, loss and event-loop tests, both modes (bench+focus: then the benchmark).
#   profile: small GEMMs under JFR; quick: a short benchmark, then the suites that matter most;
#   inprocess: BenchMain in-process alone (raw JCuda and the toolkit), the GPU's clocks logged;
#   gemmcheck: BenchMain's GEMM and FFT/RNG sweeps alone, both modes, the GPU's clocks logged;
#   libcheck: the library suite in-process, then fill, library hops, FFT/RNG, GEMM and small GEMMs, both modes;
#   pollcheck: fill and library hops and small GEMMs, both modes, PyTorch, then the hops with sleeping loops (~4 minutes);
#   gpucheck: the GPU-only tests (device, kernels, pipelines, phases, NVML meters, the drill, native
#     loading, a sticky error), then the dashboard's picture (dashboard.png), BenchMain's small path and
#     tracing section in both modes, PyTorch's fill;
#   linkcheck: BenchMain's small path in both modes (fill hops, library hops, small GEMMs) with raw
#     JCuda, PyTorch's fill, the footprint (~170 s).
#   pollhops: the footprint of a GPU node with one device, the hop tables with default options, PyTorch's
#   fill, then the hop tables with sleeping loops and the caller's last hop (~2.5 minutes);
#   trust: ZeroedAllocationTest in both modes, then BenchMain's alloc section in both modes
#   (tests+trust: then phase 1, the suites).
#   graph: the recorded-pipeline GPU test, then BenchMain --only graph in both modes and its report.
#   web: the web sample under load (WebLoad: GemmServer against its echo endpoint, process isolation,
#   n = 64, 256, 1024, 64 connections; about 100 s), web-load.json and web-load.md in the output folder.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/out}"
what="${2:-all}"
jfrtail=no
# GROUPS (environment): which of phase 1's groups run (A, B, C above; all three unless said).
groups="${GROUPS:-ABC}"
case "$what" in *+tail) jfrtail=yes; what="${what%+tail}" ;; esac
mkdir -p "$out"
work="$(mktemp -d)"
mkdir -p "$work/bench" "$work/checks"
java="$here/runtime/bin/java"
# The JDK's default class-data sharing archive, which jlink leaves out: without it every JVM here —
# the device host a recovery without a spare waits for, too — loads the JDK's classes the slow way.
[ -f "$here/runtime/lib/server/classes.jsa" ] || "$java" -Xshare:dump > /dev/null 2>&1
cp=""
for j in "$here"/lib/*.jar; do cp="$cp${cp:+:}$j"; done
# The device-tier tests run as in their module: without the library verticles on the class path
# (they would deploy with every context and answer where the tests expect no library), nor the
# samples and the bench, which need them.
devcp=""
for j in "$here"/lib/*.jar; do
  case "$(basename "$j")" in vertx-cuda-libraries-*|vertx-cuda-samples-*|vertx-cuda-bench-*) ;; *) devcp="$devcp${devcp:+:}$j" ;; esac
done
# Each stage has a time limit; past it the JVM prints its threads (SIGQUIT), then is killed.
limit() { timeout --signal=QUIT --kill-after=10 "$@"; }
launcher=(org.junit.platform.console.ConsoleLauncher --disable-banner --details=tree --disable-ansi-colors)
# The library suite's packages (BLAS, FFT, RAND, kernels, the shared library tier).
libs=(--select-package com.vertxcuda.blas --select-package com.vertxcuda.fft --select-package com.vertxcuda.rand
      --select-package com.vertxcuda.kernel --select-package com.vertxcuda.library
      --select-class com.vertxcuda.samples.FftConvolutionTest)
summary="$work/summary.txt"

{
  echo "commit: $(tr '\n' ' ' < "$here/COMMIT")"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  uname -a
  nvidia-smi --query-gpu=name,uuid,driver_version,memory.total --format=csv 2>&1 || echo "nvidia-smi: not available"
  nproc
  "$java" -version 2>&1
} > "$work/host.txt"
cat "$work/host.txt"

# The suites run against cuda where a GPU is usable; elsewhere on host, with the GPU tests skipped.
probe="$("$java" -cp "$cp" com.vertxcuda.device.cuda.CudaBackend 2>/dev/null | tail -n 1)"
if [ "$probe" = cuda ]; then backend=cuda; else backend=host; fi
echo "backend: $backend ($probe)" | tee "$summary"
# The device hosts' class-data archives (DeviceHostArchive): one per class path the suites and the
# benchmark start device hosts on, made now (a training run, a few seconds each) rather than beside
# the first suites; on the GPU host, like the JDK's archive, so nothing more travels in the bundle.
for p in "$cp" "$devcp"; do
  limit 120 "$java" -cp "$p" com.vertxcuda.device.isolation.DeviceHostArchive 2>&1 | tail -n 1
done | tee -a "$summary"

# stage NAME SECONDS CLASSPATH JAVA-ARGS... : runs one stage, logs to NAME.txt, notes its exit code.
stage() {
  local name="$1" secs="$2" classpath="$3"
  shift 3
  local t0=$SECONDS
  limit "$secs" "$java" -cp "$classpath" "$@" > "$work/$name.txt" 2>&1
  local rc=$?
  echo "$name rc=$rc ($((SECONDS - t0)) s)" >> "$summary"
  grep -E "tests (successful|failed|skipped|aborted)" "$work/$name.txt" | tr -s ' ' | sed "s/^/  $name: /" >> "$summary"
  cp "$summary" "$out/summary.txt"
}

suite() { # NAME SECONDS CLASSPATH ISOLATION SELECTORS...
  local name="$1" secs="$2" classpath="$3" isolation="$4"
  shift 4
  stage "$name" "$secs" "$classpath" -Xmx6g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$isolation \
    "${launcher[@]}" "$@" --exclude-tag gpu --exclude-classname ".*ClusterTest" --fail-if-no-tests \
    --reports-dir "$work/reports-$name"
}

commit="$(head -n 1 "$here/COMMIT")"
# The full sweeps want a GPU; on the host backend the small ones run in seconds.
if [ "$backend" = cuda ]; then size=full; else size=small; fi
# benchmark IN_PROCESS_BUDGET PROCESS_BUDGET PYTORCH_BUDGET: the bench phase (seconds: when each run
# stops starting new points; its stage limit is 75 s more: the copy.large section, which always runs,
# measures after the budget's sweeps, well within that). The bench JVM's heap is fixed and touched at
# start (-Xms = -Xmx, AlwaysPreTouch), as a latency-tuned server's is: on a heap still growing and
# shrinking, or not yet touched (every allocation in fresh regions), the time to make a new large
# array varies by orders of magnitude from one repeat to the next, and the copy.large section would
# time the heap rather than the copy. It times a bare new float[] beside downloadFloats either way.
# bench_runs IN_PROCESS_BUDGET PROCESS_BUDGET [BenchMain arguments...]: BenchMain in each mode, in turn.
bench_runs() {
  local in="$1" proc="$2"
  shift 2
  bench_run in_process "$in" "$@"
  bench_run process "$proc" "$@"
}

# bench_run MODE BUDGET [ARGS...]: one BenchMain run, its JSON copied to the output folder.
bench_run() {
  local mode="$1" budget="$2"
  shift 2
  stage bench-$mode $((budget + 75)) "$cp" -Xms8g -Xmx8g -XX:+AlwaysPreTouch com.vertxcuda.bench.BenchMain --backend "$backend" \
    --mode $mode --size $size --budget "$budget" --commit "$commit" --out "$work/bench" "$@"
  cp "$work/bench/bench-$mode.json" "$out/" 2>/dev/null
}

# The report of what bench/ holds, and every run's progress lines.
bench_report() {
  stage bench-report 60 "$cp" -Xmx2g com.vertxcuda.bench.report.BenchReport --out "$out/report" "$work/bench"
  grep -h "^\[bench\|^\[pytorch" "$work"/bench-*.txt > "$out/bench-progress.txt" 2>/dev/null
}

benchmark() {
  bench_runs "$1" "$2"
  pytorch "$3"
  bench_report
  cp "$summary" "$out/summary.txt"
}

# pytorch BUDGET: PyTorch on the same GPU (pytorch_bench.py), into the bench's folder.
pytorch() {
  if command -v python3 > /dev/null; then
    # It writes pytorch.json either way: the measurements, or a note why there are none (no torch, no GPU).
    t0=$SECONDS
    limit $(($1 + 30)) python3 "$here/pytorch_bench.py" --out "$work/bench" --size $size --budget "$1" \
      --commit "$commit" > "$work/bench-pytorch.txt" 2>&1
    echo "bench-pytorch rc=$? ($((SECONDS - t0)) s)" >> "$summary"
    cp "$work/bench/pytorch.json" "$out/" 2>/dev/null
  else
    echo "bench-pytorch: skipped (no python3)" >> "$summary"
  fi
}

if [ "$what" = quick ]; then
  # For little device time: a short benchmark, then the suites that exercise the newest code, most
  # valuable first; summary.txt grows as each stage ends.
  echo "== quick"
  benchmark 50 60 40
  suite libraries-in-process 100 "$cp" in_process "${libs[@]}"
  suite device-in-process 100 "$devcp" in_process --select-package com.vertxcuda.device
  suite libraries-process 200 "$cp" process "${libs[@]}"
fi

# gpu_log_start / gpu_log_stop: the GPU's SM clock, temperature, power and use every 250 ms while a
# stage runs (gpu-clocks.csv in the output folder), to tell a slower GPU from a slower request path.
gpu_log_start() {
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,temperature.gpu,power.draw,utilization.gpu,clocks_throttle_reasons.active \
      --format=csv -lms 250 > "$out/gpu-clocks.csv" 2>&1 &
    gpu_log=$!
  fi
}
gpu_log_stop() {
  [ -n "${gpu_log:-}" ] && kill "$gpu_log" 2>/dev/null
  gpu_log=
}

if [ "$what" = gemmcheck ]; then
  # One-at-a-time GEMM, FFT and RNG alone, both modes (raw JCuda in the in-process run), the GPU's
  # clocks logged: are the toolkit's GEMM rows slower than raw's when nothing runs between them?
  echo "== gemmcheck"
  gpu_log_start
  bench_runs 60 60 --only gemm,fftrng
  gpu_log_stop
  bench_report
  cat "$summary"
fi

if [ "$what" = inprocess ]; then
  # The in-process benchmark alone (raw JCuda, then the toolkit), the GPU's clocks logged: the
  # headline's raw-over-toolkit ratios when little device time is left.
  echo "== inprocess"
  gpu_log_start
  bench_run in_process 150
  gpu_log_stop
  bench_report
  cat "$summary"
fi

if [ "$what" = libcheck ]; then
  # Little device time, a library-side change: the library suite in-process, then BenchMain in both
  # modes for the sweeps such a change moves (fill, library hops, FFT and RNG, GEMM, small GEMMs).
  echo "== libcheck"
  suite libraries-in-process 130 "$cp" in_process "${libs[@]}"
  bench_runs 100 100 --only hops,libhops,fftrng,gemm,smallgemm
  bench_report
  cat "$summary"
fi

if [ "$what" = profile ]; then
  # The points that miss, a few seconds each (COALESCE_IN, COALESCE_PROCESS: GEMMs per message;
  # SMALL_GEMMS a point): in-process four per message against one, process isolation's largest.
  echo "== profile: small GEMMs through the coalescing clients, JFR sampling every 1 ms, both modes"
  pts=(-Dvertxcuda.bench.smallGemms="${SMALL_GEMMS:-3000000}")
  stage small-gemms-profile 150 "$cp" -Xmx6g "${pts[@]}" -Dvertxcuda.bench.coalesce="${COALESCE_IN:-1,4}" \
    -XX:StartFlightRecording=filename="$out/small-gemms.jfr",settings="$here/sampling-1ms.jfc" \
    com.vertxcuda.bench.BenchMain --backend "$backend" --mode in_process --only smallgemm --no-raw \
    --out "$work/profile"
  stage small-gemms-profile-process 150 "$cp" -Xmx6g "${pts[@]}" -Dvertxcuda.bench.coalesce="${COALESCE_PROCESS:-256,1024}" \
    -XX:StartFlightRecording=filename="$out/small-gemms-parent.jfr",settings="$here/sampling-1ms.jfc" \
    -Dvertxcuda.bench.deviceHostJvmOptions="-XX:FlightRecorderOptions=repository=$work/dh-jfr,maxchunksize=1M -XX:StartFlightRecording=disk=true,settings=$here/sampling-1ms.jfc" \
    com.vertxcuda.bench.BenchMain --backend "$backend" --mode process --only smallgemm --no-raw --out "$work/profile"
  # A device host ends by halt: its recording is the repository's chunks, not a dump.
  find "$work/dh-jfr" -name '*.jfr' 2>/dev/null | sort | tar czf "$out/small-gemms-device-host-chunks.tgz" -T - 2>/dev/null
  cp "$work"/small-gemms-profile*.txt "$out/"
  cat "$summary"
fi

if [ "$jfrtail" = yes ]; then
  # The process-isolation fill's tail: the fill hop table (60,000 one at a time) with the GC and
  # safepoint logs of the parent and the device host (a log, not JFR, there: a device host ends by
  # halt, which loses a recording) and JFR in the parent, to count what stops either JVM while the
  # fills run against the outliers' count (p99.9).
  echo "== tail: process-isolation fills under JFR, both JVMs"
  stage tail-process 90 "$cp" -Xmx4g \
    -XX:StartFlightRecording=filename="$work/tail-parent.jfr",settings=profile \
    -Xlog:gc,safepoint:file="$work/tail-parent-gc.log":uptime \
    -Dvertxcuda.bench.deviceHostJvmOptions="-Xlog:gc,safepoint:file=$work/tail-device-host-gc.log:uptime" \
    com.vertxcuda.bench.BenchMain --backend "$backend" --mode process --only hops --size $size --out "$work/tail"
  for f in "$work"/tail-*.jfr; do
    "$here/runtime/bin/jfr" summary "$f" > "$f.summary.txt" 2>&1
    "$here/runtime/bin/jfr" print --events jdk.GarbageCollection,jdk.SafepointBegin,jdk.SafepointEnd,jdk.GCPhasePause "$f" > "$f.pauses.txt" 2>&1
  done
  tar czf "$out/tail.tgz" -C "$work" $(cd "$work" && ls -d tail-* tail 2>/dev/null)
fi

# hops_table VARIANTS: the one-at-a-time hop tables (1 KiB fill, FFT, RNG, TF32 GEMM: context, tiers, clients) in
# both modes for each variant: default (default options, the callers' Vert.x on the quickstart's
# PollingTransport: epoll, polling PollingTransport.defaultPollMicros; with raw JCuda), spinN (DeviceOptions.submissionSpin N µs),
# sleep (Vert.x's NIO transport, loops that sleep until woken),
# native (Vert.x's native transport, epoll, sleeping), wakeN (DeviceOptions.callerWake N µs on the
# native transport: on NIO it is off), pollN (a PollingTransport on NIO polling N µs for a local
# answer) or jitS (-XX:CompileThresholdScaling=S in the bench's JVM and its device hosts: the JIT
# compiles the request path after fewer requests); several joined by + (jit0.05+poll20000); hops.txt
# in the output folder.
hops_table() {
  local v mode props
  echo "== hops: one at a time, per hop, both modes; variants: $*"
  cat /sys/devices/system/cpu/cpuidle/current_driver /sys/devices/system/cpu/cpuidle/current_governor_ro \
    /sys/devices/system/cpu/cpuidle/current_governor 2>/dev/null | sed 's/^/cpuidle: /' | tee -a "$summary"
  local part
  for v in "$@"; do
    props=(-Dvertxcuda.bench.variant=$v)
    for part in ${v//+/ }; do
      case $part in
        spin*) props+=(-Dvertxcuda.bench.submissionSpin=${part#spin}) ;;
        sleep) props+=(-Dvertxcuda.bench.callerPoll=0) ;;
        native) props+=(-Dvertxcuda.bench.nativeTransport=true) ;;
        wake*) props+=(-Dvertxcuda.bench.nativeTransport=true -Dvertxcuda.bench.callerWake=${part#wake}) ;;
        poll*) props+=(-Dvertxcuda.bench.callerPoll=${part#poll}) ;;
        jit*) props+=(-XX:CompileThresholdScaling=${part#jit} \
          -Dvertxcuda.bench.deviceHostJvmOptions=-XX:CompileThresholdScaling=${part#jit}) ;;
      esac
    done
    for mode in in_process process; do
      stage hops-$mode-$v 90 "$cp" -Xmx4g "${props[@]}" \
        com.vertxcuda.bench.BenchMain --backend "$backend" --mode $mode --size $size --only hops,libhops \
        $([ $v = default ] || echo --no-raw) --commit "$commit" --out "$work/hops-$v"
      grep -hE "^\[bench.*(hops\.|roundtrip\.fill)" "$work/hops-$mode-$v.txt" | sed "s/^/$v: /" >> "$out/hops.txt"
    done
  done
}

# loop_hop: the last hop of a local answer alone (no GPU), from the answering thread to the caller's
# handler, on loops that sleep and that poll (CallerLoopHop: NIO and epoll, an 8 µs and a 300 µs
# operation); appended to hops.txt.
loop_hop() {
  local op
  for op in 8 300; do
    stage caller-loop-hop-$op 60 "$cp" -Xmx1g com.vertxcuda.bench.CallerLoopHop $op $([ $op = 8 ] && echo 20000 || echo 5000)
    grep -h "^\[hop\]" "$work/caller-loop-hop-$op.txt" >> "$out/hops.txt"
  done
}

if [ "$what" = hops ] || [ "$what" = bench+cluster+hops ]; then
  # With default options, at each spin in $SPINS (µs), each NIO poll time in $POLLS (µs) and each caller wake in $WAKES (µs;
  # bench+cluster+hops: 50), the wakes after the native transport alone (they need it); in hops
  # alone, then the time the GPU takes to report a poisoning fault (the floor under the poison
  # take-over).
  [ "$what" = hops ] || WAKES="${WAKES:-50}"
  variants="default"
  for v in ${SPINS:-}; do variants="$variants spin$v"; done
  for v in ${POLLS:-}; do variants="$variants poll$v"; done
  for v in ${EXTRA:-}; do variants="$variants $v"; done
  [ -n "${WAKES:-}" ] && variants="$variants native"
  for v in ${WAKES:-}; do variants="$variants wake$v"; done
  hops_table $variants
  if [ "$what" = hops ]; then
    stage sticky-error 30 "$cp" -Xmx1g com.vertxcuda.bench.StickyErrorCheck "$work/checks"
    cp "$work/checks/sticky-error.json" "$out/" 2>/dev/null
    cat "$summary"
  fi
fi

if [ "$what" = trust ] || [ "$what" = tests+trust ]; then
  # New buffers read as zeros: the test in both modes, then what a new buffer costs (zeroed and
  # uninitialized, small and 1 GiB) beside raw JCuda's memset, both modes.
  echo "== trust: zeroed allocations, both modes, and their cost"
  for mode in in_process process; do
    stage zeroed-$mode 90 "$devcp" -Xmx4g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.device.ZeroedAllocationTest --reports-dir "$work/reports-zeroed-$mode"
  done
  bench_runs 40 40 --only alloc
  bench_report
  cat "$summary"
fi

if [ "$what" = graph ]; then
  echo "== graph: recorded pipelines on the GPU (test), then 10 requests against one replay (both modes)"
  stage gpu-pipelines 90 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.PipelineGpuTest \
    --reports-dir "$work/reports-gpu-pipelines"
  for mode in in_process process; do
    stage bench-graph-$mode 150 "$cp" -Xmx8g com.vertxcuda.bench.BenchMain --backend "$backend" \
      --mode $mode --size $size --only graph --no-raw --commit "$commit" --out "$work/bench"
    cp "$work/bench/bench-$mode.json" "$out/" 2>/dev/null
  done
  stage bench-report 60 "$cp" -Xmx2g com.vertxcuda.bench.report.BenchReport --out "$out/report" "$work/bench"
  grep -h "^\[bench" "$work"/bench-*.txt > "$out/bench-progress.txt" 2>/dev/null
  cat "$summary"
fi

# footprint: a GPU node with one device and default options (process isolation, a spare), idle 15 s
# after it is ready; the resident memory of the node JVM and of each device host under it.
footprint() {
  local log="$work/footprint-node.txt" node t0=$SECONDS
  "$java" -Xmx2g -cp "$cp" com.vertxcuda.samples.cluster.GpuNode --devices 1 --backend "$backend" > "$log" 2>&1 &
  node=$!
  for _ in $(seq 1 120); do grep -q "^READY " "$log" && break; sleep 0.5; done
  sleep 15
  {
    echo "footprint: GpuNode --devices 1, default options, idle 15 s after READY ($(date -u +%H:%M:%SZ))"
    ps -o pid=,rss=,args= -p "$node" | awk '{printf "node JVM pid %s: %.0f MB resident\n", $1, $2 / 1024}'
    local hosts
    hosts="$(pgrep -P "$node" | tr '\n' ' ')"
    total=0
    for h in $hosts; do
      rss=$(ps -o rss= -p "$h" | tr -d ' ')
      [ -n "$rss" ] && total=$((total + rss)) && echo "device host pid $h: $((rss / 1024)) MB resident"
    done
    echo "device hosts together (device host and spare): $((total / 1024)) MB resident"
  } > "$work/footprint.txt" 2>&1
  kill "$node" 2>/dev/null; sleep 2; kill -9 "$node" 2>/dev/null
  echo "footprint rc=0 ($((SECONDS - t0)) s)" >> "$summary"
  cp "$work/footprint.txt" "$out/footprint.txt"
}

if [ "$what" = pollhops ]; then
  # Least device time, most needed first (a run cut short by the device budget keeps what it made):
  # the host memory a GPU node's device costs, the hop tables with default options (with raw JCuda;
  # callers polling), PyTorch's fill (its other sweeps cut short by the budget), then sleeping NIO
  # loops and the caller's last hop alone.
  echo "== pollhops"
  footprint
  hops_table default
  pytorch 15
  hops_table sleep
  loop_hop
  cat "$summary"
fi

if [ "$what" = linkcheck ]; then
  # Least device time for the link between a node and its device host: the small path in both modes
  # (the fill's hops, the library hops, the small GEMMs, with raw JCuda), PyTorch's fill, the footprint.
  echo "== linkcheck"
  bench_runs 45 45 --only hops,libhops,smallgemm
  pytorch 20
  bench_report
  footprint
  cat "$summary"
fi

if [ "$what" = gpucheck ]; then
  # The dashboard's picture over a 60 s load (DashboardShot), then the small
  # path and the tracing section in both modes (with raw JCuda), PyTorch's fill.
  echo "== gpucheck"
  stage dashboard 120 "$cp" -Xmx4g com.vertxcuda.bench.report.DashboardShot "$here/grafana-dashboard.json" \
    "$out/dashboard.png" "$backend" 60
  bench_runs 30 30 --only hops,libhops,smallgemm,tracing
  pytorch 20
  bench_report
  cat "$summary"
fi

if [ "$what" = pollcheck ]; then
  # Little device time, the small path: BenchMain in both modes for the fill's hops, the library hops
  # and the small GEMMs (with raw JCuda; callers polling, the bench's default), PyTorch, then the hop
  # tables with sleeping NIO loops for comparison.
  echo "== pollcheck"
  bench_runs 60 60 --only hops,libhops,smallgemm
  pytorch 40
  hops_table sleep
  loop_hop
  bench_report
  cat "$summary"
fi

if [ "$what" = cluster ] || [ "$what" = tests+cluster ] || [ "$what" = bench+cluster ] || [ "$what" = bench+cluster+hops ]; then
  echo "== cluster: a client JVM and a GPU-node JVM on this host, against a plain clustered Vert.x echo"
  stage cluster-bench 200 "$cp" -Xmx4g com.vertxcuda.bench.cluster.ClusterBench "$backend"
  grep -h "\[figure\]" "$work/cluster-bench.txt" > "$out/cluster-bench.txt" 2>/dev/null
fi

if [ "$what" = web ] || [ "$what" = bench+web ] || [ "$what" = tests+web ]; then
  echo "== web: GemmServer (one instance per event loop) against its echo endpoint, a closed-loop client in the same JVM"
  # On the host backend the CPU does the GEMMs (a 1024³ one takes about a second): smaller and fewer.
  if [ "$backend" = cuda ]; then web=(--sizes 64,256,1024 --connections 64); else web=(--sizes 64,256 --connections 8); fi
  stage web-load 150 "$cp" -Xmx8g com.vertxcuda.bench.web.WebLoad --backend "$backend" --mode process "${web[@]}" \
    --warmup 3 --seconds 8 --budget 100 --commit "$commit" --out "$work/web"
  cp "$work/web/web-load.json" "$work/web/web-load.md" "$out/" 2>/dev/null
  grep -h "^\[web" "$work/web-load.txt" > "$out/web-load-progress.txt" 2>/dev/null
  cat "$work/web/web-load.md" 2>/dev/null
  cat "$summary"
fi

if [ "$what" = tests ] || [ "$what" = tests+trust ] || [ "$what" = all ] || [ "$what" = tests+cluster ] || [ "$what" = tests+web ] || [ "$what" = final ] || [ "$what" = gpucheck ]; then
  echo "== phase 1: tests"
  # gpucheck: the GPU-only tests alone, for when device time is short (the suites are left out).
  if [ "$what" != gpucheck ]; then
  # SPLIT=yes (environment): each group's two suites at once rather than one after the other.
  [[ $groups == *A* ]] && (
    suite device-in-process 240 "$devcp" in_process --select-package com.vertxcuda.device &
    [ "${SPLIT:-no}" = yes ] || wait
    # final: the device tier's process-isolation suite is left out (its 3 minutes are the budget's).
    [ "$what" = final ] || suite device-process 300 "$devcp" process --select-package com.vertxcuda.device
    wait
  ) &
  [[ $groups == *B* ]] && (
    suite libraries-in-process 130 "$cp" in_process "${libs[@]}" &
    [ "${SPLIT:-no}" = yes ] || wait
    suite libraries-process 240 "$cp" process "${libs[@]}"
    wait
  ) &
  fi
  [[ $groups == *C* ]] && (
    stage gpu-device 60 "$devcp" -Xmx8g "${launcher[@]}" --select-package com.vertxcuda.device --include-tag gpu \
      --reports-dir "$work/reports-gpu-device"
    stage gpu-kernels 70 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.KernelGpuTest \
      --exclude-tag poisons-this-jvm --reports-dir "$work/reports-gpu-kernels"
    stage gpu-pipelines 90 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.PipelineGpuTest \
      --reports-dir "$work/reports-gpu-pipelines"
    stage gpu-nvml 60 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.samples.metrics.GpuMetersGpuTest \
      --reports-dir "$work/reports-gpu-nvml"
    stage drill-in-process 50 "$cp" -Xmx2g "${launcher[@]}" \
      --select-method com.vertxcuda.kernel.KernelGpuTest#faultDrillInProcess --reports-dir "$work/reports-drill"
    stage native-libraries 30 "$cp" -Xmx1g com.vertxcuda.bench.NativeLibrariesCheck "$work/checks"
    stage sticky-error 30 "$cp" -Xmx1g com.vertxcuda.bench.StickyErrorCheck "$work/checks"
  ) &
  wait
  [[ $groups == *C* ]] &&
  # Alone on the GPU: it compares the toolkit's GPU time of a GEMM with raw JCuda's, timed in the same
  # JVM, which the suites' work on the GPU would slow.
  stage gpu-phases 60 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.PhasesGpuTest \
    --reports-dir "$work/reports-gpu-phases"
  cat "$summary"
  # The reliability tests' figures (lines tagged [figure]), for docs/reliability.md.
  grep -h "\[figure\]" "$work"/*.txt > "$out/figures.txt" 2>/dev/null
  # Keep what the tests gave even if the benchmarks overrun the time limit.
  tar czf "$out/tests.tgz" -C "$work" .
fi

if [ "$what" = focus ] || [ "$what" = bench+focus ]; then
  # The request path's own tests, both modes: the caller's order (coalesced GEMMs, chunked transfers,
  # from an event loop, a worker, a plain thread), losses answered when decided, the caller's loop
  # during 1 GiB transfers.
  echo "== focus: ordering, losses and the caller's loop, both modes"
  for mode in in_process process; do
    stage focus-device-$mode 150 "$devcp" -Xmx8g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.device.LoopNeverStopsTest --reports-dir "$work/reports-focus-device-$mode"
    stage focus-libraries-$mode 150 "$cp" -Xmx6g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.blas.CallerOrderTest --select-class com.vertxcuda.library.LossAnswersTest \
      --select-class com.vertxcuda.blas.CoalescingClientTest --reports-dir "$work/reports-focus-libraries-$mode"
  done
  grep -h "\[figure\]" "$work"/focus-*.txt > "$out/figures.txt" 2>/dev/null
  cat "$summary"
fi

if [ "$what" = bench ] || [ "$what" = all ] || [ "$what" = bench+cluster ] || [ "$what" = bench+cluster+hops ] || [ "$what" = final ] || [ "$what" = bench+focus ] || [ "$what" = bench+web ]; then
  echo "== phase 2: benchmark"
  gpu_log_start
  benchmark 150 160 75
  gpu_log_stop
  footprint
  cat "$summary"
fi

if [ "$what" = final ]; then
  # Against the bench's own hop rows (default options, callers polling on epoll) just measured: NIO
  # loops polling 100 µs (the default poll time on a small host), then the JIT compiling
  # the request path after a twentieth of the requests (the hop rows' fresh tiers and device hosts
  # serve a few thousand requests of each library: warm or not?).
  hops_table poll100 jit0.05
  loop_hop
  cat "$summary"
fi

for f in "$work"/*.txt; do echo "===== $(basename "$f")"; cat "$f"; done > "$out/all.log"
cp "$summary" "$out/summary.txt"
tar czf "$out/results.tgz" -C "$work" .
rm -rf "$work"
