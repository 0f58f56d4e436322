package com.vertxcuda.impl;

import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** A {@link DeviceScope} over one client: the buffers it recorded, and the allocations on their way. */
public final class DeviceScopeImpl implements DeviceScope {

  /**
   * Free failures that mean the buffer is gone already: freed, from an earlier generation, or its
   * context lost (the memory went with it).
   */
  private static final Set<FailureCode> GONE = EnumSet.of(FailureCode.NOT_FOUND, FailureCode.STALE_HANDLE,
    FailureCode.CONTEXT_LOST);

  private final DeviceClient client;
  private final Vertx vertx;
  /** Whole-buffer handles, in the order they were recorded. */
  private final Set<BufferHandle> buffers = new LinkedHashSet<>();
  /** Allocations sent and not yet recorded (or freed, if they arrived after the close). */
  private final Set<Future<Void>> arriving = new HashSet<>();
  private Future<Void> closed;

  public DeviceScopeImpl(DeviceClient client, Vertx vertx) {
    this.client = client;
    this.vertx = vertx;
  }

  @Override
  public Future<BufferHandle> alloc(DType dtype, long count) {
    Promise<BufferHandle> result = Promise.promise();
    synchronized (this) {
      if (closed != null) {
        return RequestSender.failLater(vertx.getOrCreateContext(), new CudaException(FailureCode.BAD_REQUEST,
          "the scope is closed"));
      }
      Future<Void> settled = client.alloc(dtype, count).transform(ar -> arrived(ar.result(), ar.cause(), result));
      if (!settled.isComplete()) {
        arriving.add(settled);
        settled.onComplete(x -> {
          synchronized (this) {
            arriving.remove(settled);
          }
        });
      }
    }
    return result.future();
  }

  // An allocation came back: recorded, or freed at once when the scope closed meanwhile.
  private Future<Void> arrived(BufferHandle h, Throwable failure, Promise<BufferHandle> result) {
    if (failure != null) {
      result.fail(failure);
      return Future.succeededFuture();
    }
    boolean recorded;
    synchronized (this) {
      recorded = closed == null;
      if (recorded) {
        buffers.add(h.whole());
      }
    }
    if (recorded) {
      result.complete(h);
      return Future.succeededFuture();
    }
    return free(h).transform(x -> {
      result.fail(new CudaException(FailureCode.BAD_REQUEST,
        "the scope closed while the buffer was being allocated; it has been freed"));
      return Future.<Void>succeededFuture();
    });
  }

  @Override
  public synchronized BufferHandle attach(BufferHandle buffer) {
    if (buffer == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "handle is null");
    }
    if (closed != null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the scope is closed");
    }
    buffers.add(buffer.whole());
    return buffer;
  }

  @Override
  public synchronized BufferHandle detach(BufferHandle buffer) {
    if (buffer != null) {
      buffers.remove(buffer.whole());
    }
    return buffer;
  }

  @Override
  public synchronized int size() {
    return buffers.size() + arriving.size();
  }

  @Override
  public synchronized Future<Void> close() {
    if (closed == null) {
      List<Future<Void>> waiting = new ArrayList<>(arriving);
      // Completed on the closing caller's context in a task of its own, never on its stack (an
      // empty scope has nothing to wait for).
      Context caller = vertx.getOrCreateContext();
      Promise<Void> done = Promise.promise();
      Future.join(waiting).transform(x -> freeAll()).onComplete(ar -> caller.runOnContext(v -> done.handle(ar)));
      closed = done.future();
    }
    return closed;
  }

  private Future<Void> freeAll() {
    List<BufferHandle> taken;
    synchronized (this) {
      taken = new ArrayList<>(buffers);
      buffers.clear();
    }
    List<Future<Void>> frees = new ArrayList<>(taken.size());
    for (BufferHandle h : taken) {
      frees.add(free(h));
    }
    return Future.join(frees).mapEmpty();
  }

  // A free whose failure only says the buffer is gone already counts as done.
  private Future<Void> free(BufferHandle h) {
    return client.free(h).recover(t -> GONE.contains(Failures.codeOf(t))
      ? Future.succeededFuture() : Future.failedFuture(t));
  }
}
