package com.vertxcuda.bench;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.bench.result.Series;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasRequest;
import io.vertx.core.Future;
import jcuda.Pointer;
import jcuda.cudaDataType;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasGemmAlgo;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;

import java.util.ArrayList;
import java.util.List;

import static com.vertxcuda.bench.Await.await;

/**
 * Sweeps {@code gemm.latency} and {@code gemm.pipelined}: square GEMMs of 64 to 8192 in the three
 * precisions the BLAS client offers — FP32 (GEMM, F32), TF32 (the same with {@code tf32}) and F16
 * (GEMM_EX: F16 inputs, F32 output and compute) — one at a time, each answered before the next
 * (its latency distribution), and as a burst all in flight together (time per GEMM). Raw JCuda makes
 * the same cuBLAS calls the engine makes, with a synchronize after each, or one after the burst.
 * The report finds, per precision, the size from which the toolkit costs under 5 % more than raw.
 */
final class GemmSection implements Section {

  /** The precisions, as the series' variants name them. */
  enum Precision { FP32, TF32, F16 }

  /** Most GEMMs of a burst in flight at once. */
  private static final int MOST_IN_FLIGHT = 1024;

  @Override
  public String name() {
    return "gemm";
  }

  @Override
  public void raw(Bench bench, RawJCuda raw) throws Exception {
    cublasHandle blas = raw.blas();
    Pointer one = Pointer.to(new float[] {1f});
    Pointer zero = Pointer.to(new float[] {0f});
    for (Precision p : Precision.values()) {
      Series latency = series(bench, "gemm.latency", "raw-jcuda", p);
      Series pipelined = series(bench, "gemm.pipelined", "raw-jcuda", p);
      JCublas2.cublasSetMathMode(blas, p == Precision.TF32 ? cublasMath.CUBLAS_TF32_TENSOR_OP_MATH
        : cublasMath.CUBLAS_DEFAULT_MATH);
      for (int n : bench.sizes.gemmSizes()) {
        if (!bench.inBudget(latency.sweep(), latency.path(), p + " " + n)) {
          break;
        }
        long elements = (long) n * n;
        int inBytes = p == Precision.F16 ? 2 : 4;
        CUdeviceptr a = raw.alloc(elements * inBytes);
        CUdeviceptr b = raw.alloc(elements * inBytes);
        CUdeviceptr c = raw.alloc(elements * 4);
        if (p == Precision.F16) {
          JCudaDriver.cuMemsetD16(a, (short) 0x3C00, elements); // 1.0
          JCudaDriver.cuMemsetD16(b, (short) 0x3800, elements); // 0.5
        } else {
          JCudaDriver.cuMemsetD32(a, Float.floatToIntBits(1f), elements);
          JCudaDriver.cuMemsetD32(b, Float.floatToIntBits(0.5f), elements);
        }
        Runnable call = p == Precision.F16
          ? () -> JCublas2.cublasGemmEx(blas, cublasOperation.CUBLAS_OP_N, cublasOperation.CUBLAS_OP_N, n, n, n, one,
            a, cudaDataType.CUDA_R_16F, n, b, cudaDataType.CUDA_R_16F, n, zero, c, cudaDataType.CUDA_R_32F, n,
            cudaDataType.CUDA_R_32F, cublasGemmAlgo.CUBLAS_GEMM_DEFAULT)
          : () -> JCublas2.cublasSgemm(blas, cublasOperation.CUBLAS_OP_N, cublasOperation.CUBLAS_OP_N, n, n, n, one,
            a, n, b, n, zero, c, n);
        Histograms.Op once = i -> {
          call.run();
          raw.sync();
        };
        Plan plan = bench.plan(Histograms.loop(new Plan(0, 3), once).getMinValue());
        bench.latency(latency, n, p + " " + n, plan, Bench.measure(n == largest(bench), () -> Histograms.loop(plan, once)),
          false);
        int burst = Math.min(MOST_IN_FLIGHT, plan.runs());
        long t0 = System.nanoTime();
        for (int i = 0; i < burst; i++) {
          call.run();
        }
        raw.sync();
        bench.perRequest(pipelined, n, p + " " + n, burst, plan.total(), System.nanoTime() - t0);
        raw.free(a);
        raw.free(b);
        raw.free(c);
      }
    }
    JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_DEFAULT_MATH);
  }

  @Override
  public void toolkit(Bench bench, DeployedDevice d) throws Exception {
    for (Precision p : Precision.values()) {
      Series latency = series(bench, "gemm.latency", d.path, p);
      Series pipelined = series(bench, "gemm.pipelined", d.path, p);
      for (int n : bench.sizes.gemmSizes()) {
        if (!bench.inBudget(latency.sweep(), latency.path(), p + " " + n)) {
          break;
        }
        long elements = (long) n * n;
        DType in = p == Precision.F16 ? DType.F16 : DType.F32;
        BufferHandle a = await(d.device.alloc(in, elements));
        BufferHandle b = await(d.device.alloc(in, elements));
        BufferHandle c = await(d.device.alloc(DType.F32, elements));
        await(d.device.fill(a, 1.0));
        await(d.device.fill(b, 0.5));
        BlasRequest r = new BlasRequest(p == Precision.F16 ? BlasOp.GEMM_EX : BlasOp.GEMM).setM(n).setN(n).setK(n)
          .setA(a).setLda(n).setB(b).setLdb(n).setC(c).setLdc(n).setTf32(p == Precision.TF32);
        Plan plan = bench.plan(Histograms.sequential(d.vertx, new Plan(0, 3), i -> d.blas.execute(r)).getMinValue());
        bench.latency(latency, n, p + " " + n, plan, Bench.measure(n == largest(bench),
          () -> Histograms.sequential(d.vertx, plan, i -> d.blas.execute(r))), false);
        int burst = Math.min(MOST_IN_FLIGHT, plan.runs());
        List<Future<?>> all = new ArrayList<>(burst);
        long t0 = System.nanoTime();
        for (int i = 0; i < burst; i++) {
          all.add(d.blas.execute(r));
        }
        await(Future.all(all));
        bench.perRequest(pipelined, n, p + " " + n, burst, plan.total(), System.nanoTime() - t0);
        for (BufferHandle h : List.of(a, b, c)) {
          await(d.device.free(h));
        }
      }
    }
  }

  /** The headline size (its one-at-a-time latency measured {@link Bench#REPEATS} times): the largest. */
  private static int largest(Bench bench) {
    return bench.sizes.gemmSizes().stream().mapToInt(Integer::intValue).max().orElse(0);
  }

  private static Series series(Bench bench, String sweep, String path, Precision p) {
    return bench.record.series(sweep, path, p.name(), "time", "us", "m = n = k", "");
  }
}
