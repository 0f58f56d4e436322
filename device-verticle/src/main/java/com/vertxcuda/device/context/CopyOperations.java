package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.CopyInRequest;
import com.vertxcuda.internal.CopyOutRequest;
import com.vertxcuda.message.CopyRequest;
import com.vertxcuda.message.FillRequest;

import java.util.List;

/**
 * The device's copies between buffers on the submission thread: device to device, fills, and both
 * sides of a copy between two contexts of this process; fills and copies also as recorded steps.
 * They run on the context's copy stream.
 */
final class CopyOperations {

  private final ContextRuntime runtime;
  private final DeviceContext device;
  private final GpuStream stream;
  /** Copies into this device from another in progress. */
  private final CopyIns copyIns;

  CopyOperations(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
    this.copyIns = new CopyIns(runtime, stream);
  }

  /**
   * The source's side of a copy straight into another context of this process: holds the source's
   * place (later writes to it wait) until the target's side has come and the copy is queued after
   * the source's last write and the target's pending uses.
   */
  void copyOut(Request r, CopyOutRequest c) throws BackendException {
    BufferHandle s = c.source();
    BufferHandle t = c.target();
    if (s == null || t == null || s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target must be of one dtype and length");
    }
    runtime.allocations().resolve(s, "source");
    Transfers.checkView(s);
    SubmissionLoop.Hold hold = runtime.loop().hold(r, Footprint.builder().read(s).build());
    long transfer = c.transfer();
    boolean[] settled = new boolean[1];
    long wait = Math.max(1, (r.deadline() - System.nanoTime()) / 1_000_000);
    long timer = runtime.vertx().setTimer(wait, id -> runtime.loop().execute(() -> {
      if (!settled[0]) {
        settled[0] = true;
        PeerCopies.cancel(transfer);
        hold.release();
        r.fail(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s target never came"));
      }
    }));
    PeerCopies.source(transfer, target -> runtime.loop().execute(() -> {
      if (settled[0]) {
        target.pendingUses().forEach(GpuEvent::release);
        target.failed().accept(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s source gave up"));
        return;
      }
      settled[0] = true;
      runtime.vertx().cancelTimer(timer);
      if (target.refused() != null) {
        hold.release();
        r.fail(target.refused());
        return;
      }
      if (!target.claim()) {
        // The target gave its place up meanwhile (its deadline, an abort): writing it now could land
        // after later uses of it, or in memory freed since.
        target.pendingUses().forEach(GpuEvent::release);
        hold.release();
        r.fail(new CudaException(FailureCode.TIMEOUT, "copy #" + transfer + "'s target gave up before the copy began"));
        return;
      }
      try {
        Allocation src = runtime.allocations().resolve(s, "source");
        if (!device.canCopyToPeer(target.runtime().device())) {
          throw new CudaException(FailureCode.UNSUPPORTED, "device " + s.device() + " cannot copy into device " + t.device());
        }
        GpuEvent done = runtime.ordering().run(stream, List.of(src), List.of(), () -> {
          for (GpuEvent use : target.pendingUses()) {
            device.await(stream, use);
          }
          device.copyToPeer(stream, src.memory(), s.byteOffset(), target.runtime().device(), target.memory().memory(),
            target.handle().byteOffset(), s.byteLength());
        });
        target.written().accept(done.retain());
        runtime.replyWhenDone(r, done, () -> t);
      } catch (Throwable e) {
        CudaException failure = runtime.failure(e);
        target.failed().accept(failure);
        r.fail(failure);
      } finally {
        target.pendingUses().forEach(GpuEvent::release);
        hold.release();
      }
    }));
  }

  /** The target's side of a copy from another device: holds the target's place until the source has queued its write. */
  void copyIn(Request r, CopyInRequest c) throws BackendException {
    copyIns.start(r, c);
  }

  /** Serves the abort of a copy from another device; on the submission thread, outside the order. */
  void copyInAbort(Request r) throws BackendException {
    copyIns.abort(r);
  }

  void copy(Request r, CopyRequest c) throws BackendException {
    BufferHandle s = c.getSource();
    BufferHandle t = c.getTarget();
    Allocation[] ends = copyEnds(c);
    Allocation src = ends[0];
    Allocation dst = ends[1];
    GpuEvent done = runtime.ordering().run(stream, List.of(src), List.of(dst),
      () -> device.copyDeviceToDevice(stream, src.memory(), s.byteOffset(), dst.memory(), t.byteOffset(), s.byteLength()));
    runtime.replyWhenDone(r, done, () -> t);
  }

  /** A fill as a step of a recorded pipeline, on the copy stream. */
  RecordedStep record(FillRequest f) {
    BufferHandle h = f.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    long bits = fillBits(h, f);
    int size = h.dtype().size();
    return step(List.of(), List.of(a), () -> device.fill(stream, a.memory(), h.byteOffset(), h.length(), size, bits));
  }

  /** A device-to-device copy as a step of a recorded pipeline, on the copy stream. */
  RecordedStep record(CopyRequest c) {
    Allocation[] ends = copyEnds(c);
    BufferHandle s = c.getSource();
    BufferHandle t = c.getTarget();
    return step(List.of(ends[0]), List.of(ends[1]), () -> device.copyDeviceToDevice(stream, ends[0].memory(),
      s.byteOffset(), ends[1].memory(), t.byteOffset(), s.byteLength()));
  }

  private RecordedStep step(List<Allocation> reads, List<Allocation> writes, LibraryContext.Work work) {
    return step(stream, reads, writes, work, () -> { });
  }

  /**
   * A device operation as a recorded step on {@code on}: its buffers, its work, and what closing it
   * lets go of ({@code held}: the transfer buffer a transfer step holds). The one form of the device's
   * own steps (fills, copies, transfers).
   */
  static RecordedStep step(GpuStream on, List<Allocation> reads, List<Allocation> writes, LibraryContext.Work work,
                           Runnable held) {
    return new RecordedStep() {
      @Override public GpuStream stream() { return on; }
      @Override public List<Allocation> reads() { return reads; }
      @Override public List<Allocation> writes() { return writes; }
      @Override public void issue() throws BackendException { work.enqueue(); }
      @Override public void close() { held.run(); }
    };
  }

  /** A device-to-device copy's two buffers, checked (one dtype and length, no overlap): the one place for requests and recorded steps. */
  private Allocation[] copyEnds(CopyRequest c) {
    BufferHandle s = c.getSource();
    BufferHandle t = c.getTarget();
    Allocation src = runtime.allocations().resolve(s, "source");
    Allocation dst = runtime.allocations().resolve(t, "target");
    if (s.dtype() != t.dtype() || s.length() != t.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source is " + s.length() + " " + s.dtype()
        + " but target is " + t.length() + " " + t.dtype());
    }
    if (src == dst && s.offset() < t.offset() + t.length() && t.offset() < s.offset() + s.length()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "source and target overlap");
    }
    return new Allocation[] {src, dst};
  }

  // An IllegalArgumentException for bits the dtype cannot hold: Failures answers it BAD_REQUEST.
  private static long fillBits(BufferHandle h, FillRequest f) {
    return h.dtype().checkBits(f.getBits());
  }


  void fill(Request r, FillRequest f) throws BackendException {
    BufferHandle h = f.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    int size = h.dtype().size();
    long bits = fillBits(h, f);
    GpuEvent done = runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.fill(stream, a.memory(), h.byteOffset(), h.length(), size, bits));
    runtime.replyWhenDone(r, done, () -> h);
  }
}
