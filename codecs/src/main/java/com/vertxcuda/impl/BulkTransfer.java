package com.vertxcuda.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An upload or download to a device on another node larger than {@link #BULK_BYTES}, over the node's
 * bulk side channel ({@link BulkServer}; {@link BulkWire} says the bytes): one TCP stream (TLS when
 * the event bus is) per transfer, the bytes pipelined at the network's pace instead of event-bus
 * messages.
 *
 * <p>It keeps its place in the caller's order ({@link CallerOrder.Hold}) until it is done. When its
 * turn comes it opens a stream ({@link BulkChannels#open}, which also puts the stream behind every
 * request this caller sent the device before). An upload's chunks are filled on the copy threads (ring of
 * {@link #RING} direct buffers of {@link #CHUNK} bytes, each reused once the socket has written it); a
 * download's segments are read into the host values on the copy threads as they arrive, the socket
 * paused while {@link #RING} wait. Everything else runs on the caller's context.
 *
 * <p>The future completes once, on the caller's context, after the node's one answer (DONE, or FAIL
 * with its code), the stream's end (CONTEXT_LOST), the node leaving the cluster (CONTEXT_LOST) or the
 * sender's timeout (TIMEOUT) — and only once no copy touches the host values any more.
 */
final class BulkTransfer implements CallerOrder.Hold {

  /** Bytes above which a transfer to another node takes the side channel; at most one message below. */
  static final int BULK_BYTES = 1 << 20;
  /** Bytes of an upload's chunk. */
  static final int CHUNK = 4 << 20;
  /** An upload's chunks, or a download's segments, being copied at once. */
  static final int RING = 4;

  private final RequestSender sender;
  private final BufferHandle handle;
  private final HostElements host;
  private final boolean upload;
  private final Context caller;
  private final CallerOrder order;
  private final Promise<Void> done = Promise.promise();
  private final long total;
  private final int per;
  private final BulkWire.Cutter cutter = new BulkWire.Cutter();
  private NetSocket socket;
  private long timer = -1;
  private Runnable stopWatching = () -> { };
  private CudaException cause;
  private boolean failed;
  private boolean reported;
  private boolean answered;
  /** Copies running on the copy threads (fills of an upload, reads of a download). */
  private int copying;
  // An upload's ring.
  private final ArrayDeque<Buffer> idle = new ArrayDeque<>();
  private final Map<Long, Buffer> ready = new HashMap<>();
  private long chunks;
  private long nextFill;
  private long nextWrite;
  private int writing;
  // A download's bytes received, and the segment being received.
  private long received;
  private final List<Buffer> segment = new ArrayList<>();
  private long segmentAt;
  private boolean paused;

  private BulkTransfer(RequestSender sender, BufferHandle handle, HostElements host, boolean upload) {
    this.sender = sender;
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.caller = sender.callerContext();
    this.order = CallerOrder.current();
    this.total = handle.byteLength();
    this.per = host.perDeviceElement(handle.dtype());
  }

  /** Bytes above which a transfer to another node takes the side channel. */
  static long threshold(int maxMessageSize) {
    return Math.min(BULK_BYTES, maxMessageSize);
  }

  /** Whether a transfer of {@code handle} through {@code sender} takes the side channel. */
  static boolean takes(RequestSender sender, BufferHandle handle, int maxMessageSize) {
    return sender.remote() && handle.byteLength() > threshold(maxMessageSize);
  }

  /** Writes {@code host}, which fits {@code target}, into it. */
  static Future<Void> upload(RequestSender sender, BufferHandle target, HostElements host) {
    return new BulkTransfer(sender, target, host, true).start();
  }

  /** Reads {@code source} into {@code host}, which fits it. */
  static Future<Void> download(RequestSender sender, BufferHandle source, HostElements host) {
    return new BulkTransfer(sender, source, host, false).start();
  }

  private Future<Void> start() {
    order.hold(caller, false, this);
    return done.future();
  }

  /** Everything made before it on its caller has been sent (on the caller's thread or context). */
  @Override
  public void turn() {
    long timeout = sender.timeoutMillis();
    timer = sender.vertx().setTimer(timeout, id -> caller.runOnContext(v -> fail(new CudaException(
      FailureCode.TIMEOUT, "the bulk transfer did not finish within " + timeout + " ms"))));
    String node = com.vertxcuda.Addresses.nodeOf(sender.address());
    stopWatching = sender.onNodeLeft(() -> caller.runOnContext(v -> fail(new CudaException(FailureCode.CONTEXT_LOST,
      "node " + node + " left the cluster"))));
    BulkChannels.open(sender, caller).onComplete(ar -> {
      if (ar.failed()) {
        fail(ar.cause());
      } else if (failed) {
        ar.result().close();
      } else {
        opened(ar.result());
      }
    });
  }

  private void opened(NetSocket s) {
    socket = s;
    s.handler(b -> {
      try {
        cutter.feed(b);
      } catch (RuntimeException e) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream is malformed: " + e.getMessage()));
      }
    });
    // After the node's answer, only this side's copies may still fail the transfer.
    s.closeHandler(v -> {
      if (!answered) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream to node "
          + com.vertxcuda.Addresses.nodeOf(sender.address()) + " was cut before its answer"));
      }
    });
    s.exceptionHandler(t -> {
      if (!answered) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream failed: " + t.getMessage()));
      }
    });
    s.write(BulkWire.header(upload, handle, sender.timeoutMillis()));
    cutter.field(1, this::frame);
    if (upload) {
      chunks = Math.max(1, (total + CHUNK - 1) / CHUNK);
      fill();
    }
  }

  // A frame from the node.
  private void frame(Buffer type) {
    byte t = type.getByte(0);
    if (t == BulkWire.DATA && !upload) {
      cutter.field(4, n -> data(n.getInt(0)));
    } else if (t == BulkWire.DONE) {
      if (received != (upload ? 0 : total)) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream ended after " + received + " of " + total + " bytes"));
        return;
      }
      answered = true;
      settle();
    } else if (t == BulkWire.FAIL) {
      cutter.field(8, f -> cutter.field(Math.max(0, Math.min(f.getInt(4), BulkWire.MAX_MESSAGE_BYTES)),
        m -> fail(BulkWire.failure(f.getInt(0), m))));
    } else {
      fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream sent an unknown frame " + t));
    }
  }

  // An upload's next chunks, filled on the copy threads while the ring has room.
  private void fill() {
    while (!failed && nextFill < chunks && copying + ready.size() + writing < RING) {
      long k = nextFill++;
      Buffer reused = idle.poll();
      copying++;
      CopyThreads.execute(() -> {
        Buffer b = reused;
        Throwable error = null;
        try {
          if (b == null) {
            b = VertxInternals.buffer(Unpooled.wrappedBuffer(ByteBuffer.allocateDirect((int) Math.min(CHUNK, total))));
          }
          int n = bytes(k);
          long from = k * CHUNK / handle.dtype().size() * per;
          host.write(from, n / handle.dtype().size() * per, VertxInternals.byteBuf(b).nioBuffer(0, n));
        } catch (RuntimeException | Error e) { // no direct memory left: OUT_OF_MEMORY, not a lost thread
          error = e;
        }
        Buffer filled = b;
        Throwable failure = error;
        caller.runOnContext(v -> filled(k, filled, failure));
      });
    }
  }

  // On the caller's context: chunk k is filled; what is ready goes out in order.
  private void filled(long k, Buffer b, Throwable error) {
    copying--;
    if (error != null) {
      fail(error);
      return;
    }
    if (failed) {
      settle();
      return;
    }
    ready.put(k, b);
    while (ready.containsKey(nextWrite)) {
      Buffer chunk = ready.remove(nextWrite);
      int n = bytes(nextWrite++);
      writing++;
      socket.write(chunk.length() == n ? chunk : chunk.slice(0, n)).onComplete(w -> {
        writing--;
        idle.push(chunk);
        if (w.failed()) {
          fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream failed: " + w.cause().getMessage()));
        } else {
          fill();
        }
      });
    }
  }

  private int bytes(long k) {
    return (int) Math.min(CHUNK, total - k * CHUNK);
  }

  // A download's frame of n bytes: its pieces are gathered as they arrive, then read on a copy thread.
  private void data(int n) {
    if (n <= 0 || n > total - received || n % host.valueBytes() != 0) {
      fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream sent a frame of " + n + " bytes at "
        + received + " of " + total));
      return;
    }
    segmentAt = received;
    received += n;
    cutter.run(n, segment::add, () -> {
      List<Buffer> pieces = new ArrayList<>(segment);
      segment.clear();
      read(segmentAt, n, pieces);
      cutter.field(1, this::frame);
    });
  }

  private void read(long at, int n, List<Buffer> pieces) {
    copying++;
    if (copying >= RING && !paused) {
      paused = true;
      socket.pause();
    }
    CopyThreads.execute(() -> {
      Throwable error = null;
      try {
        int valueBytes = host.valueBytes();
        if (valueBytes == 1 || pieces.size() == 1) {
          long off = at;
          for (Buffer p : pieces) {
            host.read(VertxInternals.nioBuffer(p), off / valueBytes, p.length() / valueBytes);
            off += p.length();
          }
        } else {
          // Values may straddle the pieces: gathered first.
          ByteBuffer gathered = ByteBuffer.allocate(n);
          for (Buffer p : pieces) {
            gathered.put(VertxInternals.nioBuffer(p));
          }
          gathered.flip();
          host.read(gathered, at / valueBytes, n / valueBytes);
        }
      } catch (RuntimeException | Error e) { // an array too large for the heap: OUT_OF_MEMORY, not a lost thread
        error = e;
      }
      Throwable failure = error;
      caller.runOnContext(v -> {
        copying--;
        if (paused && copying < RING && !failed) {
          paused = false;
          socket.resume();
        }
        if (failure != null) {
          fail(failure);
        } else {
          settle();
        }
      });
    });
  }

  // On the caller's context: the first failure is the transfer's; the stream goes.
  private void fail(Throwable t) {
    if (failed || reported) {
      return;
    }
    failed = true;
    cause = Failures.toCudaException(t);
    cutter.close();
    if (socket != null) {
      socket.close();
    }
    settle();
  }

  // Reports once: after the node's answer or a failure, when no copy touches the host values.
  private void settle() {
    if (reported || copying > 0 || !failed && !answered) {
      return;
    }
    reported = true;
    sender.vertx().cancelTimer(timer);
    stopWatching.run();
    if (socket != null && !failed) {
      socket.close();
    }
    order.release(this);
    CudaException failure = failed ? cause : null;
    caller.runOnContext(v -> {
      if (failure == null) {
        done.tryComplete();
      } else {
        done.tryFail(failure);
      }
    });
  }
}
