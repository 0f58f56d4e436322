package com.vertxcuda.bench;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.JCudaDriver;
import jcuda.jcublas.JCublas2;
import jcuda.jcublas.cublasHandle;
import jcuda.jcublas.cublasMath;
import jcuda.jcublas.cublasOperation;
import jcuda.jcufft.JCufft;
import jcuda.jcufft.cufftHandle;
import jcuda.jcufft.cufftType;
import jcuda.jcurand.JCurand;
import jcuda.jcurand.curandGenerator;
import jcuda.jcurand.curandRngType;
import jcuda.runtime.cudaStream_t;

import java.util.function.LongFunction;

/**
 * One op as a raw library call on a given stream, with what it needs made once (a cuFFT plan, a
 * cuRAND generator, a cuBLAS handle in TF32 mode) and released on close; its device memory comes
 * from {@code alloc} and is the caller's to free. Statuses are checked (JCuda's exceptions may be off).
 */
interface NativeCall extends AutoCloseable {

  void launch();

  @Override
  void close();

  static NativeCall of(LibraryHopsSection.Op op, long x, cudaStream_t stream, LongFunction<CUdeviceptr> alloc) {
    return of(op, x, stream, alloc, false);
  }

  /**
   * With {@code formerly}, the call in a costlier form the toolkit does not use (a diagnostic of what
   * that form costs): the FFT planned in cuFFT's advanced layout (embeds given, describing the same
   * contiguous data), the GEMM with the math mode set to TF32 before each call and back to the default
   * after it.
   */
  static NativeCall of(LibraryHopsSection.Op op, long x, cudaStream_t stream, LongFunction<CUdeviceptr> alloc,
                       boolean formerly) {
    switch (op) {
      case FFT: {
        CUdeviceptr signal = alloc.apply(8 * x);
        check(JCudaDriver.cuMemsetD32(signal, Float.floatToIntBits(0.25f), 2 * x), "cuMemsetD32");
        cufftHandle plan = new cufftHandle();
        if (formerly) {
          check(JCufft.cufftCreate(plan), "cufftCreate");
          check(JCufft.cufftMakePlanMany64(plan, 1, new long[] {x}, new long[] {x}, 1, x, new long[] {x}, 1, x,
            cufftType.CUFFT_C2C, 1, new long[1]), "cufftMakePlanMany64");
        } else {
          check(JCufft.cufftPlanMany(plan, 1, new int[] {(int) x}, null, 1, 0, null, 1, 0, cufftType.CUFFT_C2C, 1),
            "cufftPlanMany");
        }
        check(JCufft.cufftSetStream(plan, stream), "cufftSetStream");
        settled();
        return new NativeCall() {
          @Override
          public void launch() {
            check(JCufft.cufftExecC2C(plan, signal, signal, JCufft.CUFFT_FORWARD), "cufftExecC2C");
          }

          @Override
          public void close() {
            JCufft.cufftDestroy(plan);
          }
        };
      }
      case RNG: {
        CUdeviceptr numbers = alloc.apply(4 * x);
        curandGenerator gen = new curandGenerator();
        check(JCurand.curandCreateGenerator(gen, curandRngType.CURAND_RNG_PSEUDO_PHILOX4_32_10),
          "curandCreateGenerator");
        check(JCurand.curandSetStream(gen, stream), "curandSetStream");
        check(JCurand.curandSetPseudoRandomGeneratorSeed(gen, LibraryHopsSection.SEED), "curandSetPseudoRandomGeneratorSeed");
        return new NativeCall() {
          @Override
          public void launch() {
            check(JCurand.curandGenerateUniform(gen, numbers, x), "curandGenerateUniform");
          }

          @Override
          public void close() {
            JCurand.curandDestroyGenerator(gen);
          }
        };
      }
      default: {
        int n = (int) x;
        CUdeviceptr a = alloc.apply(4 * x * x);
        CUdeviceptr b = alloc.apply(4 * x * x);
        CUdeviceptr c = alloc.apply(4 * x * x);
        check(JCudaDriver.cuMemsetD32(a, Float.floatToIntBits(1f), x * x), "cuMemsetD32");
        check(JCudaDriver.cuMemsetD32(b, Float.floatToIntBits(0.5f), x * x), "cuMemsetD32");
        cublasHandle blas = new cublasHandle();
        check(JCublas2.cublasCreate(blas), "cublasCreate");
        check(JCublas2.cublasSetStream(blas, stream), "cublasSetStream");
        check(JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
        settled();
        Pointer one = Pointer.to(new float[] {1f});
        Pointer zero = Pointer.to(new float[] {0f});
        int op0 = cublasOperation.CUBLAS_OP_N;
        return new NativeCall() {
          @Override
          public void launch() {
            if (formerly) {
              check(JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_TF32_TENSOR_OP_MATH), "cublasSetMathMode");
            }
            check(JCublas2.cublasSgemm(blas, op0, op0, n, n, n, one, a, n, b, n, zero, c, n), "cublasSgemm");
            if (formerly) {
              check(JCublas2.cublasSetMathMode(blas, cublasMath.CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
            }
          }

          @Override
          public void close() {
            JCublas2.cublasDestroy(blas);
          }
        };
      }
    }
  }

  /** The inputs' fills (on the legacy stream, which a non-blocking stream does not wait for) done before the first call. */
  private static void settled() {
    check(JCudaDriver.cuCtxSynchronize(), "cuCtxSynchronize");
  }

  private static void check(int status, String call) {
    if (status != 0) {
      throw new IllegalStateException(call + " failed: status " + status);
    }
  }
}
