package com.vertxcuda.samples.web;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.DeviceEvent;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import io.vertx.core.eventbus.MessageConsumer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One server instance's device buffers, kept between requests: each holds A, B and C of one n
 * (3 n² floats), so a request costs an upload, a GEMM and a download, and no allocation or free
 * (cuMemFree waits for the whole device). At most {@code limit} exist: a request for an n none idle
 * has frees an idle one of another n first. With {@code keep} false each buffer is freed when its
 * request is done (allocated and freed per request, to compare). Used on the instance's event loop
 * only.
 */
final class OperandSlots {

  private static final int FREE_ATTEMPTS = 20;

  private final Vertx vertx;
  private final DeviceClient device;
  private final int limit;
  private final boolean keep;
  private final Map<Integer, ArrayDeque<BufferHandle>> idle = new HashMap<>();
  private int idleCount;
  private int busy;
  private boolean closed;

  /** The device's events, while slots are kept: a rebuilt or lost context took every kept buffer with it. */
  private final MessageConsumer<DeviceEvent> events;

  OperandSlots(Vertx vertx, DeviceClient device, int limit, boolean keep) {
    this.vertx = vertx;
    this.device = device;
    this.limit = limit;
    this.keep = keep;
    this.events = device.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED
        || e.getType() == DeviceEvent.Type.LOST) {
        forgetIdle();
      }
    });
  }

  // Kept buffers of a context that is gone: nothing to free, and handed out they would only fail (410).
  private void forgetIdle() {
    idle.clear();
    idleCount = 0;
  }

  /** A buffer of 3 n² floats for one request: an idle one, or a new one. */
  Future<BufferHandle> take(int n) {
    ArrayDeque<BufferHandle> same = idle.get(n);
    busy++;
    if (same != null && !same.isEmpty()) {
      idleCount--;
      return Future.succeededFuture(same.poll());
    }
    if (busy + idleCount > limit) {
      evictOne();
    }
    return device.alloc(DType.F32, 3L * n * n).onFailure(t -> busy--);
  }

  /**
   * Takes back a buffer once every request on it is answered; one whose context is gone (or that
   * the device no longer knows) is dropped, not kept.
   */
  void give(int n, BufferHandle slot, Throwable failure) {
    busy--;
    FailureCode code = failure == null ? null : Failures.codeOf(failure);
    boolean gone = code == FailureCode.CONTEXT_LOST || code == FailureCode.STALE_HANDLE || code == FailureCode.NOT_FOUND;
    if (closed || gone || !keep) {
      free(slot, FREE_ATTEMPTS);
      return;
    }
    idle.computeIfAbsent(n, k -> new ArrayDeque<>()).add(slot);
    idleCount++;
  }

  /** Frees every idle buffer; those still in use are freed when given back. */
  Future<Void> close() {
    closed = true;
    events.unregister();
    List<Future<Void>> frees = new ArrayList<>();
    idle.values().forEach(q -> q.forEach(h -> frees.add(free(h, FREE_ATTEMPTS))));
    idle.clear();
    idleCount = 0;
    return Future.join(frees).mapEmpty();
  }

  private void evictOne() {
    for (ArrayDeque<BufferHandle> q : idle.values()) {
      if (!q.isEmpty()) {
        idleCount--;
        free(q.poll(), FREE_ATTEMPTS);
        return;
      }
    }
  }

  // A free the device turned away (QUEUE_FULL under load) is tried again a little later; one of a
  // buffer lost with its context needs nothing.
  private Future<Void> free(BufferHandle h, int attempts) {
    return device.free(h).recover(t -> {
      FailureCode code = Failures.codeOf(t);
      if (attempts <= 1 || (code != FailureCode.QUEUE_FULL && code != FailureCode.TIMEOUT)) {
        return Future.succeededFuture();
      }
      return vertx.timer(100).compose(x -> free(h, attempts - 1));
    });
  }
}
