package com.vertxcuda;

import io.vertx.codegen.annotations.VertxGen;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;

/**
 * Records a sequence of requests for one device, to be replayed as one request
 * ({@link DeviceClient#record()}). Nothing is sent until {@link #build()}: the device then checks
 * every step (a bad one fails the whole recording with BAD_REQUEST naming the step, and nothing is
 * recorded), prepares what the steps need and, on cuda, captures them as one CUDA graph.
 *
 * <p>What can be recorded: fills and device-to-device copies, uploads from and downloads into
 * transfer buffers (below), BLAS requests
 * ({@code BlasRequest}) other than the reductions that answer a scalar (DOT, DOTC, NRM2,
 * ASUM, IAMAX, IAMIN; a GEMM_BATCHED_EX runs member by member there), kernel launches and built-in kernels
 * ({@code KernelRequest} LAUNCH, FILL, SCALE, ADD, CONVERT, MULTIPLY), FFT transforms
 * ({@code FftRequest}, every type and direction) and RAND requests ({@code RandRequest}, every
 * generator and distribution). An FFT step gets a plan of its own, made when the pipeline is built
 * and released with it. A RAND step writes its request's numbers (those of its seed, offset and
 * dimensions) on every replay: the same numbers each time, as sending the request again writes
 * them; they are generated once, at build, into device memory the pipeline holds (counted against
 * the memory limit) and copied into the output by each replay. What cannot be recorded:
 * allocations, frees, uploads from and downloads into any other host memory (a replay carries no
 * data of its own), module loads and unloads, BLAS batches and scalar results. See
 * docs/architecture.md, "Recorded pipelines".
 *
 * <p>Transfer buffers ({@link #upload}, {@link #download}): a step names host memory the device lent
 * ({@code DeviceVerticle.allocateTransferBuffer}: page-locked on cuda, so the CUDA graph holds a
 * copy from or into it; a slice of the shared region in process isolation, which the device host
 * addresses where it lies), not bytes; every replay copies the buffer's bytes as they are when the
 * step runs, in order with the other steps, and the replay answers once the last copy into a
 * buffer has landed. Write a buffer a pipeline uploads from, and read one it downloads into, only
 * while no replay of it is in flight. The build refuses, with BAD_REQUEST naming the step, a buffer
 * that is not a transfer buffer of this device as {@code allocateTransferBuffer} returned it (a
 * slice, heap memory, another pool's memory), one released already, one whose length
 * ({@code Buffer.length()}) is not the handle's byte length, and any transfer buffer for a device
 * on another node (its memory is not in this JVM).
 * Lifetime: the pipeline holds each of its transfer buffers until it is released (its release is
 * answered once its last use is done and what it held has gone back) or lost with its context.
 * Releasing a transfer buffer earlier ({@code releaseTransferBuffer}) succeeds but defers its
 * return: the memory goes back to its pool, and may be lent again, only once every pipeline that
 * holds it is released; meanwhile no new step may name it.
 *
 * <p>Not thread-safe: record from one thread. Once {@link #build()} was called a recorder takes no more
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
   * Records an upload from {@code transferBuffer}, a transfer buffer of this device, to
   * {@code target}: each replay copies the buffer's bytes as they are then. Its length must be the
   * target's byte length.
   */
  PipelineRecorder upload(Buffer transferBuffer, BufferHandle target);

  /**
   * Records a download of {@code source} into {@code transferBuffer}, a transfer buffer of this
   * device: each replay overwrites the buffer's bytes with the source's. Its length must be the
   * source's byte length (append that many bytes to a fresh transfer buffer first).
   */
  PipelineRecorder download(BufferHandle source, Buffer transferBuffer);

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
