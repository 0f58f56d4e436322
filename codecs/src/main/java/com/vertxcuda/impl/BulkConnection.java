package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One connection to a node's bulk side channel ({@link BulkServer}): transfers one after another
 * ({@link BulkWire}), each answered once (DONE or FAIL); after a FAIL it carries nothing more. The bytes
 * of an upload go into the device through its local route, by the one pump ({@link ChunkedTransfer}),
 * a segment of the stream at a time, in order; a download's views are read from the device, a few at a
 * time, and written back as they come, each returned to the device once written. The device checks
 * the handle and its token on every segment: a forged token is answered FORBIDDEN (one FAIL frame) and
 * the device serves on. The reading socket is paused while {@link BulkServer#WINDOW} segments are on
 * their way, so a connection never holds more than that.
 *
 * <p>Its requests keep their place in an order of its own ({@link CallerOrder#separate}): a
 * transfer's segments reach the device in order, and transfers on other connections do not wait
 * behind them. No order between connections is needed here: a client starts a stream only once
 * everything its caller sent the device before has passed admission, and its caller's next request
 * only after the stream's answer ({@link BulkTransfer}).
 *
 * <p>On the server's event loop; bytes are copied only on the copy threads.
 */
final class BulkConnection {

  private static final System.Logger LOG = System.getLogger(BulkConnection.class.getName());

  private final Vertx vertx;
  private final NetSocket socket;
  private final BulkWire.Cutter cutter = new BulkWire.Cutter();
  private final CallerOrder order = CallerOrder.separate();
  private boolean closed;
  private boolean failed;
  /** While no transfer runs, the idle limit; while one does, its deadline. */
  private long timer = -1;
  private Transfer transfer;

  BulkConnection(Vertx vertx, NetSocket socket) {
    this.vertx = vertx;
    this.socket = socket;
  }

  void start() {
    socket.handler(b -> {
      try {
        cutter.feed(b);
      } catch (RuntimeException e) {
        fail(new CudaException(FailureCode.BAD_REQUEST, "the bulk stream is malformed: " + e.getMessage()));
      }
    });
    socket.closeHandler(v -> {
      closed = true;
      cutter.close();
      vertx.cancelTimer(timer);
    });
    socket.exceptionHandler(t -> LOG.log(System.Logger.Level.DEBUG, "bulk stream: " + t));
    next();
  }

  // Waits for the next transfer's header, at most BulkServer.IDLE_MILLIS.
  private void next() {
    transfer = null;
    if (closed) {
      return;
    }
    vertx.cancelTimer(timer);
    timer = vertx.setTimer(BulkServer.IDLE_MILLIS, id -> socket.close());
    cutter.field(BulkWire.HEADER, this::header);
  }

  private void header(Buffer fixed) {
    if (fixed.getInt(0) != BulkWire.MAGIC) {
      // Not our protocol: nothing is answered.
      failed = true;
      cutter.close();
      socket.close();
      return;
    }
    boolean upload = fixed.getByte(4) == BulkWire.UPLOAD;
    // The client's timeout, no longer than the server allows: a stream that stops reading must not
    // keep the device's lent memory for ever.
    long timeout = Math.min(fixed.getLong(5), BulkServer.MAX_STREAM_MILLIS);
    int n = fixed.getInt(13);
    if (n <= 0 || n > BulkWire.MAX_HANDLE_BYTES || timeout <= 0) {
      fail(new CudaException(FailureCode.BAD_REQUEST, "the bulk stream's header is malformed"));
      return;
    }
    cutter.field(n, h -> named(upload, timeout, h));
  }

  private void named(boolean upload, long timeout, Buffer bytes) {
    BufferHandle handle;
    try {
      handle = BulkWire.handle(bytes);
      handle.byteLength(); // throws where the handle's length cannot be a byte count
    } catch (RuntimeException e) {
      fail(Failures.toCudaException(e));
      return;
    }
    String address = Addresses.device(handle.node(), handle.device());
    LocalRoutes.Route route = LocalRoutes.of(vertx).get(address);
    if (route == null || !handle.node().equals(Nodes.self(vertx))) {
      fail(new CudaException(FailureCode.CONTEXT_LOST, "no device of this node serves " + address));
      return;
    }
    vertx.cancelTimer(timer);
    timer = vertx.setTimer(timeout, id -> fail(new CudaException(FailureCode.TIMEOUT,
      "the bulk transfer did not finish within " + timeout + " ms")));
    transfer = new Transfer(handle, route, address, System.nanoTime() + timeout * 1_000_000);
    if (upload) {
      transfer.checkRange();
      transfer.receive();
    } else {
      transfer.ask();
    }
  }

  // The transfer's answer: DONE, and the connection waits for the next.
  private void succeed() {
    socket.write(BulkWire.doneFrame());
    next();
  }

  // The failure of the transfer (or of a header): one FAIL, and the connection carries nothing more.
  // The client closes it once it has read why (closing here first could reset the connection
  // before the client reads it).
  private void fail(Throwable t) {
    if (failed) {
      return;
    }
    failed = true;
    vertx.cancelTimer(timer);
    cutter.close();
    if (transfer != null) {
      transfer.answered = true;
      transfer.pieces.clear();
    }
    if (!closed) {
      socket.write(BulkWire.failFrame(t));
      socket.resume();
      // Dropped from here on; a client that never closes is closed after a while.
      timer = vertx.setTimer(BulkServer.IDLE_MILLIS, id -> socket.close());
    }
  }

  /** One transfer on the connection: its segments to or from the device, in order. */
  private final class Transfer {
    private final BufferHandle handle;
    private final LocalRoutes.Route route;
    private final String address;
    /** The client's deadline, as this node reads it: each segment gets the time left, not the whole. */
    private final long deadline;
    private final long segmentBytes;
    private final long segments;
    private boolean answered;
    private long done;
    private int onTheirWay;
    // An upload's segment being received.
    private final List<ByteBuf> pieces = new ArrayList<>();
    private long next;
    // A download's views asked for, in order, and those written.
    private final ArrayDeque<Future<DownloadReply>> asked = new ArrayDeque<>();

    Transfer(BufferHandle handle, LocalRoutes.Route route, String address, long deadline) {
      this.handle = handle;
      this.route = route;
      this.address = address;
      this.deadline = deadline;
      // Segments of the pump's chunk size (a multiple of 4096 bytes, so of every dtype's size).
      this.segmentBytes = ChunkedTransfer.localChunk(route.lendingLimit());
      this.segments = Math.max(1, (handle.byteLength() + segmentBytes - 1) / segmentBytes);
    }

    // An upload of several segments: they go to the device once its whole range is known good
    // (ChunkedTransfer.rangeProbe), so a refused upload writes none of them; received meanwhile.
    private Future<Void> checked = Future.succeededFuture();

    private void checkRange() {
      if (segments > 1) {
        checked = device().<DownloadReply>request(ChunkedTransfer.rangeProbe(handle)).map(probe -> {
          route.releaseTransferBuffer(probe.getData());
          return null;
        });
      }
    }

    // An upload's next segment: its pieces as they arrive, then to the device, in order.
    private void receive() {
      long from = next * segmentBytes;
      cutter.run(Math.min(segmentBytes, handle.byteLength() - from), slice -> {
        if (!answered) {
          pieces.add(VertxInternals.byteBuf(slice));
        }
      }, () -> {
        if (answered) {
          return; // a failed upload's remaining bytes are dropped until the client closes
        }
        ByteBuf[] parts = pieces.toArray(new ByteBuf[0]);
        pieces.clear();
        upload(next++, VertxInternals.buffer(Unpooled.compositeBuffer(parts.length).addComponents(true, parts)));
        if (next < segments) {
          receive();
        }
      });
    }

    private void upload(long k, Buffer bytes) {
      onTheirWay++;
      if (onTheirWay >= BulkServer.WINDOW) {
        socket.pause();
      }
      // In segment order: callbacks of one future run in the order they were added.
      Future<Void> sent = checked.compose(v -> {
        if (answered) {
          // Failed while the probe was out (its deadline, say): what waited behind it is not written.
          return Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, "the bulk transfer was answered"));
        }
        try {
          return ChunkedTransfer.upload(device(), view(k), HostElements.received(bytes), Integer.MAX_VALUE);
        } catch (RuntimeException e) {
          return Future.failedFuture(e);
        }
      });
      sent.onComplete(ar -> {
        onTheirWay--;
        if (ar.failed()) {
          fail(ar.cause());
          return;
        }
        if (!closed) {
          socket.resume();
        }
        if (++done == segments) {
          succeed();
        }
      });
    }

    // A download: views asked for in order, at most WINDOW not yet written.
    private void ask() {
      while (!answered && !closed && next < segments && onTheirWay < BulkServer.WINDOW) {
        onTheirWay++;
        Future<DownloadReply> reply = device().request(new DownloadRequest(view(next++)));
        asked.add(reply);
        reply.onComplete(ar -> write());
      }
    }

    // Writes what has come back, in order.
    private void write() {
      while (!asked.isEmpty() && asked.peek().isComplete()) {
        Future<DownloadReply> head = asked.poll();
        if (head.failed() || answered || closed) {
          if (head.succeeded()) {
            route.releaseTransferBuffer(head.result().getData());
          }
          onTheirWay--;
          fail(head.failed() ? head.cause() : new CudaException(FailureCode.CONTEXT_LOST, "the stream closed"));
          continue;
        }
        Buffer data = head.result().getData();
        socket.write(BulkWire.dataFrame(data.length()));
        BulkWire.write(socket, data).onComplete(ar -> {
          // Written (or the stream is gone): the memory the device lent goes back.
          route.releaseTransferBuffer(data);
          onTheirWay--;
          if (ar.failed()) {
            fail(ar.cause());
          } else if (++done == segments) {
            succeed();
          } else {
            ask();
          }
        });
      }
    }

    // The device, for a segment: in the connection's order, with the time the client has left (a
    // segment that has not reached the GPU when the client gives up never does, so a request the
    // client sends after its TIMEOUT is not overwritten by a late segment of the stream it gave up on).
    private RequestSender device() {
      long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
      return new RequestSender(vertx, address, left, order);
    }

    private BufferHandle view(long k) {
      if (segments == 1) {
        return handle;
      }
      long per = segmentBytes / handle.dtype().size();
      long from = k * per;
      return handle.view(from, Math.min(per, handle.length() - from));
    }

    private void succeed() {
      if (!answered) {
        answered = true;
        BulkConnection.this.succeed();
      }
    }

    private void fail(Throwable t) {
      if (!answered) {
        BulkConnection.this.fail(t);
      }
    }
  }
}
