#!/usr/bin/env python3
"""PyTorch on the same GPU, the yardstick users will apply: the sweeps BenchMain measures through
raw JCuda and the toolkit, made with PyTorch in one process, written in the same JSON schema
(bench/SCHEMA.md) as DIR/pytorch.json. BenchReport reads it beside BenchMain's files.

usage: python3 pytorch_bench.py --out DIR [--size small|full] [--device cuda|cpu] [--commit ID]
                                [--budget SECONDS]

Without torch, or without a CUDA device when --device is cuda, it writes a file with no series
and a note saying why. --device cpu runs the same code on the CPU (to try the script without a GPU).
The sizes follow bench/src/main/java/com/vertxcuda/bench/SweepSizes.java.
"""
import argparse
import datetime
import json
import os
import platform
import socket
import sys
import time

KIB = 1 << 10
MIB = 1 << 20
SIZES = {
    "full": dict(payloads=[4, 64, KIB, 16 * KIB, 256 * KIB, 4 * MIB, 64 * MIB],
                 gemm=[64, 128, 256, 512, 1024, 2048, 4096, 8192], coalesce=[1, 4, 16, 64, 256, 1024],
                 small_gemms=100_000, batched_gemms=[(64, 1024), (256, 256)],
                 copies=[4 * KIB, 64 * KIB, MIB, 4 * MIB, 16 * MIB, 256 * MIB, 1024 * MIB],
                 host_copies=[64 * KIB, MIB, 4 * MIB, 16 * MIB, 256 * MIB], large_copy=1024 * MIB,
                 fft=[1 << k for k in range(8, 25, 2)], rng=[1 << 10, 1 << 14, 1 << 18, 1 << 22, 1 << 26, 1 << 28],
                 fill_runs=20_000, seconds_per_point=0.25, min_runs=10, max_runs=20_000, budget=90),
    "small": dict(payloads=[4, 64, KIB, 16 * KIB, 256 * KIB], gemm=[64, 128, 256], coalesce=[1, 16, 64],
                  small_gemms=200, batched_gemms=[(16, 256), (64, 16)], copies=[4 * KIB, 64 * KIB, MIB],
                  host_copies=[64 * KIB, MIB], large_copy=16 * MIB, fft=[1 << 8, 1 << 10, 1 << 12],
                  rng=[1 << 10, 1 << 14, 1 << 18], fill_runs=500, seconds_per_point=0.01, min_runs=5,
                  max_runs=300, budget=60),
}
CDF_FRACTIONS = [0, .1, .25, .5, .75, .9, .95, .99, .995, .999, .9995, 1]
# How many times a headline point is measured in one run (BenchMain's Bench.REPEATS): its value is the
# median, each repeat's figure kept in "repeats", so noise shows as spread.
REPEATS = 3
# copy.large (BenchMain's LargeCopySection): timed runs of each repeat, fewer where the warm-up run was slow.
LARGE_RUNS = 5
LARGE_SLOW_RUNS = 3
LARGE_SLOW_RUN_NS = 200_000_000
# The variant of a download into a new tensor each copy (copy.d2h, copy.large.d2h).
NEW_TENSOR = "a new tensor each copy (.cpu())"


def four(v):
    """Four significant digits: what a benchmark figure can claim."""
    return float("%.4g" % v)


class Record:
    """One run's results in the benchmark schema (the same document BenchRecord.java writes)."""

    def __init__(self, commit, backend, size, device):
        self.started = time.perf_counter()
        self.run = {"tool": "pytorch_bench.py", "commit": commit,
                    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    "backend": backend, "size": size,
                    "host": {"name": socket.gethostname(), "os": platform.system() + " " + platform.release(),
                             "cores": os.cpu_count() or 1, "python": platform.python_version()},
                    "arguments": sys.argv[1:]}
        if device:
            self.run["device"] = device
        self.series = []
        self.skipped = []

    def new_series(self, sweep, variant, kind, unit, x_name, x_unit, note=None):
        s = {"sweep": sweep, "path": "pytorch", "variant": variant, "kind": kind, "unit": unit,
             "x": {"name": x_name, "unit": x_unit}, "points": []}
        if note:
            s["note"] = note
        self.series.append(s)
        return s

    def skip(self, sweep, reason):
        self.skipped.append({"sweep": sweep, "path": "pytorch", "reason": reason})

    def write(self, out):
        self.run["wallSeconds"] = round(time.perf_counter() - self.started, 2)
        doc = {"schema": "vertx-cuda-bench/1", "run": self.run,
               "series": [s for s in self.series if s["points"]], "skipped": self.skipped}
        os.makedirs(out, exist_ok=True)
        path = os.path.join(out, "pytorch.json")
        with open(path, "w") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        return path


def median(values):
    v = sorted(values)
    m = len(v) // 2
    return v[m] if len(v) % 2 else (v[m - 1] + v[m]) / 2


def latency(ns_sorted, cdf):
    """A point's latency object (microseconds) from sorted run times in nanoseconds."""
    n = len(ns_sorted)

    def at(q):
        return ns_sorted[min(n - 1, int(q * n))] / 1e3

    lat = {"unit": "us", "p50": four(at(.5)), "p90": four(at(.9)), "p99": four(at(.99)), "p999": four(at(.999)),
           "mean": four(sum(ns_sorted) / n / 1e3), "min": four(ns_sorted[0] / 1e3), "max": four(ns_sorted[-1] / 1e3)}
    if cdf:
        lat["cdf"] = [[four(at(q) if q < 1 else ns_sorted[-1] / 1e3), q] for q in CDF_FRACTIONS]
    return lat


class Bench:
    """The run's sizes, budget and progress lines, and the ways a point is timed."""

    def __init__(self, torch, dev, sizes, budget, record):
        self.torch = torch
        self.dev = dev
        self.sizes = sizes
        self.record = record
        self.start = time.perf_counter()
        self.deadline = self.start + budget
        self.budget = budget

    def sync(self):
        if self.dev.type == "cuda":
            self.torch.cuda.synchronize()

    def progress(self, text):
        print("[pytorch %6.1f s] %s" % (time.perf_counter() - self.start, text), flush=True)

    def in_budget(self, sweep, what):
        if time.perf_counter() < self.deadline:
            return True
        self.record.skip(sweep, "time budget (%.0f s) spent before %s" % (self.budget, what))
        self.progress("%s: budget spent, %s and after skipped" % (sweep, what))
        return False

    def plan(self, op):
        """(warmup, runs) for a point, from the fastest of three probe runs of op (which end synchronized)."""
        probe = []
        for _ in range(3):
            t0 = time.perf_counter_ns()
            op()
            probe.append(time.perf_counter_ns() - t0)
        wanted = self.sizes["seconds_per_point"] * 1e9 / max(1, min(probe))
        runs = int(max(self.sizes["min_runs"], min(self.sizes["max_runs"], wanted)))
        return max(3, runs // 10), runs

    def timed(self, op, warmup, runs):
        for _ in range(warmup):
            op()
        ns = []
        for _ in range(runs):
            t0 = time.perf_counter_ns()
            op()
            ns.append(time.perf_counter_ns() - t0)
        ns.sort()
        return ns

    def repeated(self, op, warmup, runs, repeats):
        """The sorted run times of each of repeats measurements of one point."""
        return [self.timed(op, warmup, runs) for _ in range(repeats)]

    def latency_point(self, series, x, op, cdf=False, plan=None, repeats=1):
        """A latency point; a headline one (repeats > 1) gets the median of its repeats' p50s."""
        warmup, runs = plan or self.plan(op)
        each = self.repeated(op, warmup, runs, repeats)
        ns = sorted(t for r in each for t in r)
        lat = latency(ns, cdf)
        point = {"x": x, "runs": runs * repeats, "warmup": warmup * repeats, "value": lat["p50"], "latency": lat}
        if repeats > 1:
            p50s = [r[len(r) // 2] / 1e3 for r in each]
            point["value"] = four(median(p50s))
            point["repeats"] = [four(v) for v in p50s]
        series["points"].append(point)
        self.progress("%-20s %-24s %10s: p50 %9.1f us%s  p99 %9.1f us  p99.9 %9.1f us  (%d runs)" % (
            series["sweep"], series["variant"], x, point["value"],
            "  (repeats %s)" % ", ".join("%.1f" % v for v in point["repeats"]) if repeats > 1 else "",
            lat["p99"], lat["p999"], runs * repeats))
        return warmup + runs

    def bandwidth_point(self, series, nbytes, op, repeats=1):
        """A bandwidth point (bytes over the median time); a headline one gets the median of its repeats'."""
        warmup, runs = self.plan(op)
        self.bandwidth_record(series, nbytes, self.repeated(op, warmup, runs, repeats), warmup * repeats)

    def large_bandwidth_point(self, series, nbytes, op):
        """A large copy's point as BenchMain's copy.large takes it: one warm-up run, then REPEATS repeats of a
        few runs (three where the warm-up took past 200 ms)."""
        t0 = time.perf_counter_ns()
        op()
        runs = LARGE_SLOW_RUNS if time.perf_counter_ns() - t0 > LARGE_SLOW_RUN_NS else LARGE_RUNS
        self.bandwidth_record(series, nbytes, self.repeated(op, 0, runs, REPEATS), 1)

    def bandwidth_record(self, series, nbytes, each, warmup):
        """The point of one or more repeats' sorted run times, after warmup untimed runs in all."""
        repeats = len(each)
        runs = len(each[0])
        ns = sorted(t for r in each for t in r)
        rates = [nbytes / r[len(r) // 2] for r in each]
        point = {"x": nbytes, "runs": runs * repeats, "warmup": warmup, "value": four(median(rates)),
                 "latency": latency(ns, False), "extra": {"bestGBps": four(nbytes / ns[0])}}
        if repeats > 1:
            point["repeats"] = [four(v) for v in rates]
        series["points"].append(point)
        self.progress("%-20s %-24s %10d: %8.2f GB/s median  (%d runs)" % (
            series["sweep"], series["variant"], nbytes, median(rates), runs * repeats))

    def burst_point(self, series, x, call, count, warmup):
        """Time per call of count calls made back to back, one synchronize at the end."""
        self.sync()
        t0 = time.perf_counter_ns()
        for _ in range(count):
            call()
        self.sync()
        ns = time.perf_counter_ns() - t0
        series["points"].append({"x": x, "runs": count, "warmup": warmup, "value": four(ns / 1e3 / count)})
        self.progress("%-20s %-24s %10s: %9.1f us each  (%d back to back)" % (
            series["sweep"], series["variant"], x, ns / 1e3 / count, count))


def hops(b):
    torch = b.torch
    s = b.record.new_series("roundtrip.fill", "fill_ + synchronize", "latency", "us", "payload", "B")
    x = torch.empty(256, dtype=torch.float32, device=b.dev)
    runs = b.sizes["fill_runs"]

    def fill():
        x.fill_(1.0)
        b.sync()
    b.latency_point(s, 1024, fill, cdf=True, plan=(runs // 10, runs), repeats=REPEATS)


def payload(b):
    torch = b.torch
    s = b.record.new_series("roundtrip.payload", "pinned, one synchronize", "latency", "us", "payload", "B")
    largest = max(b.sizes["payloads"])
    h = host_bytes(b, largest, pinned=True)
    d = torch.empty(largest, dtype=torch.uint8, device=b.dev)
    for n in b.sizes["payloads"]:
        if not b.in_budget(s["sweep"], "%d B" % n):
            return

        def echo(n=n):
            d[:n].copy_(h[:n], non_blocking=True)
            h[:n].copy_(d[:n], non_blocking=True)
            b.sync()
        b.latency_point(s, n, echo, cdf=(n <= 4))


def gemm(b):
    torch = b.torch
    for variant in ("FP32", "TF32", "F16"):
        note = "F16 output (torch.mm keeps its inputs' dtype); the toolkit's F16 GEMM writes F32" \
            if variant == "F16" else None
        lat = b.record.new_series("gemm.latency", variant, "time", "us", "m = n = k", "", note)
        pipe = b.record.new_series("gemm.pipelined", variant, "time", "us", "m = n = k", "", note)
        if b.dev.type == "cuda":
            torch.backends.cuda.matmul.allow_tf32 = variant == "TF32"
        dtype = torch.float16 if variant == "F16" else torch.float32
        if variant == "F16" and b.dev.type == "cpu":
            b.record.skip("gemm.latency", "F16: half-precision mm is a GPU figure")
            continue
        for n in b.sizes["gemm"]:
            if not b.in_budget(lat["sweep"], "%s %d" % (variant, n)):
                break
            a = torch.full((n, n), 1.0, dtype=dtype, device=b.dev)
            bb = torch.full((n, n), 0.5, dtype=dtype, device=b.dev)
            c = torch.empty((n, n), dtype=dtype, device=b.dev)

            def mm():
                torch.mm(a, bb, out=c)

            def once():
                mm()
                b.sync()
            warmup, runs = b.plan(once)
            b.latency_point(lat, n, once, plan=(warmup, runs),
                            repeats=REPEATS if n == max(b.sizes["gemm"]) else 1)
            b.burst_point(pipe, n, mm, min(1024, runs), warmup + runs)
            del a, bb, c
    if b.dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False


def small_gemms(b):
    torch = b.torch
    s = b.record.new_series("smallgemm.batch", "one thread", "rate", "1/s", "GEMMs per message", "",
                            "1: torch.mm per GEMM; more: torch.bmm of that many")
    most = max(b.sizes["coalesce"])
    a = torch.randn(most, 64, 64, device=b.dev)
    bb = torch.randn(most, 64, 64, device=b.dev)
    c = torch.empty(most, 64, 64, device=b.dev)
    for batch in b.sizes["coalesce"]:
        if not b.in_budget(s["sweep"], "batch %d" % batch):
            return
        if batch == 1:
            def call():
                torch.mm(a[0], bb[0], out=c[0])
        else:
            def call(batch=batch):
                torch.bmm(a[:batch], bb[:batch], out=c[:batch])
        calls = max(1, b.sizes["small_gemms"] // batch)
        for _ in range(max(1, calls // 10)):
            call()
        b.sync()
        # The headlines: one GEMM a call, and the largest batch.
        repeats = REPEATS if batch in (1, most) else 1
        rates = []
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            for _ in range(calls):
                call()
            b.sync()
            rates.append(calls * batch / ((time.perf_counter_ns() - t0) / 1e9))
        point = {"x": batch, "runs": calls * batch * repeats, "warmup": max(1, calls // 10) * repeats,
                 "value": four(median(rates))}
        if repeats > 1:
            point["repeats"] = [four(r) for r in rates]
        s["points"].append(point)
        b.progress("%-20s %-24s %10d: %12.0f GEMMs/s" % (s["sweep"], s["variant"], batch, median(rates)))


def batched_gemms(b):
    """gemm.batched: torch.bmm over one batch of F32 n x n matrices, one call at a time (each synchronized),
    GEMMs per second: the yardstick of the toolkit's pointer-array batched GEMM (PyTorch's batch is strided)."""
    torch = b.torch
    if b.dev.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    for n, members in b.sizes["batched_gemms"]:
        s = b.record.new_series("gemm.batched", "F32 %dx%d" % (n, n), "rate", "1/s", "GEMMs per call", "",
                                "torch.bmm over one strided batch")
        if not b.in_budget(s["sweep"], "%s x %d" % (s["variant"], members)):
            return
        a = torch.full((members, n, n), 1.0, dtype=torch.float32, device=b.dev)
        bb = torch.full((members, n, n), 0.5, dtype=torch.float32, device=b.dev)
        c = torch.empty((members, n, n), dtype=torch.float32, device=b.dev)

        def once():
            torch.bmm(a, bb, out=c)
            b.sync()
        warmup, runs = b.plan(once)
        each = b.repeated(once, warmup, runs, REPEATS)
        rates = [members * 1e9 / r[len(r) // 2] for r in each]
        point = {"x": members, "runs": runs * REPEATS, "warmup": warmup * REPEATS, "value": four(median(rates)),
                 "repeats": [four(v) for v in rates], "latency": latency(sorted(t for r in each for t in r), False)}
        s["points"].append(point)
        b.progress("%-20s %-24s %10d: %12.0f GEMMs/s median  (%d runs)" % (
            s["sweep"], s["variant"], members, median(rates), runs * REPEATS))
        del a, bb, c


def copies(b):
    torch = b.torch
    largest = max(b.sizes["copies"])
    d = torch.empty(largest, dtype=torch.uint8, device=b.dev)
    kinds = [("pageable", host_bytes(b, largest, pinned=False))]
    if b.dev.type == "cuda":
        kinds.append(("pinned", host_bytes(b, largest, pinned=True)))
    for direction in ("h2d", "d2h"):
        for kind, h in kinds:
            s = b.record.new_series("copy." + direction, kind, "bandwidth", "GB/s", "copy size", "B")
            for n in b.sizes["copies"]:
                if not b.in_budget(s["sweep"], "%s %d B" % (kind, n)):
                    return

                def copy(n=n, h=h, direction=direction, kind=kind):
                    if direction == "h2d":
                        d[:n].copy_(h[:n], non_blocking=(kind == "pinned"))
                    else:
                        h[:n].copy_(d[:n], non_blocking=(kind == "pinned"))
                    b.sync()
                b.bandwidth_point(s, n, copy, repeats=REPEATS if n == largest else 1)
    if b.dev.type != "cuda":
        return
    # What users write to get a tensor back, at the sizes of the toolkit's sweep by host type: .cpu()
    # makes a new pageable tensor each time, the yardstick for its downloads into new arrays.
    s = b.record.new_series("copy.d2h", NEW_TENSOR, "bandwidth", "GB/s", "copy size", "B")
    for n in b.sizes["host_copies"]:
        if not b.in_budget(s["sweep"], "%s %d B" % (NEW_TENSOR, n)):
            return

        def to_cpu(n=n):
            d[:n].cpu()
            b.sync()
        b.bandwidth_point(s, n, to_cpu)


def large_copies(b):
    """copy.large: the one large size (1 GiB), pageable and pinned, whatever the budget left the copies sweep."""
    n = b.sizes["large_copy"]
    d = b.torch.empty(n, dtype=b.torch.uint8, device=b.dev)
    kinds = [("pageable", host_bytes(b, n, pinned=False))]
    if b.dev.type == "cuda":
        kinds.append(("pinned", host_bytes(b, n, pinned=True)))
    for direction in ("h2d", "d2h"):
        for kind, h in kinds:
            s = b.record.new_series("copy.large." + direction, kind, "bandwidth", "GB/s", "copy size", "B")

            def copy(h=h, direction=direction, kind=kind):
                if direction == "h2d":
                    d.copy_(h, non_blocking=(kind == "pinned"))
                else:
                    h.copy_(d, non_blocking=(kind == "pinned"))
                b.sync()
            b.large_bandwidth_point(s, n, copy)
    if b.dev.type != "cuda":
        return
    # What users write to get a tensor back: .cpu() makes a new pageable tensor each time (its pages
    # are faulted in by the copy), the yardstick for the toolkit's download(h) into new memory.
    s = b.record.new_series("copy.large.d2h", NEW_TENSOR, "bandwidth", "GB/s", "copy size", "B")

    def to_cpu():
        d.cpu()
        b.sync()
    b.large_bandwidth_point(s, n, to_cpu)


def fft_rng(b):
    torch = b.torch
    s = b.record.new_series("fft.c2c", "C2C forward, in place", "time", "us", "complex elements", "",
                            "out of place: torch.fft.fft allocates its output")
    for n in b.sizes["fft"]:
        if not b.in_budget(s["sweep"], "n %d" % n):
            break
        z = torch.full((n,), 0.25 + 0.25j, dtype=torch.complex64, device=b.dev)

        def fft(z=z):
            torch.fft.fft(z)
            b.sync()
        b.latency_point(s, n, fft, repeats=REPEATS if n == max(b.sizes["fft"]) else 1)
        del z
    s = b.record.new_series("rng.uniform", "Philox, F32", "time", "us", "numbers", "",
                            "Tensor.uniform_ (Philox on CUDA)")
    for count in b.sizes["rng"]:
        if not b.in_budget(s["sweep"], "count %d" % count):
            return
        r = torch.empty(count, dtype=torch.float32, device=b.dev)

        def uniform(r=r):
            r.uniform_()
            b.sync()
        b.latency_point(s, count, uniform, repeats=REPEATS if count == max(b.sizes["rng"]) else 1)
        del r


def host_bytes(b, n, pinned):
    t = b.torch.zeros(n, dtype=b.torch.uint8)
    return t.pin_memory() if pinned and b.dev.type == "cuda" else t


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=".")
    p.add_argument("--size", choices=["small", "full"], default=None)
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    p.add_argument("--commit", default="unknown")
    p.add_argument("--budget", type=float, default=0)
    a = p.parse_args()
    size = a.size or ("full" if a.device == "cuda" else "small")
    sizes = SIZES[size]
    backend = "cuda" if a.device == "cuda" else "cpu"
    try:
        import torch
    except Exception as e:  # noqa: BLE001 - any reason torch cannot load is a reason to skip
        record = Record(a.commit, backend, size, None)
        record.skip("all", "python3 cannot import torch: %s" % e)
        print("pytorch: skipped, %s; wrote %s" % (e, record.write(a.out)))
        return
    if a.device == "cuda" and not torch.cuda.is_available():
        record = Record(a.commit, backend, size, None)
        record.skip("all", "torch %s sees no CUDA device" % torch.__version__)
        print("pytorch: skipped, no CUDA device; wrote %s" % record.write(a.out))
        return
    dev = torch.device(a.device)
    name = torch.cuda.get_device_name(0) if a.device == "cuda" else platform.processor() or "cpu"
    cc = "%d.%d" % torch.cuda.get_device_capability(0) if a.device == "cuda" else ""
    record = Record(a.commit, backend, size, {"name": name, "computeCapability": cc})
    record.run["host"]["torch"] = torch.__version__
    b = Bench(torch, dev, sizes, a.budget or sizes["budget"], record)
    b.progress("torch %s on %s, sizes %s" % (torch.__version__, name, size))
    for section in (hops, payload, gemm, small_gemms, batched_gemms, copies, large_copies, fft_rng):
        try:
            section(b)
        except Exception as e:  # noqa: BLE001 - one section's failure is noted and the run goes on
            record.skip(section.__name__, "failed: %r" % e)
            b.progress("%s failed: %r" % (section.__name__, e))
    path = record.write(a.out)
    b.progress("wrote %s" % path)


if __name__ == "__main__":
    main()
