package com.vertxcuda.testing;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasBatch;
import com.vertxcuda.blas.BlasBatchReply;
import com.vertxcuda.blas.BlasOp;
import com.vertxcuda.blas.BlasOutcome;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelArg;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.kernel.ModuleHandle;
import com.vertxcuda.rand.Distribution;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** Populated samples of the library and kernel message types (the wire fuzz of every module). */
public final class LibrarySamples {

  private LibrarySamples() {
  }

  public static List<Object> all() {
    BufferHandle h = BufferHandle.issue("node", 1, 3, 9, DType.F32, 100).view(4, 50);
    List<Object> all = new ArrayList<>();
    all.add(new BlasRequest(BlasOp.GEMM).setTransA(Transpose.T).setM(3).setN(4).setK(5).setAlpha(2.5).setBeta(-1)
      .setA(h).setLda(7).setB(h).setLdb(8).setC(h).setLdc(9).setStrideA(11).setBatchCount(3));
    all.add(new BlasReply().setOutput(h).setValue(3.5).setIndex(7).setBatchSize(4));
    all.add(new BlasBatch(Arrays.asList(new BlasRequest(BlasOp.DOT).setN(5).setX(h).setY(h), null,
      new BlasRequest(BlasOp.AXPY).setN(2).setAlpha(1).setX(h).setY(h))));
    all.add(new BlasBatchReply(List.of(BlasOutcome.of(new BlasReply().setOutput(h)),
      BlasOutcome.of(new CudaException(FailureCode.BAD_REQUEST, "ldc must be >= 2")))));
    all.add(new FftRequest().setType(FftType.C2C).setN(List.of(4, 8)).setBatch(3).setInembed(List.of(4, 10))
      .setIstride(2).setIdist(100).setOstride(1).setOdist(40).setInput(h).setOutput(h));
    all.add(new FftReply(h, true));
    all.add(new RandRequest().setGenerator(RngType.PHILOX4_32_10).setSeed(-5).setOffset(77).setDimensions(3)
      .setDistribution(Distribution.NORMAL).setMean(1).setStddev(2).setOutput(h));
    all.add(new KernelRequest(KernelOp.LAUNCH).setModule(ModuleHandle.issue("n", 0, 3, 4)).setFunction("saxpy")
      .setGrid(List.of(4, 1, 1)).setBlock(Arrays.asList(128, null, 1)).setSharedMemoryBytes(64)
      .setArgs(Arrays.asList(KernelArg.in(h), null, KernelArg.scalar(DType.F32, 2.5), KernelArg.integer(DType.U64, 7)))
      .setCompileOptions(List.of("-DN=4")).setSource("__global__ void k() {}").setImage(Buffer.buffer("ptx")));
    all.add(new KernelReply().setModule(ModuleHandle.issue("n", 0, 3, 4)).setOutput(h).setLog("ok").setCached(true));
    return all;
  }
}
