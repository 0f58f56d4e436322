#!/usr/bin/env python3
"""PyTorch on the same GPU, the yardstick users will apply: the same small and large operations the
toolkit's benchmarks time, in one process. Prints a table and writes pytorch-bench.json.

usage: python3 pytorch_bench.py <output dir>   (skips with a note when torch or a GPU is missing)
"""
import json
import os
import sys
import time


def pct(sorted_us, q):
    return sorted_us[min(len(sorted_us) - 1, int(q * len(sorted_us)))]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    result = {}
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print("pytorch: not available (%s); skipped" % e)
        json.dump({"skipped": str(e)}, open(os.path.join(out, "pytorch-bench.json"), "w"))
        return
    if not torch.cuda.is_available():
        print("pytorch: no CUDA device; skipped")
        json.dump({"skipped": "no CUDA device"}, open(os.path.join(out, "pytorch-bench.json"), "w"))
        return
    dev = torch.device("cuda")
    result["torch"] = torch.__version__
    result["device"] = torch.cuda.get_device_name(0)
    sync = torch.cuda.synchronize
    lines = ["pytorch %s on %s" % (torch.__version__, result["device"])]

    # Small request round trip: fill 1 KiB, wait until the GPU is done.
    x = torch.empty(256, dtype=torch.float32, device=dev)
    for _ in range(2000):
        x.fill_(1.0)
        sync()
    samples = []
    for i in range(20000):
        t0 = time.perf_counter_ns()
        x.fill_(float(i))
        sync()
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    samples.sort()
    result["fill_1KiB_sync_us"] = {"p50": pct(samples, .5), "p99": pct(samples, .99), "p999": pct(samples, .999),
                                   "n": len(samples)}
    lines.append("fill_ 1 KiB + synchronize: p50 %.1f us, p99 %.1f us, p99.9 %.1f us (n=%d)" % (
        pct(samples, .5), pct(samples, .99), pct(samples, .999), len(samples)))

    # 64x64 SGEMMs one call each, in a loop, then one synchronize (the rate users compare with).
    a = torch.randn(64, 64, device=dev)
    b = torch.randn(64, 64, device=dev)
    c = torch.empty(64, 64, device=dev)
    for _ in range(2000):
        torch.mm(a, b, out=c)
    sync()
    n = 50000
    t0 = time.perf_counter()
    for _ in range(n):
        torch.mm(a, b, out=c)
    sync()
    rate = n / (time.perf_counter() - t0)
    result["mm64_loop_per_s"] = rate
    lines.append("mm 64x64 loop: %.0f GEMMs/s" % rate)
    # The same with a synchronize after each (a request that waits for its answer).
    samples = []
    for _ in range(5000):
        t0 = time.perf_counter_ns()
        torch.mm(a, b, out=c)
        sync()
        samples.append((time.perf_counter_ns() - t0) / 1000.0)
    samples.sort()
    result["mm64_sync_us"] = {"p50": pct(samples, .5), "p99": pct(samples, .99), "n": len(samples)}
    lines.append("mm 64x64 + synchronize: p50 %.1f us, p99 %.1f us" % (pct(samples, .5), pct(samples, .99)))

    # Batched small GEMMs.
    for batch in (64, 1024, 20000):
        ab = torch.randn(batch, 64, 64, device=dev)
        bb = torch.randn(batch, 64, 64, device=dev)
        cb = torch.empty(batch, 64, 64, device=dev)
        for _ in range(20):
            torch.bmm(ab, bb, out=cb)
        sync()
        reps = max(20, 200000 // batch)
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.bmm(ab, bb, out=cb)
        sync()
        gps = reps * batch / (time.perf_counter() - t0)
        result["bmm64_batch%d_gemms_per_s" % batch] = gps
        lines.append("bmm 64x64, batch %d: %.0f GEMMs/s" % (batch, gps))
        del ab, bb, cb

    # Large SGEMM, FP32 and TF32.
    m = 8192
    A = torch.randn(m, m, device=dev)
    B = torch.randn(m, m, device=dev)
    C = torch.empty(m, m, device=dev)
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for _ in range(3):
            torch.mm(A, B, out=C)
        sync()
        reps = 10 if not tf32 else 40
        t0 = time.perf_counter()
        for _ in range(reps):
            torch.mm(A, B, out=C)
        sync()
        tflops = 2.0 * m ** 3 * reps / (time.perf_counter() - t0) / 1e12
        key = "sgemm8192_%s_tflops" % ("tf32" if tf32 else "fp32")
        result[key] = tflops
        lines.append("SGEMM 8192 %s: %.1f TFLOP/s" % ("TF32" if tf32 else "FP32", tflops))
    torch.backends.cuda.matmul.allow_tf32 = False
    del A, B, C

    # FFT C2C 2^20 x 64 (complex64).
    z = torch.randn(64, 1 << 20, dtype=torch.complex64, device=dev)
    for _ in range(5):
        torch.fft.fft(z)
    sync()
    reps = 50
    t0 = time.perf_counter()
    for _ in range(reps):
        torch.fft.fft(z)
    sync()
    ms = (time.perf_counter() - t0) / reps * 1e3
    result["fft_c2c_2p20x64_ms"] = ms
    lines.append("FFT C2C 2^20 x 64: %.3f ms" % ms)
    del z

    # Uniform RNG 2^28 floats.
    r = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    for _ in range(3):
        r.uniform_()
    sync()
    reps = 20
    t0 = time.perf_counter()
    for _ in range(reps):
        r.uniform_()
    sync()
    ms = (time.perf_counter() - t0) / reps * 1e3
    result["uniform_2p28_ms"] = ms
    lines.append("uniform RNG 2^28 floats: %.3f ms" % ms)
    del r

    # 256 MiB copies, pinned host memory, one at a time.
    nbytes = 256 << 20
    h = torch.empty(nbytes // 4, dtype=torch.float32).pin_memory()
    d = torch.empty(nbytes // 4, dtype=torch.float32, device=dev)
    for name, fn in (("h2d", lambda: d.copy_(h, non_blocking=True)), ("d2h", lambda: h.copy_(d, non_blocking=True))):
        for _ in range(3):
            fn()
        sync()
        reps = 20
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
            sync()
        gbs = nbytes * reps / (time.perf_counter() - t0) / 1e9
        result["copy256MiB_pinned_%s_GBps" % name] = gbs
        lines.append("256 MiB pinned %s, one at a time: %.1f GB/s" % (name.upper(), gbs))

    with open(os.path.join(out, "pytorch-bench.json"), "w") as f:
        json.dump(result, f, indent=2)
    text = "\n".join(lines)
    with open(os.path.join(out, "pytorch-bench.txt"), "w") as f:
        f.write(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
