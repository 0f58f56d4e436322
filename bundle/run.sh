#!/usr/bin/env bash
# Runs on the GPU host (no JVM, no Maven needed): bash run.sh OUT STAGE[+STAGE...], the stages in the
# order given (default tests+bench). Each stage's JVMs run under a time limit (past it the JVM prints
# its threads, then is killed); summary.txt in OUT grows as each ends; at the end all.log and
# results.tgz (every log, report and benchmark file). Stages, and the environment each reads:
#   tests     three groups at once: A the device-tier suite in-process then in process isolation; B the
#             library suite (BLAS, FFT, RAND, kernels) likewise; C the GPU-only tests (device tier,
#             kernels and the fault drill in process isolation, pipelines, NVML meters), the in-process
#             fault drill in a JVM of its own, native loading, a deliberate sticky error; then, alone on
#             the GPU, PhasesGpuTest. TEST_GROUPS (ABC): which groups (bash keeps GROUPS for
#             itself); SPLIT=yes: each group's two suites at once. tests.tgz, and figures.txt (the
#             lines tests tag [figure], for docs/reliability.md).
#   bench     BenchMain in-process (with raw JCuda), BenchMain in process isolation, PyTorch on the same
#             GPU (pytorch_bench.py; a note in pytorch.json where torch or a GPU is missing), BenchReport
#             (report/: report.md, report.html, a PNG per chart), the GPU's clocks every 250 ms
#             (gpu-clocks.csv), then the footprint of an idle GPU node. ONLY: BenchMain's sections
#             (--only); BUDGETS: seconds each run stops starting points, "in-process process pytorch"
#             (150 160 75; pytorch 0: none).
#   compare   this bundle's BenchMain against other commits' (BASE: folders of their jars, made by
#             bundle/build-base-jars.sh), one JVM at a time, alternating, in MODES (both), REPS (3) times;
#             ONLY (hops,smallgemm,payload), BUDGET (20 s per run), JPROPS (JVM options of every
#             BenchMain: -Dvertxcuda.bench.coalesce=64); compare/ and compare.txt (each point's median
#             over the repeats, this commit's over each base's).
#   hops      the one-at-a-time hop tables in both modes for each variant in HOPS ("default"; see
#             hops_table), then the caller's last hop alone (CallerLoopHop); hops.txt.
#   graph     PipelineGpuTest, then BenchMain --only graph in both modes and its report.
#   focus     the request path's ordering, loss and caller's-loop tests, both modes.
#   trust     ZeroedAllocationTest in both modes, then BenchMain's alloc section in both modes.
#   cluster   ClusterBench: a client JVM and a GPU-node JVM on this host against a clustered echo.
#   web       WebLoad: the web sample under load against its echo endpoint; web-load.json, web-load.md.
#   dashboard DashboardShot: the Grafana dashboard's panels over a 60 s load, dashboard.png.
#   profile   the small-GEMM sweep under JFR (sampling every 1 ms), both modes, both JVMs.
#   tail      the process-isolation fill hop table with GC/safepoint logs of both JVMs and JFR in the
#             parent (a device host ends by halt, which loses a recording); tail.tgz.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-$here/out}"
stages="${2:-tests+bench}"
known="tests bench compare hops graph focus trust cluster web dashboard profile tail"
for s in ${stages//+/ }; do
  [[ " $known " == *" $s "* ]] || { echo "run.sh: no stage '$s' (stages: $known)" >&2; exit 2; }
done
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

# benchmain NAME LIMIT CLASSPATH MAIN [ARGS...]: one BenchMain JVM as a stage. The heap is fixed and
# touched at start (-Xms = -Xmx, AlwaysPreTouch), as a latency-tuned server's is: on a heap still
# growing, or not yet touched, the time to make a new large array varies by orders of magnitude
# between repeats, and the copy.large section would time the heap, not the copy.
benchmain() {
  local name="$1" secs="$2" classpath="$3" main="$4"
  shift 4
  stage "$name" "$secs" "$classpath" -Xms8g -Xmx8g -XX:+AlwaysPreTouch ${JPROPS:-} "$main" --backend "$backend" \
    --size $size "$@"
}

# bench_run MODE BUDGET [ARGS...]: one BenchMain run (its stage limit is 75 s past the budget: the
# copy.large section, which always runs, measures after the budget's sweeps), its JSON copied to OUT.
bench_run() {
  local mode="$1" budget="$2"
  shift 2
  benchmain bench-$mode $((budget + 75)) "$cp" com.vertxcuda.bench.BenchMain --mode $mode --budget "$budget" \
    --commit "$commit" --out "$work/bench" "$@"
  cp "$work/bench/bench-$mode.json" "$out/" 2>/dev/null
}

# The report of what bench/ holds, and every run's progress lines.
bench_report() {
  stage bench-report 60 "$cp" -Xmx2g com.vertxcuda.bench.report.BenchReport --out "$out/report" "$work/bench"
  grep -h "^\[bench\|^\[pytorch" "$work"/bench-*.txt > "$out/bench-progress.txt" 2>/dev/null
}

# pytorch BUDGET: PyTorch on the same GPU (pytorch_bench.py), into the bench's folder.
pytorch() {
  if command -v python3 > /dev/null; then
    local t0=$SECONDS
    limit $(($1 + 30)) python3 "$here/pytorch_bench.py" --out "$work/bench" --size $size --budget "$1" \
      --commit "$commit" > "$work/bench-pytorch.txt" 2>&1
    echo "bench-pytorch rc=$? ($((SECONDS - t0)) s)" >> "$summary"
    cp "$work/bench/pytorch.json" "$out/" 2>/dev/null
  else
    echo "bench-pytorch: skipped (no python3)" >> "$summary"
  fi
}

st_tests() {
  local groups="${TEST_GROUPS:-ABC}"
  [[ $groups == *A* ]] && (
    suite device-in-process 240 "$devcp" in_process --select-package com.vertxcuda.device &
    [ "${SPLIT:-no}" = yes ] || wait
    suite device-process 300 "$devcp" process --select-package com.vertxcuda.device
    wait
  ) &
  [[ $groups == *B* ]] && (
    suite libraries-in-process 130 "$cp" in_process "${libs[@]}" &
    [ "${SPLIT:-no}" = yes ] || wait
    suite libraries-process 240 "$cp" process "${libs[@]}"
    wait
  ) &
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
  # Alone on the GPU: it compares the toolkit's GPU time of a GEMM with raw JCuda's, timed in the same
  # JVM, which the suites' work on the GPU would slow.
  [[ $groups == *C* ]] && stage gpu-phases 60 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.PhasesGpuTest \
    --reports-dir "$work/reports-gpu-phases"
  grep -h "\[figure\]" "$work"/*.txt > "$out/figures.txt" 2>/dev/null
  tar czf "$out/tests.tgz" -C "$work" .
}

st_bench() {
  local budgets=(${BUDGETS:-150 160 75})
  local only=()
  [ -n "${ONLY:-}" ] && only=(--only "$ONLY")
  gpu_log_start
  bench_run in_process "${budgets[0]}" "${only[@]}"
  bench_run process "${budgets[1]}" "${only[@]}"
  gpu_log_stop
  [ "${budgets[2]}" -gt 0 ] && pytorch "${budgets[2]}"
  bench_report
  footprint
}

# compare: each BASE's jars replace this bundle's own (vertx-cuda-*) on the same runtime and
# dependencies; its BenchMain class is named in BASE/MAIN. Alternating the commits, one JVM at a time,
# puts all under the same moments of a shared host's load.
st_compare() {
  local bases=(${BASE:?compare needs BASE, the folders of the commits to compare with}) depcp="" j b rep mode
  for j in "$here"/lib/*.jar; do
    case "$(basename "$j")" in vertx-cuda-*) ;; *) depcp="$depcp${depcp:+:}$j" ;; esac
  done
  local whos=(this) cps=("$cp") mains=(com.vertxcuda.bench.BenchMain) ids=("$commit")
  for b in "${bases[@]}"; do
    local basecp="$depcp"
    for j in "$b"/*.jar; do basecp="$basecp:$j"; done
    limit 120 "$java" -cp "$basecp" com.vertxcuda.device.isolation.DeviceHostArchive 2>&1 | tail -n 1 >> "$summary"
    ids+=("$(cat "$b/COMMIT" 2>/dev/null || basename "$b")")
    whos+=("base_${ids[-1]}")
    cps+=("$basecp")
    mains+=("$(cat "$b/MAIN" 2>/dev/null || echo com.vertxcuda.bench.BenchMain)")
  done
  for rep in $(seq 1 "${REPS:-3}"); do
    for mode in ${MODES:-in_process process}; do
      for i in "${!whos[@]}"; do
        benchmain compare-${whos[$i]}-$mode-$rep $((${BUDGET:-20} + 60)) "${cps[$i]}" "${mains[$i]}" --mode $mode \
          --budget "${BUDGET:-20}" --only "${ONLY:-hops,smallgemm,payload}" --commit "${ids[$i]}" \
          --out "$work/compare/${whos[$i]}-$mode-$rep"
      done
    done
  done
  python3 "$here/compare.py" "$work/compare" > "$out/compare.txt" 2>&1
  tar czf "$out/compare.tgz" -C "$work" compare
}

st_hops() {
  hops_table ${HOPS:-default}
  loop_hop
}

st_graph() {
  stage gpu-pipelines 90 "$cp" -Xmx4g "${launcher[@]}" --select-class com.vertxcuda.kernel.PipelineGpuTest \
    --reports-dir "$work/reports-gpu-pipelines"
  for mode in in_process process; do
    stage bench-graph-$mode 150 "$cp" -Xmx8g com.vertxcuda.bench.BenchMain --backend "$backend" \
      --mode $mode --size $size --only graph --no-raw --commit "$commit" --out "$work/bench"
    cp "$work/bench/bench-$mode.json" "$out/" 2>/dev/null
  done
  bench_report
}

# The request path's own tests, both modes: the caller's order (coalesced GEMMs, chunked transfers,
# from an event loop, a worker, a plain thread), losses answered when decided, the caller's loop
# during 1 GiB transfers.
st_focus() {
  for mode in in_process process; do
    stage focus-device-$mode 150 "$devcp" -Xmx8g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.device.LoopNeverStopsTest --reports-dir "$work/reports-focus-device-$mode"
    stage focus-libraries-$mode 150 "$cp" -Xmx6g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.blas.CallerOrderTest --select-class com.vertxcuda.library.LossAnswersTest \
      --select-class com.vertxcuda.blas.CoalescingClientTest --reports-dir "$work/reports-focus-libraries-$mode"
  done
  grep -h "\[figure\]" "$work"/focus-*.txt >> "$out/figures.txt" 2>/dev/null
}

# New buffers read as zeros, in both modes; then what a new buffer costs (zeroed and uninitialized,
# small and 1 GiB) beside raw JCuda's memset.
st_trust() {
  for mode in in_process process; do
    stage zeroed-$mode 90 "$devcp" -Xmx4g -Dvertxcuda.test.backend=$backend -Dvertxcuda.test.isolation=$mode \
      "${launcher[@]}" --select-class com.vertxcuda.device.ZeroedAllocationTest --reports-dir "$work/reports-zeroed-$mode"
  done
  bench_run in_process 40 --only alloc
  bench_run process 40 --only alloc
  bench_report
}

st_cluster() {
  stage cluster-bench 200 "$cp" -Xmx4g com.vertxcuda.bench.cluster.ClusterBench "$backend"
  grep -h "\[figure\]" "$work/cluster-bench.txt" > "$out/cluster-bench.txt" 2>/dev/null
}

# GemmServer (one instance per event loop) against its echo endpoint, a closed-loop client in the
# same JVM. On the host backend the CPU does the GEMMs (a 1024³ one takes about a second): smaller and fewer.
st_web() {
  local web
  if [ "$backend" = cuda ]; then web=(--sizes 64,256,1024 --connections 64); else web=(--sizes 64,256 --connections 8); fi
  stage web-load 150 "$cp" -Xmx8g com.vertxcuda.bench.web.WebLoad --backend "$backend" --mode process "${web[@]}" \
    --warmup 3 --seconds 8 --budget 100 --commit "$commit" --out "$work/web"
  cp "$work/web/web-load.json" "$work/web/web-load.md" "$out/" 2>/dev/null
  grep -h "^\[web" "$work/web-load.txt" > "$out/web-load-progress.txt" 2>/dev/null
}

st_dashboard() {
  stage dashboard 120 "$cp" -Xmx4g com.vertxcuda.bench.report.DashboardShot "$here/grafana-dashboard.json" \
    "$out/dashboard.png" "$backend" 60
}
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

st_profile() {
  # The points that miss, a few seconds each (COALESCE_IN, COALESCE_PROCESS: GEMMs per message;
  # SMALL_GEMMS a point): in-process four per message against one, process isolation's largest.
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
}

st_tail() {
  # The process-isolation fill's tail: the fill hop table (60,000 one at a time) with the GC and
  # safepoint logs of the parent and the device host (a log, not JFR, there: a device host ends by
  # halt, which loses a recording) and JFR in the parent, to count what stops either JVM while the
  # fills run against the outliers' count (p99.9).
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
}

for s in ${stages//+/ }; do
  echo "== $s"
  "st_$s"
  cp "$summary" "$out/summary.txt"
done
cat "$summary"
for f in "$work"/*.txt; do echo "===== $(basename "$f")"; cat "$f"; done > "$out/all.log"
tar czf "$out/results.tgz" -C "$work" .
rm -rf "$work"
