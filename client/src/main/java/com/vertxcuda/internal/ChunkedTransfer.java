package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.Context;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Moves {@link HostElements} to or from a buffer in chunks, several in flight, so that the copy on
 * this side overlaps the device's copies and what the transfer holds stays bounded.
 *
 * <p><b>To a device in this JVM</b> (it has a {@link LocalRoutes.Route}) each chunk stages through
 * a transfer buffer the device lends ({@link TransferMemory#allocate}: pinned
 * memory on cuda, a slot of the shared region in process isolation), so a value is copied once on
 * the host, in bulk, and the device copies it by DMA with no staging of its own. An upload keeps a
 * ring of at most {@link #RING} chunks of {@link #LOCAL_CHUNK} bytes: chunk k+1 is filled, on
 * the {@link CopyThreads}, while chunk k is on its way to the GPU, and a chunk's buffer
 * is filled again once the device has read it. A download asks for {@link #RING} views at a time
 * and reads each lent reply with bulk gets on the copy threads, then gives the reply's memory
 * back at once. Where the device lends little (a small shared region) chunks shrink so that a ring
 * stays within a fraction of what it may lend; a buffer the device cannot lend now is replaced by
 * heap memory (the device then stages it), so a transfer never fails for want of one.
 *
 * <p><b>Between two devices</b> (a staged copy, {@link #copy}) chunk k is read from the source as
 * a {@link DownloadRequest} of its view and written to the target as an {@link UploadRequest} of
 * its view over the bytes that came back (memory the source lent, given back once the target has
 * them), views of at most {@code maxMessageSize}, {@link #WINDOW} at once; the copy keeps its place
 * in the caller's order until its last write has left, so a request made later on the caller — to
 * either device — follows every read and write of it.
 *
 * <p><b>To a device on another node</b> a transfer larger than {@link BulkTransfer#threshold} takes
 * the node's bulk side channel ({@link BulkTransfer}); a smaller one is one message over the event
 * bus, filled and read on the caller's context.
 *
 * <p>It keeps the place of the call that made it with a {@link CallerOrder.Hold}: when its turn
 * comes its chunks leave in order, under this object's lock, whichever thread sends them, and once
 * the last has left it releases its place; requests made after it on the same context (or thread)
 * wait in the caller's order meanwhile. Nothing is copied, and nothing waits, on the caller's
 * thread for a transfer to a device in this JVM: every chunk is filled and read on the copy threads.
 *
 * <p>The future completes once, on the caller's context, when every chunk is done or, after a
 * failure, when no chunk is in flight or being copied any more: by then every borrowed buffer has
 * been given back and the host memory is no longer touched.
 */
public final class ChunkedTransfer implements CallerOrder.Hold {

  /** A copy's views in flight at once. */
  static final int WINDOW = 4;
  /** Chunks at once (being filled, on their way, or being read) to a device in this JVM. */
  static final int RING = 8;
  /** Bytes of a chunk to a device in this JVM, at most. */
  static final int LOCAL_CHUNK = 8 << 20;
  /** Bytes of a chunk to a device in this JVM, at least (however little it may lend). */
  static final int MIN_LOCAL_CHUNK = 64 << 10;
  /** Bytes below which a transfer to a device in this JVM is copied on the thread that sends it. */
  public static final int INLINE_BYTES = 256 << 10;

  private final RequestSender sender;
  /** A copy's target device and range; null otherwise. */
  private final RequestSender copyTo;
  private final BufferHandle copyTarget;
  /** A copy's writes sent so far. */
  private long written;
  /** What the device in this JVM lends (its route's), or null: heap views through the event bus. */
  private final TransferMemory lent;
  private final BufferHandle handle;
  private final HostElements host;
  private final boolean upload;
  private final int per;
  private final long perChunk;
  private final long chunks;
  private final int window;
  /** Whether chunks are copied on the copy threads (local, more than one chunk). */
  private final boolean parallel;
  private final Promise<Void> done = Promise.promise();
  /** The caller's context (where the future completes) and order (where the transfer has its place). */
  private final Context caller;
  private final CallerOrder order;
  /** An upload's filled buffers, given back or reused once their chunk has succeeded. */
  private final ArrayDeque<Buffer> idle = new ArrayDeque<>();
  /** An upload's filled chunks not yet sent, by index. */
  private final Map<Long, Buffer> ready = new HashMap<>();
  /** Buffers lent by the device and not given back. */
  private final Set<Buffer> borrowed = Collections.newSetFromMap(new IdentityHashMap<>());
  /** The next chunk to start: to fill (upload) or to ask for (download). */
  private long nextStart;
  /** An upload's next chunk to send. */
  private long nextSend;
  /** Chunks started and not done: being filled, ready, on their way, or being read. */
  private int active;
  private long completed;
  private volatile boolean failed;
  private Throwable cause;
  private boolean reported;
  /** Whether an upload's range probe is out: no chunk is sent until it has come back good. */
  private boolean probing;
  /** Whether the transfer still keeps its place in the caller's order (until its last chunk has left). */
  private boolean holding = true;

  private ChunkedTransfer(RequestSender sender, BufferHandle handle, HostElements host, boolean upload, int maxMessageSize) {
    this.sender = sender;
    this.copyTo = null;
    this.copyTarget = null;
    this.lent = lentBy(sender);
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.per = host.perDeviceElement(handle.dtype());
    // To another node only what fits one message comes here (larger goes through BulkTransfer).
    int chunkBytes = lent == null ? maxMessageSize : localChunk(lent.limit());
    this.perChunk = Math.max(1, chunkBytes / handle.dtype().size());
    this.chunks = Math.max(1, (handle.length() + perChunk - 1) / perChunk);
    this.window = lent == null ? WINDOW : localWindow(lent.limit(), chunkBytes);
    this.parallel = lent != null && handle.byteLength() > INLINE_BYTES;
    this.caller = sender.callerContext();
    this.order = sender.order();
  }

  // A copy: reads of source's views from {@code from}, writes of target's views to {@code to}.
  private ChunkedTransfer(RequestSender from, RequestSender to, BufferHandle source, BufferHandle target, int maxMessageSize) {
    this.sender = from;
    this.copyTo = to;
    this.copyTarget = target;
    this.lent = lentBy(from);
    this.handle = source;
    this.host = null;
    this.upload = false;
    this.per = 1;
    this.perChunk = Math.max(1, maxMessageSize / source.dtype().size());
    this.chunks = Math.max(1, (source.length() + perChunk - 1) / perChunk);
    this.window = WINDOW;
    this.parallel = false;
    this.caller = from.callerContext();
    this.order = from.order();
  }

  /** A chunk's bytes for a device that may lend {@code limit} bytes: a ring takes at most a quarter of it. */
  static int localChunk(long limit) {
    long fit = limit / (4L * RING) / 4096 * 4096;
    return (int) Math.max(MIN_LOCAL_CHUNK, Math.min(LOCAL_CHUNK, fit));
  }

  /** Chunks at once for a device that may lend {@code limit} bytes: at most a quarter of it, at least one. */
  static int localWindow(long limit, int chunkBytes) {
    return (int) Math.max(1, Math.min(RING, limit / 4 / chunkBytes));
  }

  /** Writes {@code host}, which must fit {@code target}, into it. */
  public static Future<Void> upload(RequestSender sender, BufferHandle target, HostElements host, int maxMessageSize) {
    host.checkFits(target);
    if (BulkTransfer.takes(sender, target, maxMessageSize)) {
      return BulkTransfer.upload(sender, target, host);
    }
    return new ChunkedTransfer(sender, target, host, true, maxMessageSize).start();
  }

  /** Reads {@code source} into {@code host}, which must fit it. */
  public static Future<Void> download(RequestSender sender, BufferHandle source, HostElements host, int maxMessageSize) {
    host.checkFits(source);
    if (BulkTransfer.takes(sender, source, maxMessageSize)) {
      return BulkTransfer.download(sender, source, host);
    }
    return new ChunkedTransfer(sender, source, host, false, maxMessageSize).start();
  }

  /**
   * Copies {@code source} (read from {@code from}'s device) into {@code target} (written on
   * {@code to}'s), same dtype and length, staged through this JVM in views of {@code maxMessageSize}.
   */
  public static Future<Void> copy(RequestSender from, RequestSender to, BufferHandle source, BufferHandle target,
                           int maxMessageSize) {
    return new ChunkedTransfer(from, to, source, target, maxMessageSize).start();
  }

  // What the device of {@code sender} lends when it is in this JVM; null for one reached over the event bus.
  private static TransferMemory lentBy(RequestSender sender) {
    LocalRoutes.Route route = sender.remote() ? null : sender.localRoute();
    return route == null ? null : route.transferMemory();
  }

  // Takes the transfer's place in the caller's order; it starts when its turn comes.
  private Future<Void> start() {
    // A local transfer's chunks may be sent from any thread (the copy threads); a remote one's — and
    // a copy's, whose writes may cross the event bus — leave from the caller's context, where the
    // event bus keeps their order.
    // Behind a new node's policy read where either end is another node's.
    (copyTo != null && copyTo.remote() ? copyTo : sender).hold(order, caller, lent != null && copyTo == null, this);
    return done.future();
  }

  /** Everything made before this transfer on its caller has been sent: its chunks go now. */
  @Override
  public void turn() {
    boolean probe;
    synchronized (this) {
      // An upload of several chunks writes none before its whole range is known good (below).
      probe = upload && chunks > 1;
      if (probe) {
        probing = true;
        active++;
      }
      pump();
    }
    if (probe) {
      probeRange();
    }
    settle();
  }

  /**
   * What checks a range before the first of its pieces is written: one element at its end, read in
   * the transfer's place. A handle that claims more than its buffer holds (or has no right to it, or
   * names a freed one) is refused there, so a refused upload writes nothing; its pieces alone would
   * each be checked on their own, and those inside the buffer written before one past its end is refused.
   */
  static DownloadRequest rangeProbe(BufferHandle range) {
    return new DownloadRequest(range.view(range.length() - 1, 1));
  }

  // Sent before any chunk, filled meanwhile; the chunks go once it has come back.
  private void probeRange() {
    Future<DownloadReply> probe;
    try {
      probe = sender.dispatch(rangeProbe(handle), caller, order);
    } catch (RuntimeException | Error e) {
      probe = Future.failedFuture(Failures.toCudaException(e));
    }
    probe.onComplete(ar -> {
      if (ar.succeeded() && lent != null) {
        lent.release(ar.result().getData());
      }
      synchronized (this) {
        active--;
        probing = false;
        if (ar.failed()) {
          failed(ar.cause());
        } else {
          // The probe's place in the window is free now (a window of one chunk started none meanwhile).
          pump();
        }
      }
      settle();
    });
  }

  // Under the lock: starts chunks while the ring has room.
  private void pump() {
    while (!failed && nextStart < chunks && active < window) {
      long k = nextStart++;
      active++;
      if (copyTo != null) {
        sendCopy(k);
        continue;
      }
      if (!upload) {
        sendDownload(k);
        continue;
      }
      if (parallel) {
        // Its buffer is found (or lent, which may allocate) and filled on a copy thread.
        Buffer reused = idle.poll();
        CopyThreads.execute(() -> {
          Buffer b;
          try {
            b = reused != null ? reused : staging(k);
          } catch (RuntimeException | Error e) {
            // No memory for the chunk (a heap array the JVM could not make): the transfer fails, once.
            filled(k, null, e);
            return;
          }
          filled(k, b);
        });
      } else {
        Buffer b = null;
        try {
          b = staging(k);
          fill(k, b);
        } catch (RuntimeException | Error e) {
          // No memory for the chunk, or its copy failed: the transfer fails, once.
          if (b != null) {
            giveBack(b);
          }
          active--;
          failed(Failures.toCudaException(e));
          return;
        }
        ready.put(k, b);
      }
    }
    if (upload) {
      drain();
    }
  }

  // On a copy thread: fills chunk k, spread over the copy threads, then sends what is ready in order.
  private void filled(long k, Buffer b) {
    if (failed) {
      filled(k, b, null);
      return;
    }
    ByteBuffer le;
    int values;
    try {
      long from = k * perChunk;
      values = Math.toIntExact(Math.min(perChunk, handle.length() - from) * per);
      le = VertxInternals.byteBuf(b).nioBuffer(0, bytes(k));
    } catch (RuntimeException | Error e) {
      filled(k, b, e);
      return;
    }
    host.write(k * perChunk * per, values, le, error -> filled(k, b, error));
  }

  // On the thread that filled its last piece: chunk k is in b (or failed to be).
  private void filled(long k, Buffer b, Throwable error) {
    synchronized (this) {
      if (failed || error != null) {
        giveBack(b);
        active--;
        if (error != null) {
          failed(Failures.toCudaException(error));
        }
      } else {
        ready.put(k, b);
        drain();
      }
    }
    settle();
  }

  // Under the lock: sends an upload's ready chunks in order.
  private void drain() {
    while (!failed && !probing && ready.containsKey(nextSend)) {
      long k = nextSend++;
      sendUpload(k, ready.remove(k));
    }
  }

  private void sendUpload(long k, Buffer b) {
    sendUpload(k, 1, b);
  }

  // Sends chunks [k, k + count) from b.
  private void sendUpload(long k, long count, Buffer b) {
    int n = bytes(k, count);
    // A view of the buffer's first bytes: the same memory, so the device still finds it lent.
    Object body = new UploadRequest(view(k, count), b.length() == n ? b : b.slice(0, n));
    Future<BufferHandle> reply = sender.dispatch(body, caller, order);
    reply.onComplete(ar -> {
      synchronized (this) {
        active--;
        if (ar.succeeded() && !failed) {
          // The device has read it: the buffer fills a later chunk.
          if (count == 1) {
            idle.push(b);
          }
          completed += count;
          pump();
        } else {
          giveBack(b);
          if (ar.failed()) {
            failed(ar.cause());
          }
        }
      }
      settle();
    });
  }

  private void sendDownload(long k) {
    sendDownload(k, 1);
  }

  // Asks for chunks [k, k + count).
  private void sendDownload(long k, long count) {
    Object body = new DownloadRequest(view(k, count));
    Future<DownloadReply> reply = sender.dispatch(body, caller, order);
    reply.onComplete(ar -> {
      if (ar.failed()) {
        synchronized (this) {
          active--;
          failed(ar.cause());
        }
        settle();
      } else if (parallel) {
        CopyThreads.execute(() -> read(k, count, ar.result()));
      } else {
        read(k, count, ar.result());
      }
    });
  }

  // A copy's chunk k: read from the source, then written to the target over the bytes read.
  private void sendCopy(long k) {
    Future<DownloadReply> read = sender.dispatch(new DownloadRequest(view(k, 1)), caller, order);
    read.onComplete(ar -> {
      if (ar.failed()) {
        synchronized (this) {
          active--;
          failed(ar.cause());
        }
        settle();
        return;
      }
      Buffer data = ar.result().getData();
      Future<BufferHandle> write;
      synchronized (this) {
        if (failed) {
          active--;
          write = null;
        } else {
          // Writes leave in chunk order: reads may complete out of order, but each write's place on
          // the target only matters against later requests, which wait for the last write to leave.
          written++;
          long from = k * perChunk;
          BufferHandle into = chunks == 1 ? copyTarget : copyTarget.view(from, Math.min(perChunk, copyTarget.length() - from));
          write = copyTo.dispatch(new UploadRequest(into, data), caller, order);
        }
      }
      if (write == null) {
        giveBack(data);
        settle();
        return;
      }
      settle();
      write.onComplete(w -> {
        // The target has the bytes (or failed): the source's lent memory goes back.
        giveBack(data);
        synchronized (this) {
          active--;
          if (w.failed()) {
            failed(w.cause());
          } else if (!failed) {
            completed++;
            pump();
          }
        }
        settle();
      });
    });
  }

  // Reads chunk k's reply into the host elements, spread over the copy threads (a transfer of at
  // most INLINE_BYTES whole on this thread), then gives its memory back to the device.
  private void read(long k, long count, DownloadReply reply) {
    Buffer data = reply.getData();
    if (failed) {
      read(count, data, null);
      return;
    }
    ByteBuffer le;
    int values;
    try {
      long from = k * perChunk;
      values = Math.toIntExact(Math.min(perChunk * count, handle.length() - from) * per);
      le = VertxInternals.byteBuf(data).nioBuffer();
    } catch (RuntimeException e) {
      read(count, data, e);
      return;
    }
    // A reply of the wrong size fails the transfer like a failed chunk.
    host.read(le, k * perChunk * per, values, error -> read(count, data, error));
  }

  // On the thread that read the last piece: the chunks' lent memory goes back, and the ring moves on.
  private void read(long count, Buffer data, Throwable error) {
    if (lent != null && data != null) {
      lent.release(data);
    }
    synchronized (this) {
      active--;
      if (error != null) {
        failed(Failures.toCudaException(error));
      } else if (!failed) {
        completed += count;
        pump();
      }
    }
    settle();
  }

  private BufferHandle view(long k) {
    return view(k, 1);
  }

  private BufferHandle view(long k, long count) {
    long from = k * perChunk;
    return chunks == 1 ? handle : handle.view(from, Math.min(perChunk * count, handle.length() - from));
  }

  // Any thread: a buffer for upload chunk k, from the ring, lent by the device, or on the heap.
  private Buffer staging(long k) {
    Buffer b;
    synchronized (this) {
      b = idle.poll();
    }
    if (b != null) {
      return b;
    }
    int bytes = Math.toIntExact(chunks == 1 ? handle.byteLength() : perChunk * handle.dtype().size());
    if (lent != null && bytes > 0) {
      try {
        b = lent.allocate(bytes);
        synchronized (this) {
          borrowed.add(b);
        }
        if (b.length() < bytes) {
          b.setByte(bytes - 1, (byte) 0); // its length is its room: chunks are filled through an NIO view
        }
        return b;
      } catch (RuntimeException notNow) {
        // not ready, or it lends no more now: the heap, which the device stages itself
      }
    }
    return VertxInternals.buffer(Unpooled.wrappedBuffer(new byte[bytes]));
  }

  // Copies upload chunk k into the start of b, in bulk.
  private void fill(long k, Buffer b) {
    fill(k, 1, b);
  }

  // Copies upload chunks [k, k + count) into the start of b, in bulk.
  private void fill(long k, long count, Buffer b) {
    long from = k * perChunk;
    long n = Math.min(perChunk * count, handle.length() - from);
    host.write(from * per, Math.toIntExact(n * per), VertxInternals.byteBuf(b).nioBuffer(0, bytes(k, count)));
  }

  private int bytes(long k) {
    return bytes(k, 1);
  }

  private int bytes(long k, long count) {
    return Math.toIntExact(Math.min(perChunk * count, handle.length() - k * perChunk) * handle.dtype().size());
  }

  // Under the lock (any thread): a buffer the device lent goes back to it.
  private void giveBack(Buffer b) {
    if (copyTo != null) {
      // A copy's read: memory the source lent when it is in this JVM (pinned, a region slot).
      if (lent != null && b != null) {
        lent.release(b);
      }
    } else if (borrowed.remove(b)) {
      lent.release(b);
    }
  }

  // Under the lock: the first failure wins; ready chunks are never sent.
  private void failed(Throwable t) {
    if (failed) {
      return;
    }
    cause = t;
    failed = true;
    for (Buffer b : ready.values()) {
      giveBack(b);
      active--;
    }
    ready.clear();
  }

  // Not under the lock: completes the future once everything is done, or once a failed transfer
  // has nothing in flight.
  private void settle() {
    Throwable failure;
    boolean release;
    synchronized (this) {
      release = holding && (failed || (copyTo != null ? written : upload ? nextSend : nextStart) == chunks);
      if (release) {
        holding = false;
      }
    }
    if (release) {
      // Outside the lock: what waits behind the transfer may be sent from this thread now.
      order.release(this);
    }
    synchronized (this) {
      if (reported || failed && active > 0 || !failed && completed < chunks) {
        return;
      }
      reported = true;
      failure = cause;
      for (Buffer b : idle) {
        giveBack(b);
      }
      idle.clear();
    }
    // On the caller's context, in a task of its own.
    caller.runOnContext(v -> {
      if (failure == null) {
        done.tryComplete();
      } else {
        done.tryFail(failure);
      }
    });
  }
}
