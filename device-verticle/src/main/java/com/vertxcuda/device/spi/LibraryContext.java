package com.vertxcuda.device.spi;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * What a library verticle sees of its context, and all it sees: the device, handle resolution,
 * stream ordering, completion and the failure mapping. {@link #resolve}, {@link #enqueue} and
 * {@link #afterUses} are called on the context's submission thread (from {@link RequestHandler}
 * methods); {@link #failure}, {@link #isPoisoned}, {@link #lostFailure}, {@link #whenDone},
 * {@link #replyWhenDone}, {@link #register}, {@link #onClose}, {@link #onSubmissionThread} and the
 * identity getters are thread-safe (completion threads call them).
 */
public interface LibraryContext {

  /** Enqueues work on a stream. */
  @FunctionalInterface
  interface Work {
    void enqueue() throws BackendException;
  }

  Vertx vertx();

  String node();

  int deviceIndex();

  long generation();

  /** "cuda" or "host". */
  String backend();

  DeviceContext device();

  /** This library's settings from {@code DeviceOptions.libraryOptions} (empty when unset). */
  JsonObject libraryOptions(Library library);

  /**
   * The one place a handle is checked: missing, foreign, stale, unknown, forged or out of range
   * each fail with their own code; {@code dtypes}, when given, are the element types accepted.
   */
  DeviceBuffer resolve(BufferHandle handle, String field, DType... dtypes);

  /**
   * Orders {@code work} on {@code stream} after earlier uses of what it reads and writes, queues
   * it and records an event after it (the caller's: release it, or hand it to {@link #whenDone}).
   */
  GpuEvent enqueue(GpuStream stream, List<? extends DeviceBuffer> reads, List<? extends DeviceBuffer> writes,
                   Work work) throws BackendException;

  /**
   * Counts {@code bytes} of device memory that {@code library} holds outside any buffer (a cuFFT
   * plan and its work area, a loaded module) against {@code DeviceOptions.memoryLimit}, together
   * with the buffers; they show in {@code DeviceStats.libraryBytes}. Past the limit it throws
   * OUT_OF_MEMORY naming the limit and reserves nothing. Give them back with
   * {@link #releaseLibraryBytes} once the memory is released. Thread-safe.
   */
  void reserveLibraryBytes(Library library, long bytes);

  /** Gives back what {@link #reserveLibraryBytes} reserved. Thread-safe. */
  void releaseLibraryBytes(Library library, long bytes);

  /** Runs {@code then} (null, or the failure) once {@code event} is reached, then releases it. */
  void whenDone(GpuEvent event, Consumer<Throwable> then);

  /**
   * Answers {@code request} with {@code reply.get()} once {@code event} is reached and releases
   * the event; a failure of the work, or a supplier that throws, answers with that failure.
   */
  <T> void replyWhenDone(Request request, GpuEvent event, Supplier<T> reply);

  /** Runs {@code action} on the submission thread once every one of {@code uses} is reached. */
  void afterUses(List<GpuEvent> uses, Runnable action);

  /** The typed failure {@code t} stands for; a sticky backend error poisons the context first. */
  CudaException failure(Throwable t);

  boolean isPoisoned();

  /** The failure every request gets once the context is poisoned. */
  CudaException lostFailure();

  /**
   * Routes {@code library}'s requests to {@code handler}, from now on: each to the descriptor of its
   * body's type among {@link RequestHandler#types()}.
   */
  void register(Library library, RequestHandler handler);

  /**
   * Answers every request for {@code library} UNSUPPORTED naming {@code reason}, from now on (its
   * native library could not open); recordings of its requests fail the same way.
   */
  void unavailable(Library library, String reason);

  /**
   * Runs {@code closer} on the submission thread when the context closes (in reverse order of
   * registration), after every request has been answered; {@link #isPoisoned} says whether it may
   * still call into the device.
   */
  void onClose(Runnable closer);

  /**
   * Calls {@code reclaim} on the submission thread with the node id of each node that leaves the
   * cluster: the library frees what that node loaded ({@link Request#owner()} of the request that
   * loaded it), once the uses already queued are done.
   */
  void onOwnerGone(Consumer<String> reclaim);

  /** Runs {@code task} on the submission thread (a library opens its engine there). */
  <T> Future<T> onSubmissionThread(Callable<T> task);
}
