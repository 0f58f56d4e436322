package com.vertxcuda;

import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;

/**
 * Records a sequence of requests for one device, to be replayed as one request
 * ({@link DeviceClient#record()}). Nothing is sent until {@link #build()}: the device then checks
 * every step (a bad one fails the whole recording with BAD_REQUEST naming the step, and nothing is
 * recorded), prepares what the steps need and, on cuda, captures them as one CUDA graph.
 *
 * <p>What can be recorded: fills and device-to-device copies, BLAS requests
 * ({@code BlasRequest}) other than the reductions that answer a scalar (DOT, DOTC, NRM2,
 * ASUM, IAMAX, IAMIN; a GEMM_BATCHED_EX runs member by member there), and kernel launches and built-in kernels
 * ({@code KernelRequest} LAUNCH, FILL, SCALE, ADD, CONVERT). What cannot:
 * allocations, frees, uploads and downloads (host memory is read or written when the request is
 * served, and a replay has no request data of its own), module loads and unloads, FFT and RAND
 * requests, BLAS batches and scalar results. See docs/architecture.md, "Recorded pipelines".
 * Not thread-safe: record from one thread. Once {@link #build()} was called a recorder takes no more
 * steps: each of the recording methods then throws {@link IllegalStateException} (a bad step is
 * otherwise never thrown, but fails the build).
 */
@VertxGen
public interface PipelineRecorder {

  /** Records a fill of {@code target} with {@code value} ({@link DeviceClient#fill}'s rules). */
  PipelineRecorder fill(BufferHandle target, double value);

  /** Records an exact integer fill ({@link DeviceClient#fillInteger}'s rules). */
  PipelineRecorder fillInteger(BufferHandle target, long value);

  /** Records a device-to-device copy. */
  PipelineRecorder copy(BufferHandle source, BufferHandle target);

  /**
   * Records one library request: {@code request} is the message body the library's client sends
   * (a {@code BlasRequest} for {@link Library#BLAS}, a {@code KernelRequest} for
   * {@link Library#KERNEL}).
   */
  PipelineRecorder step(Library library, Object request);

  /** The steps recorded so far. */
  int size();

  /**
   * Sends the recording; the handle comes back once the device has checked, prepared and (on cuda)
   * captured every step. Fails with BAD_REQUEST naming the first bad step; nothing is recorded then.
   */
  Future<PipelineHandle> build();
}
