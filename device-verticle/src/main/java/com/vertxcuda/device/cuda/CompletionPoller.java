package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import jcuda.driver.CUcontext;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Sees events complete by polling {@code cuEventQuery} on a thread of its own, and completes their
 * futures there. Measured on the reference H200 this sees completion in ~6.5 µs where a host-function
 * callback takes ~76 µs. It spins briefly after each sign of work, then yields while work is
 * pending, and parks only once work has been pending for long: on the reference H200 VM a timed
 * park of 50 µs took about a millisecond, which cost 256 MiB copies a fifth of their bandwidth.
 * With nothing pending it spins a little longer (the next request usually follows at once), then
 * sleeps until a waiter arrives, so an idle device costs no CPU.
 */
final class CompletionPoller implements Runnable {

  /** Spin this long after the last completion or new waiter before backing off. */
  private static final long SPIN_NANOS = 200_000;
  /** Then yield for this long; past it the work is long enough that a park's latency no longer matters. */
  private static final long YIELD_NANOS = 50_000_000;
  private static final long PARK_NANOS = 100_000;

  private static final class Waiter {
    final CudaEvent event;
    final CompletableFuture<Void> future;

    Waiter(CudaEvent event, CompletableFuture<Void> future) {
      this.event = event;
      this.future = future;
    }
  }

  private final CUcontext context;
  private final ConcurrentLinkedQueue<Waiter> incoming = new ConcurrentLinkedQueue<>();
  private final Thread thread;
  private volatile boolean running = true;

  CompletionPoller(CUcontext context, String name) {
    this.context = context;
    this.thread = new Thread(this, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** A future completed once {@code event} is reached; holds its own reference to the event. */
  CompletableFuture<Void> whenComplete(CudaEvent event) {
    CompletableFuture<Void> f = new CompletableFuture<>();
    incoming.add(new Waiter((CudaEvent) event.retain(), f));
    LockSupport.unpark(thread);
    return f;
  }

  void stop() {
    running = false;
    LockSupport.unpark(thread);
    try {
      thread.join(1_000);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    BackendException closed = BackendException.of(FailureCode.CONTEXT_LOST, "the context was closed");
    for (Waiter w; (w = incoming.poll()) != null; ) {
      finish(w, closed);
    }
  }

  @Override
  public void run() {
    JCudaDriver.cuCtxSetCurrent(context);
    List<Waiter> pending = new ArrayList<>();
    long lastActivity = System.nanoTime();
    while (running) {
      boolean progress = false;
      for (Waiter w; (w = incoming.poll()) != null; ) {
        pending.add(w);
        progress = true;
      }
      if (pending.isEmpty()) {
        if (System.nanoTime() - lastActivity < SPIN_NANOS) {
          Thread.onSpinWait();
        } else {
          LockSupport.parkNanos(this, 10_000_000);
          lastActivity = System.nanoTime();
        }
        continue;
      }
      String poisoned = CudaErrors.poisonedBy();
      for (Iterator<Waiter> it = pending.iterator(); it.hasNext(); ) {
        Waiter w = it.next();
        if (poisoned != null) {
          it.remove();
          finish(w, BackendException.sticky(poisoned));
          continue;
        }
        int r = JCudaDriver.cuEventQuery(w.event.handle);
        if (r == CUresult.CUDA_ERROR_NOT_READY) {
          continue;
        }
        it.remove();
        progress = true;
        if (r == CUresult.CUDA_SUCCESS) {
          w.event.markComplete();
          finish(w, null);
        } else {
          BackendException e = CudaErrors.failure(r, "the work before an event");
          poisoned = e.isSticky() ? e.getMessage() : null;
          finish(w, e);
        }
      }
      long now = System.nanoTime();
      if (progress) {
        lastActivity = now;
      } else if (now - lastActivity < SPIN_NANOS) {
        Thread.onSpinWait();
      } else if (now - lastActivity < SPIN_NANOS + YIELD_NANOS) {
        Thread.yield();
      } else {
        LockSupport.parkNanos(this, PARK_NANOS);
      }
    }
    BackendException closed = BackendException.of(FailureCode.CONTEXT_LOST, "the context was closed");
    pending.forEach(w -> finish(w, closed));
  }

  private static void finish(Waiter w, BackendException failure) {
    w.event.release();
    if (failure == null) {
      w.future.complete(null);
    } else {
      w.future.completeExceptionally(failure);
    }
  }
}
