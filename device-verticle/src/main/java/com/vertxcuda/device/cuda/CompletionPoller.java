package com.vertxcuda.device.cuda;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.spi.BackendException;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
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
 * futures there: a host-function callback is an order of magnitude slower than polling an event
 * (bench/results/INDEX.md). It waits as {@link IdleWait} says, like the submission thread and the
 * link's readers: it spins {@code spinNanos} after each completion or new waiter, goes on spinning
 * (on a host of fewer than 8 cores yielding one step in 256, or with no spin yielding at every step) while
 * work is pending ({@link IdleWait#pauseAwaiting}), and past {@link IdleWait#AWAIT_NANOS} of pending
 * work with nothing completing polls every {@link #PARK_NANOS} (one late wake-up is small against
 * the wait then). Where there is a spin it does not yield at every step while work is pending: that
 * would delay the answer of every operation that outlasts the first spin (one-at-a-time FFT, RNG).
 * With nothing pending it spins {@code spinNanos}, then sleeps until a
 * waiter arrives, so an idle device costs no CPU.
 */
final class CompletionPoller implements Runnable {

  /** Past {@link IdleWait#AWAIT_NANOS} of pending work with nothing completing, pending events are polled this often. */
  static final long PARK_NANOS = 100_000;

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
  private final long spinNanos;
  private volatile boolean running = true;
  /** When a waiter last came or an event last completed (this thread's alone). */
  private long lastActivity = System.nanoTime();
  /** {@link #lastActivity} and "nothing awaited" as the idle wait reads them (made once, not per step). */
  private final LongSupplier lastActive = () -> lastActivity;
  private static final BooleanSupplier NOTHING_AWAITED = () -> false;

  CompletionPoller(CUcontext context, String name, long spinNanos) {
    this.context = context;
    this.spinNanos = spinNanos;
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
    lastActivity = System.nanoTime();
    while (running) {
      boolean progress = false;
      for (Waiter w; (w = incoming.poll()) != null; ) {
        pending.add(w);
        progress = true;
      }
      if (pending.isEmpty()) {
        if (!IdleWait.pause(spinNanos, lastActive, NOTHING_AWAITED)) {
          // Woken by the next waiter (whenComplete unparks).
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
      } else if (!IdleWait.pauseAwaiting(spinNanos, now - lastActivity)) {
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
