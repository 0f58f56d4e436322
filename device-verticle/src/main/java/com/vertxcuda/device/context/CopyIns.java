package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.CopyInAbort;
import com.vertxcuda.internal.CopyInRequest;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The target side of direct copies between devices of one process ({@link CopyInRequest}, peer to
 * peer): each copy holds its target's place in the order from the moment its start is served until
 * the source's context has queued its write, so what came before it is written first and what comes
 * after and touches the target waits. A {@link CopyInAbort} is the client's abort when the source
 * refused its side; one that arrives before its start was served waits for it. Staged copies are
 * not served here: they are uploads of the target's views, sent by the one pump. On the submission
 * thread.
 */
final class CopyIns {

  /** Ids of copies that ended, so a late abort of one is refused rather than kept waiting. */
  private static final int REMEMBERED = 4096;

  private static final class CopyIn {
    final Request start;
    final BufferHandle target;
    final SubmissionLoop.Hold hold;
    final long timer;
    /** The copy's settlement with its source ({@link PeerCopies.Target#state}). */
    final AtomicInteger peer = new AtomicInteger(PeerCopies.Target.OPEN);

    CopyIn(Request start, BufferHandle target, SubmissionLoop.Hold hold, long timer) {
      this.start = start;
      this.target = target;
      this.hold = hold;
      this.timer = timer;
    }
  }

  private final ContextRuntime runtime;
  private final DeviceContext device;
  private final GpuStream stream;
  private final Map<Long, CopyIn> copies = new HashMap<>();
  private final Map<Long, List<Request>> early = new HashMap<>();
  private final Map<Long, Boolean> ended = new LinkedHashMap<>(64, 0.75f, false) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
      return size() > REMEMBERED;
    }
  };

  CopyIns(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
  }

  static Footprint footprint(CopyInRequest c) {
    return Footprint.builder().write(c.target()).build();
  }

  /** Serves the start of a copy, in the order: validates it and takes the target's place. */
  void start(Request r, CopyInRequest c) {
    try {
      begin(r, c);
    } catch (RuntimeException e) {
      if (c.transfer() != 0 && !copies.containsKey(c.transfer())) {
        ended.put(c.transfer(), Boolean.TRUE); // its abort, if one comes, is answered at once
      }
      // The source's side must not wait for a target that will never come; a source that never
      // comes must not leave the refusal behind: it is kept until this start's deadline.
      long transfer = c.transfer();
      PeerCopies.target(transfer, PeerCopies.Target.refusal(runtime.failure(e)));
      runtime.vertx().setTimer(Math.max(1, (r.deadline() - System.nanoTime()) / 1_000_000),
        id -> PeerCopies.forgetRefusal(transfer));
      if (!copies.containsKey(c.transfer())) {
        // An abort that came before the start hears the refusal now, not at its deadline.
        List<Request> waiting = early.remove(c.transfer());
        if (waiting != null) {
          CudaException refused = runtime.failure(e);
          waiting.forEach(k -> k.fail(new CudaException(refused.code(), "copy #" + c.transfer()
            + " was refused: " + refused.getMessage())));
        }
      }
      throw e;
    }
  }

  private void begin(Request r, CopyInRequest c) {
    BufferHandle s = c.source();
    BufferHandle t = c.target();
    if (s == null || t == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target are required");
    }
    if (s.node().equals(t.node()) && s.device() == t.device()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target are on one device: copy them there");
    }
    runtime.allocations().resolve(t, "target");
    Transfers.checkView(t);
    if (s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source is " + s.length() + " " + s.dtype()
        + " but target is " + t.length() + " " + t.dtype());
    }
    if (c.transfer() == 0 || copies.containsKey(c.transfer()) || ended.containsKey(c.transfer())) {
      throw new CudaException(FailureCode.BAD_REQUEST, "copy #" + c.transfer() + " is not a new copy");
    }
    if (t.byteLength() == 0) {
      ended.put(c.transfer(), Boolean.TRUE);
      r.reply(t);
      return;
    }
    // A copy whose bytes never come (its client went) gives the target's place up at its deadline.
    long wait = Math.max(1, (r.deadline() - System.nanoTime()) / 1_000_000);
    long transfer = c.transfer();
    long timer = runtime.vertx().setTimer(wait, id -> runtime.loop().execute(() -> giveUp(transfer,
      new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + " did not receive its bytes in time"))));
    CopyIn in = new CopyIn(r, t, runtime.loop().hold(r, footprint(c)), timer);
    copies.put(transfer, in);
    // The source's context writes the target itself, after the target's uses so far.
    Allocation dst = runtime.allocations().resolve(t, "target");
    PeerCopies.target(transfer, new PeerCopies.Target(runtime, dst, t, runtime.ordering().pendingUses(dst),
      event -> runtime.loop().execute(() -> written(transfer, event)),
      failure -> runtime.loop().execute(() -> end(transfer, failure)), null, in.peer));
    // An abort that came first is served after this request's submission returns: serving it here
    // would release the copy's hold inside the submission loop's drain of the waiting list.
    List<Request> waiting = early.remove(transfer);
    if (waiting != null) {
      runtime.loop().execute(() -> waiting.forEach(this::abort));
    }
  }

  /** Serves an abort, outside the order: the copy's place is given up and its start fails. */
  void abort(Request r) {
    CopyInAbort k = (CopyInAbort) r.body();
    CopyIn in = copies.get(k.transfer());
    if (in == null) {
      if (ended.containsKey(k.transfer()) || k.transfer() == 0) {
        r.fail(new CudaException(FailureCode.BAD_REQUEST, "copy #" + k.transfer() + " is not in progress"));
      } else {
        early.computeIfAbsent(k.transfer(), x -> new ArrayList<>()).add(r);
        long wait = Math.max(1, (r.deadline() - System.nanoTime()) / 1_000_000);
        runtime.vertx().setTimer(wait, id -> runtime.loop().execute(() -> expireEarly(k.transfer(), r)));
      }
      return;
    }
    if (runtime.isPoisoned()) {
      r.fail(runtime.lostFailure());
      return;
    }
    if (!in.target.equals(k.target())) {
      r.fail(new CudaException(FailureCode.BAD_REQUEST, "copy #" + k.transfer() + " does not write " + k.target()));
      return;
    }
    r.reply(in.target);
    giveUp(k.transfer(), new CudaException(FailureCode.BAD_REQUEST, "copy #" + k.transfer()
      + " was aborted: its source could not be read"));
  }

  /**
   * The source's context has queued the copy into the target, done at {@code event} (retained for
   * this side): later uses of the target follow it, and the copy's place is given up.
   */
  private void written(long transfer, GpuEvent event) {
    CopyIn in = copies.remove(transfer);
    try {
      if (in == null) {
        return; // it ended (aborted, timed out) meanwhile
      }
      ended.put(transfer, Boolean.TRUE);
      runtime.vertx().cancelTimer(in.timer);
      try {
        Allocation a = runtime.allocations().resolve(in.target, "target");
        GpuEvent done = runtime.ordering().run(stream, List.of(), List.of(a), () -> device.await(stream, event));
        runtime.replyWhenDone(in.start, done, () -> in.target);
      } catch (BackendException | RuntimeException e) {
        in.start.fail(runtime.failure(e));
      } finally {
        in.hold.release();
      }
    } finally {
      event.release();
    }
  }

  /**
   * This side gives the copy up (its deadline, an abort) — unless the copy's source has already
   * claimed it and is writing the target: then the copy ends when the source says it is written or
   * failed, so nothing lands in the target after its place is given up.
   */
  private void giveUp(long transfer, CudaException failure) {
    CopyIn in = copies.get(transfer);
    if (in != null && !in.peer.compareAndSet(PeerCopies.Target.OPEN, PeerCopies.Target.ENDED)
      && in.peer.get() == PeerCopies.Target.WRITING) {
      return;
    }
    end(transfer, failure);
  }

  // Ends a copy that did not complete: its place is given up, its start fails.
  private void end(long transfer, CudaException failure) {
    PeerCopies.cancel(transfer);
    CopyIn in = copies.remove(transfer);
    if (in == null) {
      return;
    }
    ended.put(transfer, Boolean.TRUE);
    runtime.vertx().cancelTimer(in.timer);
    in.start.fail(failure);
    in.hold.release();
  }

  private void expireEarly(long transfer, Request r) {
    List<Request> waiting = early.get(transfer);
    if (waiting != null && waiting.remove(r)) {
      if (waiting.isEmpty()) {
        early.remove(transfer);
      }
      r.fail(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + " never started here"));
    }
  }
}
