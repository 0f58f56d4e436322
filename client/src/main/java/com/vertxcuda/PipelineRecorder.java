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
 * ASUM, IAMAX, IAMIN; a GEMM_BATCHED_EX runs member by member there), kernel launches and built-in kernels
 * ({@code KernelRequest} LAUNCH, FILL, SCALE, ADD, CONVERT, MULTIPLY), FFT transforms
 * ({@code FftRequest}, every type and direction) and RAND requests ({@code RandRequest}, every
 * generator and distribution). An FFT step gets a plan of its own, made when the pipeline is built
 * and released with it. A RAND step writes its request's numbers (those of its seed, offset and
 * dimensions) on every replay: the same numbers each time, as sending the request again writes
 * them; they are generated once, at build, into device memory the pipeline holds (counted against
 * the memory limit) and copied into the output by each replay. What cannot be recorded:
 * allocations, frees, uploads and downloads (host memory is read or written when the request is
 * served, and a replay carries no data of its own), module loads and unloads, BLAS batches and
 * scalar results. See docs/architecture.md, "Recorded pipelines".
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
   * (a {@code BlasRequest} for {@link Library#BLAS}, an {@code FftRequest} for {@link Library#FFT},
   * a {@code RandRequest} for {@link Library#RAND}, a {@code KernelRequest} for {@link Library#KERNEL}).
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
