package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceInfo;
import io.netty.buffer.Unpooled;
import io.vertx.core.AsyncResult;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * An upload or download to a device on another node larger than {@link #BULK_BYTES}, over the node's
 * bulk side channel ({@link BulkServer}; {@link BulkWire} says the bytes): one transfer on a
 * connection of the node's pool ({@link BulkChannels}, TLS when the event bus is), the bytes
 * pipelined at the network's pace instead of event-bus messages.
 *
 * <p>It keeps its place in the caller's order ({@link CallerOrder.Hold}) until it is done. When its
 * turn comes, the stream must also come after every request the caller sent the device's node before
 * over the event bus: when the node has answered them all ({@link CallerOrder#unsettledAt}), they have
 * passed its admission and the stream starts at once; otherwise a describe to each address that has
 * requests of the caller unanswered (timed out at the caller, say) or held behind a first use — the
 * device's, a library's, another device's of the node: the event bus orders a sender's messages per
 * address only — sent behind them there and answered by that address's admission after them, is
 * the barrier it waits for (bounded by the sender's timeout and the node's leaving). Then it takes a
 * connection from the node's pool (a describe names the channel when the pool has none open). An
 * upload's chunks are the units of a {@link Pump}: filled on the copy threads ({@link #RING} direct
 * buffers of {@link #CHUNK} bytes at once, each reused once the socket has written it, and kept with
 * the connection for its next upload), written in order; a download's segments are read into the
 * host values on the copy threads as they arrive,
 * the socket paused while {@link #RING} wait. Everything else runs on the pool's context for the node
 * ({@link BulkChannels.Node#context}).
 *
 * <p>The future completes once, on the caller's context, after the node's one answer (DONE, or FAIL
 * with its code), the stream's end (CONTEXT_LOST), the node leaving the cluster (CONTEXT_LOST) or the
 * sender's timeout (TIMEOUT) — and only once no copy touches the host values any more. Only a
 * connection whose transfer answered DONE goes back to the pool.
 */
public final class BulkTransfer implements CallerOrder.Hold {

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
  private final String nodeId;
  private final BulkChannels.Node node;
  /** Where the transfer runs once its turn has come: its node's pool's context. */
  private final Context home;
  private final Promise<Void> done = Promise.promise();
  private final long total;
  private final int per;
  private final BulkWire.Cutter cutter = new BulkWire.Cutter();
  private BulkChannels.Channel channel;
  private long timer = -1;
  private Runnable stopWatching = () -> { };
  private CudaException cause;
  private boolean failed;
  private boolean reported;
  private boolean answered;
  /** A download's reads running on the copy threads. */
  private int copying;
  /** An upload's chunks (its buffers are the connection's, BulkChannels.Channel#ring), and whether it has settled. */
  private Pump pump;
  private boolean pumped;
  // A download's bytes received, and the segment being received.
  private long received;
  private final List<Buffer> segment = new ArrayList<>();
  private long segmentAt;
  private boolean paused;
  /** When the sender's timeout runs out (nanoTime), from the transfer's turn: the node gets what is left. */
  private long deadline;

  private BulkTransfer(RequestSender sender, BufferHandle handle, HostElements host, boolean upload) {
    this.sender = sender;
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.caller = sender.callerContext();
    this.order = sender.order();
    this.nodeId = Addresses.nodeOf(sender.address());
    this.node = CudaRuntime.of(sender.vertx()).bulkChannels().node(nodeId);
    this.home = node.context;
    this.total = handle.byteLength();
    this.per = host.perDeviceElement(handle.dtype());
  }

  /** Bytes above which a transfer to another node takes the side channel. */
  public static long threshold(int maxMessageSize) {
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
    sender.hold(order, caller, false, this);
    return done.future();
  }

  /** Everything made before it on its caller has been sent (on the caller's thread or context). */
  @Override
  public void turn() {
    long deadline = System.nanoTime() + sender.timeoutMillis() * 1_000_000;
    this.deadline = deadline;
    // Watched from now: barriers held behind a first use must not stretch the caller's timeout.
    home.runOnContext(v -> watch(deadline));
    Set<String> unsettled = order.unsettledAt(nodeId);
    if (unsettled.isEmpty()) {
      home.runOnContext(v -> begin(deadline, null));
      return;
    }
    // Barriers, sent from the caller's place: a describe to each address of the node with requests
    // not yet answered (timed out at the caller, say) or held behind a first use. The event bus keeps
    // a sender's order per address, and each address's admission answers a describe after what
    // reached it before, so once all are answered the stream comes after every one of them there.
    Future<DeviceInfo> own = null;
    List<Future<DeviceInfo>> barriers = new ArrayList<>();
    for (String address : unsettled) {
      RequestSender to = address.equals(sender.address()) ? sender
        : new RequestSender(sender.vertx(), address, sender.timeoutMillis());
      Future<DeviceInfo> barrier = to.dispatch(new DescribeRequest(), caller, order);
      barriers.add(barrier);
      if (to == sender) {
        own = barrier;
      }
    }
    Future<DeviceInfo> described = own;
    // A failure the node sent (no device at that address, say) answers a barrier as well as a
    // describe; a timeout or the node's leaving does not.
    Future.join(barriers).onComplete(x -> home.runOnContext(v -> {
      for (Future<DeviceInfo> b : barriers) {
        if (b.failed() && !RequestSender.answeredByTheNode(b.cause())) {
          begin(deadline, b);
          return;
        }
      }
      begin(deadline, described != null && described.succeeded() ? described : null);
    }));
  }

  // On home, once: the transfer's deadline and its node's leaving answer it from now on.
  private void watch(long deadline) {
    if (timer >= 0) {
      return;
    }
    long timeout = sender.timeoutMillis();
    timer = sender.vertx().setTimer(Math.max(1, (deadline - System.nanoTime()) / 1_000_000), id -> fail(new CudaException(
      FailureCode.TIMEOUT, "the bulk transfer did not finish within " + timeout + " ms")));
    stopWatching = sender.onNodeLeft(() -> home.runOnContext(v -> fail(new CudaException(FailureCode.CONTEXT_LOST,
      "node " + nodeId + " left the cluster"))));
  }

  // On home: the stream is behind everything the caller sent before (a barrier's answer, when it
  // needed one: {@code described}); it takes a connection.
  private void begin(long deadline, AsyncResult<DeviceInfo> described) {
    watch(deadline);
    if (failed) {
      return; // answered already (its deadline, the node's leave) while the barriers were out
    }
    if (described == null && node.address() != null) {
      acquire();
      return;
    }
    Future<DeviceInfo> info;
    if (described != null) {
      info = described.succeeded() ? Future.succeededFuture(described.result()) : Future.failedFuture(described.cause());
    } else {
      // No connection is open to the node: a device names its channel. No barrier is at stake here:
      // nothing this caller sent the node is unanswered, and it sends nothing more while the
      // transfer holds its place.
      info = sender.dispatch(new DescribeRequest(), home, order);
    }
    info.compose(i -> node.learn(i.getBulkAddress())).onComplete(ar -> {
      if (ar.failed()) {
        fail(ar.cause());
      } else {
        acquire();
      }
    });
  }

  private void acquire() {
    if (failed) {
      return;
    }
    node.acquire().onComplete(ar -> {
      if (ar.failed()) {
        fail(ar.cause());
      } else if (failed) {
        node.release(ar.result(), true); // unused: the next transfer takes it
      } else {
        opened(ar.result());
      }
    });
  }

  private void opened(BulkChannels.Channel c) {
    channel = c;
    c.user(b -> {
      try {
        cutter.feed(b);
      } catch (RuntimeException e) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream is malformed: " + e.getMessage()));
      }
    }, t -> {
      // After the node's answer, only this side's copies may still fail the transfer.
      if (!answered) {
        fail(new CudaException(FailureCode.CONTEXT_LOST, t == null ? "the bulk stream to node " + nodeId
          + " was cut before its answer" : "the bulk stream failed: " + t.getMessage()));
      }
    });
    // The time left, not the whole timeout: the node gives its segments no more, so none lands after
    // this side answered TIMEOUT and the caller sent on.
    c.socket.write(BulkWire.header(upload, handle, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
    cutter.field(1, this::frame);
    if (upload) {
      // Every event of the pump comes on home: fills hand their chunk over there, writes complete there.
      pump = new Pump(Math.max(1, (total + CHUNK - 1) / CHUNK), RING, true, this::fill, this::write, c.ring::push,
        home, t -> {
          if (t != null) {
            fail(t);
          }
        }, t -> {
          pumped = true;
          settle();
        });
      pump.start();
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

  // On home: an upload's chunk k, filled on a copy thread into a buffer of the connection's ring (or a
  // new one), then handed to the pump on home.
  private void fill(long k) {
    Buffer reused = pump.reuse();
    Buffer ring = reused != null ? reused : channel.ring.poll();
    CopyThreads.execute(() -> {
      Buffer b = ring;
      Throwable error = null;
      try {
        if (b == null) {
          b = VertxInternals.buffer(Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(CHUNK)));
        }
        int n = bytes(k);
        long from = k * CHUNK / handle.dtype().size() * per;
        host.write(from, n / handle.dtype().size() * per, VertxInternals.byteBuf(b).nioBuffer(0, n));
      } catch (RuntimeException | Error e) { // no direct memory left: OUT_OF_MEMORY, not a lost thread
        error = Failures.toCudaException(e);
      }
      Buffer filled = b;
      Throwable failure = error;
      home.runOnContext(v -> pump.staged(k, filled, failure));
    });
  }

  // On home, in order: chunk k goes on the stream; once written, its buffer fills a later chunk.
  private void write(long k, Buffer chunk) {
    int n = bytes(k);
    BulkWire.write(channel.socket, chunk.length() == n ? chunk : chunk.slice(0, n)).onComplete(w -> pump.sent(k, chunk,
      w.failed() ? new CudaException(FailureCode.CONTEXT_LOST, "the bulk stream failed: " + w.cause().getMessage()) : null));
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
      channel.socket.pause();
    }
    CopyThreads.execute(() -> {
      Throwable error = null;
      try {
        readPieces(host, at, pieces);
      } catch (RuntimeException | Error e) { // an array too large for the heap: OUT_OF_MEMORY, not a lost thread
        error = e;
      }
      Throwable failure = error;
      home.runOnContext(v -> {
        copying--;
        if (paused && copying < RING && !failed && !answered) {
          paused = false;
          channel.socket.resume();
        }
        if (failure != null) {
          fail(failure);
        } else {
          settle();
        }
      });
    });
  }

  /**
   * Reads {@code pieces} (a frame as Netty cut it, whole values in all) into {@code host} from byte
   * {@code at}: each piece's whole values straight from its memory, a value split across two pieces
   * through a carry of one value's bytes, so nothing is gathered into a copy of the frame first.
   */
  static void readPieces(HostElements host, long at, List<Buffer> pieces) {
    int valueBytes = host.valueBytes();
    ByteBuffer carry = ByteBuffer.allocate(valueBytes);
    long off = at;
    for (Buffer p : pieces) {
      ByteBuffer b = VertxInternals.nioBuffer(p);
      if (carry.position() > 0) {
        int take = Math.min(valueBytes - carry.position(), b.remaining());
        carry.put(b.duplicate().limit(b.position() + take));
        b.position(b.position() + take);
        if (carry.hasRemaining()) {
          continue;
        }
        carry.flip();
        host.read(carry, off / valueBytes, 1);
        off += valueBytes;
        carry.clear();
      }
      int whole = b.remaining() / valueBytes * valueBytes;
      if (whole > 0) {
        host.read(b.duplicate().limit(b.position() + whole), off / valueBytes, whole / valueBytes);
        off += whole;
        b.position(b.position() + whole);
      }
      carry.put(b);
    }
    if (carry.position() > 0) {
      throw new IllegalStateException("a frame ended inside a value: " + carry.position() + " of its " + valueBytes
        + " bytes came");
    }
  }

  // On home: the first failure is the transfer's; its connection is closed, never reused.
  private void fail(Throwable t) {
    if (failed || reported) {
      return;
    }
    failed = true;
    cause = Failures.toCudaException(t);
    cutter.close();
    if (channel != null) {
      node.release(channel, false);
    }
    if (pump != null) {
      pump.fail(cause);
    }
    settle();
  }

  // Reports once: after the node's answer or a failure, when no copy touches the host values (an
  // upload's pump has settled, a download's reads are done). A connection whose transfer answered
  // DONE goes back to the pool.
  private void settle() {
    if (reported || copying > 0 || pump != null && !pumped || !failed && !answered) {
      return;
    }
    reported = true;
    sender.vertx().cancelTimer(timer);
    stopWatching.run();
    if (channel != null && !failed) {
      node.release(channel, true);
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
