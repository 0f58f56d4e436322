package com.vertxcuda.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.Failures;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Moves {@link HostElements} to or from a buffer in chunks, several in flight, so that the copy on
 * this side overlaps the device's copies and what the transfer holds stays bounded.
 *
 * <p><b>To a device in this JVM</b> (it has a {@link LocalRoutes.Route}) each chunk stages through
 * a transfer buffer the device lends ({@link LocalRoutes.Route#allocateTransferBuffer}: pinned
 * memory on cuda, a slot of the shared region in process isolation), so a value is copied once on
 * the host, in bulk, and the device copies it by DMA with no staging of its own. An upload keeps a
 * ring of at most {@link #RING} chunks of {@link #LOCAL_CHUNK} bytes: chunk k+1 is filled, on
 * {@link #COPY_THREADS} copy threads, while chunk k is on its way to the GPU, and a chunk's buffer
 * is filled again once the device has read it. A download asks for {@link #RING} views at a time
 * and reads each lent reply with bulk gets on the copy threads, then gives the reply's memory
 * back at once. Where the device lends little (a small shared region) chunks shrink so that a ring
 * stays within a fraction of what it may lend; a buffer the device cannot lend now is replaced by
 * heap memory (the device then stages it), so a transfer never fails for want of one.
 *
 * <p><b>To a device on another node</b> chunks are views of at most the client's
 * {@code maxMessageSize} bytes (8 MiB by default) in heap memory, at most {@link #WINDOW} in flight,
 * filled and read on the thread that sends them.
 *
 * <p>It keeps the place of the call that made it: the first chunk is sent as any request is, and
 * until the last is sent the transfer is {@link RequestSender.Held held}, so a request made after it
 * on the same context (or thread) first makes it send all the rest: the chunks already filled (it
 * waits for those a copy thread is filling), then what is left as at most a few pieces of up to
 * {@link #MAX_PIECE} bytes, each one request (an upload's piece copied once into heap memory, which
 * the device stages; a download's piece read from the one buffer the device lends or copies out),
 * so a flush puts a bounded number of requests in flight. Order then holds as for any request; the ring
 * only bounds a transfer nobody is waiting behind. Chunks leave in order, under this object's
 * lock, whichever thread sends them.
 *
 * <p>The future completes once, on the caller's context, when every chunk is done or, after a
 * failure, when no chunk is in flight or being copied any more: by then every borrowed buffer has
 * been given back and the host memory is no longer touched.
 */
final class ChunkedTransfer implements RequestSender.Held {

  /** Views in flight at once to a device on another node. */
  static final int WINDOW = 4;
  /** Chunks at once (being filled, on their way, or being read) to a device in this JVM. */
  static final int RING = 8;
  /** Bytes of a chunk to a device in this JVM, at most. */
  static final int LOCAL_CHUNK = 8 << 20;
  /** Bytes of a chunk to a device in this JVM, at least (however little it may lend). */
  static final int MIN_LOCAL_CHUNK = 64 << 10;
  /**
   * Bytes of a piece, at most: once a later request has made the transfer send all it has left,
   * what no chunk holds yet goes in pieces this large (one heap copy each, staged by the device).
   */
  static final long MAX_PIECE = 1L << 30;
  /** Threads copying between Java memory and lent buffers, for all transfers of this JVM. */
  static final int COPY_THREADS = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2));

  private static final ExecutorService COPIES = copies();

  private final RequestSender sender;
  /** The device's route in this JVM, or null: heap views through the event bus. */
  private final LocalRoutes.Route route;
  private final BufferHandle handle;
  private final HostElements host;
  private final boolean upload;
  private final int per;
  private final long perChunk;
  private final long chunks;
  private final int window;
  /** Whether chunks are copied on the copy threads (local, more than one chunk). */
  private final boolean parallel;
  private final Promise<Void> done;
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
  /** A later request made the transfer send everything; no ring since. */
  private boolean flushed;
  /** The holders the transfer is held among while it has chunks left to send; null otherwise. */
  private Object holders;

  private ChunkedTransfer(RequestSender sender, BufferHandle handle, HostElements host, boolean upload, int maxMessageSize) {
    this.sender = sender;
    this.route = sender.remote() ? null : sender.localRoute();
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.per = host.perDeviceElement(handle.dtype());
    int chunkBytes = route == null ? maxMessageSize : localChunk(route.lendingLimit());
    this.perChunk = Math.max(1, chunkBytes / handle.dtype().size());
    this.chunks = Math.max(1, (handle.length() + perChunk - 1) / perChunk);
    this.window = route == null ? WINDOW : localWindow(route.lendingLimit(), chunkBytes);
    this.parallel = route != null && chunks > 1;
    this.done = VertxInternals.promise(sender.vertx());
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
  static Future<Void> upload(RequestSender sender, BufferHandle target, HostElements host, int maxMessageSize) {
    host.checkFits(target);
    return new ChunkedTransfer(sender, target, host, true, maxMessageSize).start();
  }

  /** Reads {@code source} into {@code host}, which must fit it. */
  static Future<Void> download(RequestSender sender, BufferHandle source, HostElements host, int maxMessageSize) {
    host.checkFits(source);
    return new ChunkedTransfer(sender, source, host, false, maxMessageSize).start();
  }

  private Future<Void> start() {
    synchronized (this) {
      nextStart = 1;
      active = 1;
      // Through request(): whatever other clients hold on this context was made earlier, and goes first.
      if (upload) {
        Buffer first = staging(0);
        try {
          fill(0, first);
        } catch (RuntimeException e) {
          giveBack(first);
          active = 0;
          failed(Failures.toCudaException(e));
        }
        if (!failed) {
          nextSend = 1;
          sendUpload(0, first, true);
        }
      } else {
        sendDownload(0, true);
      }
      if (chunks > 1 && !failed) {
        // Held before the rest of the ring leaves, so a chunk that succeeds at once starts the next.
        RequestSender.hold(this);
        holders = RequestSender.holdersKey();
      }
      pump();
    }
    settle();
    return done.future();
  }

  /** A request is being made after this transfer on its context: the rest goes now, first. */
  @Override
  public void sendHeld() {
    synchronized (this) {
      sendAll();
    }
    settle();
  }

  // Under the lock: sends every chunk left, in order. Chunks already filled (or being filled)
  // go as they are; the rest go as few pieces of at most MAX_PIECE bytes, so a flushed transfer
  // has a bounded number of requests in flight (a small shared region could not take one per chunk).
  private void sendAll() {
    holders = null; // the sender has let go of this holder
    flushed = true;
    if (upload) {
      while (!failed && nextSend < nextStart) {
        drain();
        if (!failed && nextSend < nextStart && !ready.containsKey(nextSend)) {
          // A copy thread is filling it; it sends it (and what follows, ready) when done.
          try {
            wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed(Failures.toCudaException(e));
          }
        }
      }
    }
    // To another node a piece stays one view: messages are bounded by maxMessageSize.
    long perPiece = route == null ? 1 : Math.max(1, MAX_PIECE / (perChunk * handle.dtype().size()));
    while (!failed && nextStart < chunks) {
      long k = nextStart;
      long count = Math.min(perPiece, chunks - k);
      nextStart += count;
      active++;
      if (!upload) {
        sendDownload(k, count, false);
        continue;
      }
      Buffer heap = VertxInternals.buffer(Unpooled.wrappedBuffer(new byte[bytes(k, count)]));
      try {
        fill(k, count, heap);
      } catch (RuntimeException e) {
        active--;
        failed(Failures.toCudaException(e));
        break;
      }
      nextSend = nextStart;
      sendUpload(k, count, heap, false);
    }
    release();
  }

  // Under the lock: starts chunks while the ring has room and nobody made the transfer flush.
  private void pump() {
    while (!failed && !flushed && nextStart < chunks && active < window) {
      long k = nextStart++;
      active++;
      if (!upload) {
        sendDownload(k, false);
        continue;
      }
      Buffer b = staging(k);
      if (parallel) {
        COPIES.execute(() -> filled(k, b));
      } else {
        try {
          fill(k, b);
        } catch (RuntimeException e) {
          giveBack(b);
          active--;
          failed(Failures.toCudaException(e));
          return;
        }
        ready.put(k, b);
      }
    }
    if (upload) {
      drain();
    } else if (nextStart == chunks) {
      release();
    }
  }

  // On a copy thread: fills chunk k, then sends what is ready in order.
  private void filled(long k, Buffer b) {
    RuntimeException error = null;
    if (!failed) {
      try {
        fill(k, b);
      } catch (RuntimeException e) {
        error = e;
      }
    }
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
      notifyAll();
    }
    settle();
  }

  // Under the lock: sends an upload's ready chunks in order.
  private void drain() {
    while (!failed && ready.containsKey(nextSend)) {
      long k = nextSend++;
      sendUpload(k, ready.remove(k), false);
    }
    if (nextSend == chunks) {
      release();
    }
  }

  private void sendUpload(long k, Buffer b, boolean first) {
    sendUpload(k, 1, b, first);
  }

  // Sends chunks [k, k + count) from b.
  private void sendUpload(long k, long count, Buffer b, boolean first) {
    int n = bytes(k, count);
    // A view of the buffer's first bytes: the same memory, so the device still finds it lent.
    Object body = new UploadRequest(view(k, count), b.length() == n ? b : b.slice(0, n));
    Future<BufferHandle> reply = first ? sender.request(body) : sender.dispatch(body);
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

  private void sendDownload(long k, boolean first) {
    sendDownload(k, 1, first);
  }

  // Asks for chunks [k, k + count).
  private void sendDownload(long k, long count, boolean first) {
    Object body = new DownloadRequest(view(k, count));
    Future<DownloadReply> reply = first ? sender.request(body) : sender.dispatch(body);
    reply.onComplete(ar -> {
      if (ar.failed()) {
        synchronized (this) {
          active--;
          failed(ar.cause());
        }
        settle();
      } else if (parallel) {
        COPIES.execute(() -> read(k, count, ar.result()));
      } else {
        read(k, count, ar.result());
      }
    });
  }

  // Reads chunk k's reply into the host elements, then gives its memory back to the device.
  private void read(long k, long count, DownloadReply reply) {
    Buffer data = reply.getData();
    RuntimeException error = null;
    if (!failed) {
      // A reply of the wrong size fails the transfer like a failed chunk.
      try {
        long from = k * perChunk;
        int values = Math.toIntExact(Math.min(perChunk * count, handle.length() - from) * per);
        host.read(VertxInternals.byteBuf(data).nioBuffer(), from * per, values);
      } catch (RuntimeException e) {
        error = e;
      }
    }
    if (route != null && data != null) {
      route.releaseTransferBuffer(data);
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

  // Under the lock: a buffer for upload chunk k, from the ring, lent by the device, or on the heap.
  private Buffer staging(long k) {
    Buffer b = idle.poll();
    if (b != null) {
      return b;
    }
    int bytes = Math.toIntExact(chunks == 1 ? handle.byteLength() : perChunk * handle.dtype().size());
    // Past twice the ring (a flush), memory the device lends is left to others.
    if (route != null && bytes > 0 && borrowed.size() < 2 * RING) {
      try {
        b = route.allocateTransferBuffer(bytes);
        borrowed.add(b);
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
    if (borrowed.remove(b)) {
      route.releaseTransferBuffer(b);
    }
  }

  // Under the lock: the first failure wins; ready chunks are never sent.
  private void failed(Throwable t) {
    if (failed) {
      return;
    }
    cause = t;
    failed = true;
    release();
    for (Buffer b : ready.values()) {
      giveBack(b);
      active--;
    }
    ready.clear();
    notifyAll();
  }

  // Not under the lock: completes the future once everything is done, or once a failed transfer
  // has nothing in flight.
  private void settle() {
    Throwable failure;
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
    if (failure == null) {
      done.tryComplete();
    } else {
      done.tryFail(failure);
    }
  }

  private void release() {
    if (holders != null) {
      RequestSender.released(holders, this);
      holders = null;
    }
  }

  private static ExecutorService copies() {
    AtomicInteger n = new AtomicInteger();
    ThreadPoolExecutor pool = new ThreadPoolExecutor(COPY_THREADS, COPY_THREADS, 30, TimeUnit.SECONDS,
      new LinkedBlockingQueue<>(), r -> {
        Thread t = new Thread(r, "vertx-cuda-copy-" + n.incrementAndGet());
        t.setDaemon(true);
        return t;
      });
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }
}
