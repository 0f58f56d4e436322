package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.HostMemoryRegistration;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.internal.CopyThreads;
import com.vertxcuda.device.memory.LentBuffers;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.buffer.Buffer;
import com.vertxcuda.internal.VertxInternals;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The device's transfers between host memory and its buffers on the submission thread: uploads,
 * downloads, and the device host's transfers through its shared region (one view each), and
 * uploads from and downloads into transfer buffers as steps of recorded pipelines. They run on the
 * context's copy stream.
 */
final class TransferOperations {

  private final ContextRuntime runtime;
  private final DeviceContext device;
  private final GpuStream stream;

  TransferOperations(ContextRuntime runtime, GpuStream stream) {
    this.runtime = runtime;
    this.device = runtime.device();
    this.stream = stream;
  }

  /**
   * Uploads from direct memory go to the device as they are. A large upload from the Java heap is
   * first copied, off the submission thread, into memory the device copies from fastest (pinned on
   * cuda), so staging it never holds up the requests behind it.
   */
  Preparation upload(Request r, UploadRequest u, Object prepared) throws BackendException {
    Buffer staged = (Buffer) prepared;
    if (u.getData() == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, "data is missing");
    }
    BufferHandle h = u.getHandle();
    ByteBuffer src = VertxInternals.byteBuf(u.getData()).nioBuffer();
    if (staged == null && !src.isDirect() && src.remaining() >= MemoryOperations.PREPARED_BYTES) {
      runtime.allocations().resolve(h, "handle");
      Transfers.checkUpload(h, src.remaining());
      return () -> {
        Buffer into = device.hostBuffer(src.remaining());
        CopyThreads.copy(src, VertxInternals.byteBuf(into).nioBuffer(0, src.remaining()));
        return into;
      };
    }
    ByteBuffer from = staged == null ? src : VertxInternals.byteBuf(staged).nioBuffer(0, src.remaining());
    GpuEvent done;
    try {
      done = toDevice(h, from);
    } catch (BackendException | RuntimeException e) {
      if (staged != null) {
        device.releaseHostBuffer(staged);
      }
      throw e;
    }
    runtime.replyWhenDone(r, done, () -> {
      if (staged != null) {
        device.releaseHostBuffer(staged);
      }
      return h;
    });
    return null;
  }

  Preparation download(Request r, DownloadRequest d, Object preparedBuffer) throws BackendException {
    Buffer prepared = (Buffer) preparedBuffer;
    BufferHandle h = d.getHandle();
    try {
      runtime.allocations().resolve(h, "handle");
      Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
    } catch (RuntimeException e) {
      // Freed (or replaced) while its landing was made: the landing goes back now.
      if (prepared != null) {
        device.releaseHostBuffer(prepared);
      }
      throw e;
    }
    // The device picks the memory copies reach fastest: pinned on cuda, the host buffer pool
    // elsewhere. A pool's idle block is taken here; fresh memory can take milliseconds, so a large
    // one is made off the submission thread while the download keeps its place.
    int bytes = (int) h.byteLength();
    Buffer idle = prepared != null ? prepared : device.idleHostBuffer(bytes);
    if (idle == null && bytes >= MemoryOperations.PREPARED_BYTES) {
      return () -> device.hostBuffer(bytes);
    }
    Buffer out = idle != null ? idle : device.hostBuffer(bytes);
    ByteBuffer dst = VertxInternals.byteBuf(out).nioBuffer(0, bytes);
    GpuEvent done;
    try {
      done = toHost(h, dst);
    } catch (BackendException | RuntimeException e) {
      device.releaseHostBuffer(out);
      throw e;
    }
    runtime.replyWhenDone(r, done, () -> new DownloadReply(h, out));
    return null;
  }

  void transfer(Request r, TransferRequest t) throws BackendException {
    BufferHandle h = t.handle();
    if (t.direction() == TransferRequest.Direction.REGISTER) {
      boolean pinned = device instanceof HostMemoryRegistration;
      if (pinned) {
        ((HostMemoryRegistration) device).registerHostMemory(t.host());
      }
      r.reply(pinned);
      return;
    }
    Allocation a = checked(t);
    boolean up = t.direction() == TransferRequest.Direction.TO_DEVICE;
    GpuEvent done = runtime.ordering().run(stream, up ? List.of() : List.of(a), up ? List.of(a) : List.of(),
      () -> copyPieces(t, a));
    runtime.replyWhenDone(r, done, () -> h);
  }

  /**
   * A transfer through the device host's shared region as a step of a recorded pipeline, on the copy
   * stream: each run copies the region's bytes as they are then (the node that lent the transfer
   * buffer over them holds it while the pipeline exists).
   */
  RecordedStep record(TransferRequest t) {
    if (t.direction() == TransferRequest.Direction.REGISTER) {
      throw new CudaException(FailureCode.BAD_REQUEST, "a registration of host memory is not a step");
    }
    Allocation a = checked(t);
    boolean up = t.direction() == TransferRequest.Direction.TO_DEVICE;
    return CopyOperations.step(stream, up ? List.of() : List.of(a), up ? List.of(a) : List.of(), () -> copyPieces(t, a),
      () -> { });
  }

  // The buffer a transfer of exactly its view's bytes goes to or from.
  private Allocation checked(TransferRequest t) {
    BufferHandle h = t.handle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkView(h);
    if (t.host().remaining() != h.byteLength()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "host memory has " + t.host().remaining()
        + " bytes; the handle's view has " + h.byteLength());
    }
    return a;
  }

  // One copy per piece of page-locked memory it spans (one, unless the memory is pinned in pieces).
  private void copyPieces(TransferRequest t, Allocation a) throws BackendException {
    boolean up = t.direction() == TransferRequest.Direction.TO_DEVICE;
    long offset = t.handle().byteOffset();
    ByteBuffer host = t.host();
    long n = host.remaining();
    for (long from = 0; from < n; ) {
      long len = t.pieceFrom(from, n - from);
      ByteBuffer part = host.slice(host.position() + (int) from, (int) len);
      if (up) {
        device.copyHostToDevice(stream, part, a.memory(), offset + from);
      } else {
        device.copyDeviceToHost(stream, a.memory(), offset + from, part);
      }
      from += len;
    }
  }

  /**
   * An upload from a transfer buffer as a step of a recorded pipeline, on the copy stream: each run
   * copies the buffer's bytes as they are then. The step holds the buffer's memory until it closes.
   */
  RecordedStep record(UploadRequest u) {
    BufferHandle h = u.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkUpload(h, u.getData() == null ? 0 : u.getData().length());
    LentBuffers.Hold held = held(u.getData());
    ByteBuffer src = VertxInternals.byteBuf(u.getData()).nioBuffer();
    return CopyOperations.step(stream, List.of(), List.of(a),
      () -> device.copyHostToDevice(stream, src.duplicate(), a.memory(), h.byteOffset()), held::close);
  }

  /**
   * A download into a transfer buffer as a step of a recorded pipeline, on the copy stream: each run
   * overwrites the buffer's bytes. The step holds the buffer's memory until it closes.
   */
  RecordedStep record(DownloadIntoRequest d) {
    BufferHandle h = d.getHandle();
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, d.getData() == null ? 0 : d.getData().length());
    LentBuffers.Hold held = held(d.getData());
    ByteBuffer dst = VertxInternals.byteBuf(d.getData()).nioBuffer();
    return CopyOperations.step(stream, List.of(a), List.of(),
      () -> device.copyDeviceToHost(stream, a.memory(), h.byteOffset(), dst.duplicate()), held::close);
  }

  // The transfer buffer a recorded step names, held for as long as the step exists; BAD_REQUEST for
  // memory this device does not copy as it lies (not lent here, heap memory, pageable on cuda) or
  // that was released.
  private LentBuffers.Hold held(Buffer data) {
    LentBuffers.Hold held = data == null ? null : device.holdHostMemory(data);
    if (held == null) {
      throw new CudaException(FailureCode.BAD_REQUEST, Transfers.NOT_A_TRANSFER_BUFFER);
    }
    return held;
  }

  private GpuEvent toDevice(BufferHandle h, ByteBuffer src) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkUpload(h, src.remaining());
    return runtime.ordering().run(stream, List.of(), List.of(a),
      () -> device.copyHostToDevice(stream, src, a.memory(), h.byteOffset()));
  }

  private GpuEvent toHost(BufferHandle h, ByteBuffer dst) throws BackendException {
    Allocation a = runtime.allocations().resolve(h, "handle");
    Transfers.checkDownload(h, dst.remaining());
    return runtime.ordering().run(stream, List.of(a), List.of(),
      () -> device.copyDeviceToHost(stream, a.memory(), h.byteOffset(), dst));
  }
}
