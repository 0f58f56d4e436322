package com.vertxcuda.internal;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * One connection to a node's bulk side channel ({@link BulkServer}): transfers one after another
 * ({@link BulkWire}), each answered once (DONE or FAIL); after a FAIL it carries nothing more. A
 * transfer's segments are the units of a {@link Pump}: an upload's are received from the stream,
 * filled into memory the device lends as the pump's other uploads are
 * ({@link ChunkedTransfer#stageUpload}) and sent to the device through its local route in order; a
 * download's views are read from the device, a few at a time, and written to the stream in order,
 * each returned to the device once written.
 *
 * <p>A transfer is proven before a byte of its payload is kept or read: once its header is read, the
 * socket is paused and the device checks the handle's token and range ({@link ChunkedTransfer#rangeProbe});
 * until it has answered, the connection's idle limit ({@link BulkServer#IDLE_MILLIS}) and read-idle
 * timeout ({@link BulkServer#READ_IDLE_MILLIS}) hold, not the client's timeout. A refused header (a
 * forged token, a freed buffer, a range past its end, a malformed header, the server's byte budget
 * spent) is answered with one FAIL and the end of the stream, and the connection is closed within
 * {@link #LINGER_MILLIS} ({@link #refuse}). A proven upload takes its
 * bytes from the server's budget ({@link BulkServer#reserve}) for as long as it may hold them; the
 * reading socket is paused while {@link BulkServer#WINDOW} segments are on their way, so a connection
 * never holds more than that. The device still checks the handle and its token on every segment.
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

  /** Bytes that may arrive after a header before its token is proven: the rest of one read, in practice. */
  private static final int MAX_EARLY_BYTES = 1 << 20;
  /** How long a refused connection is read (and what it sends dropped) after its FAIL, at most, in ms. */
  static final long LINGER_MILLIS = 2_000;

  private final Vertx vertx;
  private final NetSocket socket;
  private final BulkServer server;
  private final Runnable onClose;
  private final BulkWire.Cutter cutter = new BulkWire.Cutter();
  private final CallerOrder order = CallerOrder.separate();
  private boolean closed;
  private boolean failed;
  /** While no transfer is proven, the idle limit; while one is, its deadline. */
  private long timer = -1;
  private Transfer transfer;
  /** Whether the node waits for the client's bytes (a header begun, an upload's payload not paused). */
  private boolean reading;
  private long lastRead;
  private long readTimer = -1;

  /** {@code onClose} runs once, when the socket has closed. */
  BulkConnection(Vertx vertx, NetSocket socket, BulkServer server, Runnable onClose) {
    this.vertx = vertx;
    this.socket = socket;
    this.server = server;
    this.onClose = onClose;
  }

  void start() {
    socket.handler(b -> {
      lastRead = System.nanoTime();
      if (transfer == null && !failed) {
        reading(true); // a header begins
      }
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
      vertx.cancelTimer(readTimer);
      if (transfer != null) {
        transfer.cut(new CudaException(FailureCode.CONTEXT_LOST, "the stream closed"));
      }
      onClose.run();
    });
    socket.exceptionHandler(t -> LOG.log(System.Logger.Level.DEBUG, "bulk stream: " + t));
    next();
  }

  // Waits for the next transfer's header, at most BulkServer.IDLE_MILLIS until it is proven.
  private void next() {
    transfer = null;
    reading = false;
    if (closed) {
      return;
    }
    vertx.cancelTimer(timer);
    timer = vertx.setTimer(BulkServer.IDLE_MILLIS, id -> socket.close());
    cutter.field(BulkWire.HEADER, this::header);
  }

  // The node waits for the client's bytes from now (true) or not (false): while it does, a client that
  // sends nothing for BulkServer.READ_IDLE_MILLIS is answered TIMEOUT.
  private void reading(boolean on) {
    if (on && !reading) {
      lastRead = System.nanoTime();
    }
    reading = on;
    if (on && readTimer < 0) {
      readTimer = vertx.setTimer(BulkServer.READ_IDLE_MILLIS, id -> readIdle());
    }
  }

  private void readIdle() {
    readTimer = -1;
    if (!reading || failed || closed) {
      return;
    }
    long idle = (System.nanoTime() - lastRead) / 1_000_000;
    if (idle >= BulkServer.READ_IDLE_MILLIS) {
      fail(new CudaException(FailureCode.TIMEOUT, "the bulk stream sent nothing for " + idle + " ms"));
    } else {
      readTimer = vertx.setTimer(BulkServer.READ_IDLE_MILLIS - idle, id -> readIdle());
    }
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
    LocalRoutes.Route route = CudaRuntime.of(vertx).routes().get(address);
    if (route == null || !handle.node().equals(Nodes.self(vertx))) {
      fail(new CudaException(FailureCode.CONTEXT_LOST, "no device of this node serves " + address));
      return;
    }
    // Not an owner yet: nothing more is read, and the idle limit holds, until the device has checked
    // the handle's token and range.
    reading = false;
    socket.pause();
    cutter.hold(MAX_EARLY_BYTES);
    transfer = new Transfer(handle, route.transferMemory(), address, upload, timeout);
    transfer.prove();
  }

  // The transfer's answer: DONE, and the connection waits for the next.
  private void succeed() {
    socket.write(BulkWire.doneFrame());
    next();
  }

  // The failure of the transfer (or of a header): one FAIL, and the connection carries nothing more.
  // A refused one (no transfer proven) is closed once the FAIL is written. A proven transfer's client
  // closes it once it has read why (it may still be writing its upload, and closing on unread bytes
  // resets the connection); what still arrives is dropped, and a client that never closes is closed
  // after a while.
  private void fail(Throwable t) {
    if (failed) {
      return;
    }
    failed = true;
    reading = false;
    vertx.cancelTimer(timer);
    vertx.cancelTimer(readTimer);
    cutter.close();
    boolean proven = transfer != null && transfer.proven;
    if (transfer != null) {
      transfer.answered = true;
      transfer.cut(t);
    }
    if (closed) {
      return;
    }
    if (!proven) {
      refuse(vertx, socket, t);
      return;
    }
    socket.write(BulkWire.failFrame(t));
    socket.resume();
    timer = vertx.setTimer(BulkServer.IDLE_MILLIS, id -> socket.close());
  }

  /**
   * Refuses what {@code socket} carries: one FAIL, then the end of what the node sends, and the
   * socket closed within {@link #LINGER_MILLIS}. What the peer still sends meanwhile is read and
   * dropped, so it hears the FAIL and the end instead of a reset (a close on unread bytes) that
   * could lose them.
   */
  static void refuse(Vertx vertx, NetSocket socket, Throwable t) {
    socket.handler(b -> { });
    socket.resume();
    socket.write(BulkWire.failFrame(t)).onComplete(ar -> VertxInternals.shutdownOutput(socket));
    vertx.setTimer(LINGER_MILLIS, id -> socket.close());
  }

  /** One transfer on the connection: its segments to or from the device, in order. */
  private final class Transfer {
    private final BufferHandle handle;
    /** What the device lends (its local route's): the segments' size, and where their memory goes back. */
    private final TransferMemory lent;
    private final String address;
    private final boolean upload;
    /** The client's timeout, from its header: it holds once the transfer is proven. */
    private final long timeout;
    /** The client's deadline, as this node reads it: each segment gets the time left, not the whole. */
    private final long deadline;
    private final long segmentBytes;
    private final long segments;
    /** The connection's context: where the device answers its segments, and the pump reports. */
    private final Context context;
    /** The device has checked the handle's token and range. */
    private boolean proven;
    /** Bytes of the server's budget this upload holds. */
    private long reserved;
    private boolean answered;
    /** The segments, once proven; whether it has settled (nothing of it on its way to or from the device). */
    private Pump pump;
    private boolean settled;
    /** An upload's segments received and not done: the socket pauses at {@link BulkServer#WINDOW}. */
    private int held;
    // An upload's segment being received, the next to receive, those received and not yet started,
    // and how many started units wait for theirs.
    private final List<ByteBuf> pieces = new ArrayList<>();
    private long next;
    private final ArrayDeque<Buffer> arrived = new ArrayDeque<>();
    private long nextStaged;
    private int waiting;

    Transfer(BufferHandle handle, TransferMemory lent, String address, boolean upload, long timeout) {
      this.handle = handle;
      this.lent = lent;
      this.address = address;
      this.upload = upload;
      this.timeout = timeout;
      this.deadline = System.nanoTime() + timeout * 1_000_000;
      // Segments of the pump's chunk size (a multiple of 4096 bytes, so of every dtype's size).
      this.segmentBytes = ChunkedTransfer.localChunk(lent.limit());
      this.segments = Math.max(1, (handle.byteLength() + segmentBytes - 1) / segmentBytes);
      this.context = vertx.getOrCreateContext();
    }

    // The device checks the handle's token and its whole range (ChunkedTransfer.rangeProbe), within
    // the time the connection's idle limit allows, before a byte of the payload is kept or read: a
    // refused transfer keeps, writes and reads none.
    private void prove() {
      long left = Math.min(timeout, BulkServer.IDLE_MILLIS);
      new RequestSender(vertx, address, left, order).<DownloadReply>request(ChunkedTransfer.rangeProbe(handle))
        .onComplete(ar -> {
          if (ar.succeeded()) {
            lent.release(ar.result().getData());
          }
          if (answered || closed) {
            return;
          }
          if (ar.failed()) {
            fail(ar.cause());
            return;
          }
          // An upload holds at most its window of segments (the socket pauses past it).
          long holds = upload ? Math.min(handle.byteLength(), BulkServer.WINDOW * segmentBytes) : 0;
          if (holds > 0 && !server.reserve(holds)) {
            fail(new CudaException(FailureCode.QUEUE_FULL, "the bulk side channel holds as many bytes of uploads as it may"));
            return;
          }
          reserved = holds;
          proven = true;
          vertx.cancelTimer(timer);
          long rest = Math.max(1, (deadline - System.nanoTime()) / 1_000_000);
          timer = vertx.setTimer(rest, id -> fail(new CudaException(FailureCode.TIMEOUT,
            "the bulk transfer did not finish within " + timeout + " ms")));
          // A failed segment fails the transfer at once; it is answered DONE once every segment is done.
          // Units' buffers are memory the device lent: an upload's fill later segments, a download's
          // go back once written.
          pump = upload
            ? new Pump(segments, BulkServer.WINDOW, true, this::stageUpload, this::sendUpload, this::giveBack, context,
              this::left, this::settled)
            : new Pump(segments, BulkServer.WINDOW, false, this::ask, this::write, this::giveBack, context,
              this::left, this::settled);
          // Its first units start before a byte is read: an upload's take the segments as they come.
          pump.start();
          if (upload) {
            receive();
            reading(true);
            cutter.release();
            if (!closed && !answered && held < BulkServer.WINDOW) {
              socket.resume();
            }
          } else {
            cutter.release();
            socket.resume();
          }
        });
    }

    private void giveBack(Buffer b) {
      lent.release(b);
    }

    private void left(Throwable failure) {
      if (failure != null) {
        fail(failure);
      }
    }

    // On the connection's context: nothing of the transfer is on its way to or from the device.
    private void settled(Throwable failure) {
      settled = true;
      if (failure == null) {
        succeed();
      }
      giveBackBudget();
    }

    // The transfer failed, or its connection closed: its pump stops, and what it received and did not
    // start is dropped.
    private void cut(Throwable t) {
      pieces.clear();
      arrived.clear();
      if (pump != null) {
        pump.fail(t);
        // Units that wait for segments that will not come are staged as nothing: the pump may settle.
        while (waiting > 0) {
          waiting--;
          pump.staged(nextStaged++, null, null);
        }
      }
      giveBackBudget();
    }

    // The budget this upload took goes back once nothing of it is held: answered (or its connection
    // closed) and its pump settled.
    private void giveBackBudget() {
      if (reserved > 0 && (answered || closed) && (pump == null || settled)) {
        server.unreserve(reserved);
        reserved = 0;
      }
    }

    // An upload's next segment: its pieces as they arrive, then to the pump, in order.
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
        next++;
        held++;
        if (held >= BulkServer.WINDOW) {
          socket.pause();
          reading(false);
        }
        arrived.add(VertxInternals.buffer(Unpooled.compositeBuffer(parts.length).addComponents(true, parts)));
        deliver();
        if (next < segments) {
          receive();
        } else {
          reading(false); // every byte came: what is left is the device's
        }
      });
    }

    // Under the pump's lock, on the connection's context: an upload's unit k takes the next segment
    // received (segments and units both come in order), or waits for it.
    private void stageUpload(long k) {
      waiting++;
      deliver();
    }

    // On the connection's context: segments received go to the units waiting for them.
    private void deliver() {
      while (waiting > 0 && !arrived.isEmpty()) {
        waiting--;
        long k = nextStaged++;
        Buffer bytes = arrived.poll();
        int n = bytes.length();
        ChunkedTransfer.stageUpload(pump, k, lent, (int) Math.min(segmentBytes, handle.byteLength()),
          HostElements.received(bytes), 0, n, n, n > ChunkedTransfer.INLINE_BYTES);
      }
    }

    // In order: segment k to the device, from the start of the buffer it was filled into.
    private void sendUpload(long k, Buffer b) {
      int n = (int) Math.min(segmentBytes, handle.byteLength() - k * segmentBytes);
      Future<BufferHandle> sent;
      try {
        sent = device().dispatch(new UploadRequest(view(k), b.length() == n ? b : b.slice(0, n)), context, order);
      } catch (RuntimeException e) {
        sent = Future.failedFuture(e);
      }
      sent.onComplete(ar -> {
        held--;
        if (!closed && !answered) {
          socket.resume();
          if (next < segments) {
            reading(true);
          }
        }
        pump.sent(k, b, ar.failed() ? ar.cause() : null);
      });
    }

    // A download's view k is asked for as it starts.
    private void ask(long k) {
      Future<DownloadReply> reply;
      try {
        reply = device().dispatch(new DownloadRequest(view(k)), context, order);
      } catch (RuntimeException e) {
        reply = Future.failedFuture(e);
      }
      reply.onComplete(ar -> pump.staged(k, ar.succeeded() ? ar.result().getData() : null, ar.failed() ? ar.cause() : null));
    }

    // In order: view k's bytes on the stream; once written (or the stream is gone), the pump gives the
    // memory the device lent back.
    private void write(long k, Buffer data) {
      socket.write(BulkWire.dataFrame(data.length()));
      BulkWire.write(socket, data).onComplete(ar -> pump.sent(k, data, ar.failed() ? ar.cause() : null));
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
