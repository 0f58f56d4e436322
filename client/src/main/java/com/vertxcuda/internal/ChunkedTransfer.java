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
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

/**
 * Moves {@link HostElements} to or from a buffer in chunks, several in flight, so that the copy on
 * this side overlaps the device's copies and what the transfer holds stays bounded.
 *
 * <p><b>To a device in this JVM</b> (it has a {@link LocalRoutes.Route}) each chunk stages through
 * a transfer buffer the device lends ({@link TransferMemory#allocate}: pinned
 * memory on cuda, a slot of the shared region in process isolation), so a value is copied once on
 * the host, in bulk, and the device copies it by DMA with no staging of its own. An upload keeps a
 * ring of at most {@link #RING} chunks of at most {@link #LOCAL_CHUNK} bytes (a transfer of a few
 * MiB cut in one chunk per copy thread, {@link #SPLIT}): chunk k+1 is filled, on
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
 * <p>Its chunks are the units of a {@link Pump}, which keeps the window, sends them in order and
 * settles; this class says how a chunk is staged and sent. It keeps the place of the call that
 * made it with a {@link CallerOrder.Hold}: when its turn comes its chunks leave in order, under the
 * pump's lock, whichever thread sends them, and once the last has left it releases its place;
 * requests made after it on the same context (or thread) wait in the caller's order meanwhile.
 * Nothing waits on the caller's thread, and nothing of a transfer to a device in this JVM larger
 * than {@link #INLINE_BYTES} is copied there: its chunks are filled and read on the copy threads.
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
  /**
   * Bytes of a chunk, at least, when a transfer to a device in this JVM is cut in {@link #SPLIT}
   * chunks to pipeline it ({@link #localChunk(long, long)}): each chunk is a request of its own, which
   * costs the device a few microseconds whatever its size, so smaller chunks would spend more on requests.
   */
  public static final int SPLIT_CHUNK = 256 << 10;
  /**
   * Chunks a transfer of up to {@code SPLIT} × {@link #LOCAL_CHUNK} bytes is cut in: one per copy
   * thread (at most {@link #RING}), so that they are all filled or read at once. With one copy thread
   * (a machine of few cores) nothing is cut: its chunks would be copied one after another anyway,
   * and each would cost a request.
   */
  public static final int SPLIT = Math.min(RING, CopyThreads.COUNT);
  /** Bytes below which a transfer to a device in this JVM is copied on the thread that sends it. */
  public static final int INLINE_BYTES = 256 << 10;

  private final TransferRoute sender;
  /** A copy's target device and range; null otherwise. */
  private final RequestSender copyTo;
  private final BufferHandle copyTarget;
  /** What the device in this JVM lends (its route's), or null: heap views through the event bus. */
  private final TransferMemory lent;
  private final BufferHandle handle;
  private final HostElements host;
  private final boolean upload;
  private final int per;
  private final long perChunk;
  private final long chunks;
  /** Whether chunks are copied on the copy threads (local, more than {@link #INLINE_BYTES}). */
  private final boolean parallel;
  private final Promise<Void> done = Promise.promise();
  /** The caller's context (where the future completes) and order (where the transfer has its place). */
  private final Context caller;
  private final CallerOrder order;
  private final Pump pump;

  private ChunkedTransfer(TransferRoute sender, BufferHandle handle, HostElements host, boolean upload, int maxMessageSize) {
    this.sender = sender;
    this.copyTo = null;
    this.copyTarget = null;
    this.lent = sender.lent();
    this.handle = handle;
    this.host = host;
    this.upload = upload;
    this.per = host.perDeviceElement(handle.dtype());
    // To another node only what fits one message comes here (larger goes through BulkTransfer).
    int chunkBytes = lent == null ? maxMessageSize : localChunk(lent.limit(), handle.byteLength());
    this.perChunk = Math.max(1, chunkBytes / handle.dtype().size());
    this.chunks = Math.max(1, (handle.length() + perChunk - 1) / perChunk);
    this.parallel = lent != null && handle.byteLength() > INLINE_BYTES;
    this.caller = sender.callerContext();
    this.order = sender.order();
    int window = lent == null ? WINDOW : localWindow(lent.limit(), chunkBytes);
    // An upload's buffers fill later chunks; a download's replies go back once read.
    this.pump = upload
      ? new Pump(chunks, window, true, this::fill, this::sendUpload, this::giveBack, caller, this::left, this::report)
      : new Pump(chunks, window, false, this::ask, this::sendDownload, this::giveBack, caller, this::left, this::report);
  }

  // A copy: reads of source's views from {@code from}, writes of target's views to {@code to}.
  private ChunkedTransfer(RequestSender from, RequestSender to, BufferHandle source, BufferHandle target, int maxMessageSize) {
    this.sender = from;
    this.copyTo = to;
    this.copyTarget = target;
    this.lent = from.lent();
    this.handle = source;
    this.host = null;
    this.upload = false;
    this.per = 1;
    this.perChunk = Math.max(1, maxMessageSize / source.dtype().size());
    this.chunks = Math.max(1, (source.length() + perChunk - 1) / perChunk);
    this.parallel = false;
    this.caller = from.callerContext();
    this.order = from.order();
    // A read's bytes are memory the source lent: back to it once the target has them.
    this.pump = new Pump(chunks, WINDOW, false, this::read, this::write, this::giveBack, caller, this::left, this::report);
  }

  /**
   * The one rule for what of an upload to a device in this JVM takes the pump, for its typed clients
   * and for uploads that reach it over the event bus alike: past what is worth copying inline,
   * unless it lies in memory the device moves as it is (pinned, the shared region) — then it is one
   * request, with no host copy at all. A mismatched length is one request too: the device checks the
   * handle's token before it refuses the size.
   */
  public static boolean pumpedLocally(TransferMemory lent, BufferHandle target, Buffer data) {
    return data.length() > INLINE_BYTES && !oversized(target) && data.length() == target.byteLength()
      && !lent.lends(data);
  }

  /**
   * The one rule for what of a download from a device in this JVM takes the pump: a range larger
   * than the device may lend at once (its transfer budget, and three quarters of its shared region
   * in process isolation) that fits one Buffer. What cannot be one Buffer goes to the device as it is, which checks the
   * handle's token first, then refuses the size (BAD_REQUEST), so a forged handle learns nothing from
   * its claimed shape.
   */
  public static boolean pumpedLocally(TransferMemory lent, BufferHandle source) {
    return !oversized(source) && source.byteLength() > lent.limit()
      && source.byteLength() <= Integer.MAX_VALUE - 8;
  }

  /** A forged or corrupt handle whose byte length overflows: the device refuses it, naming what is wrong. */
  public static boolean oversized(BufferHandle h) {
    try {
      h.byteLength();
      return false;
    } catch (ArithmeticException e) {
      return true;
    }
  }

  /** A chunk's bytes for a device that may lend {@code limit} bytes: a ring takes at most a quarter of it. */
  static int localChunk(long limit) {
    long fit = limit / (4L * RING) / 4096 * 4096;
    return (int) Math.max(MIN_LOCAL_CHUNK, Math.min(LOCAL_CHUNK, fit));
  }

  /**
   * A chunk's bytes for a transfer of {@code bytes} to a device that may lend {@code limit}: the
   * transfer cut in {@link #SPLIT} chunks (whole pages), each at least {@link #SPLIT_CHUNK} and at
   * most {@link #localChunk(long)}. So a transfer of a few MiB is pipelined like a large one: its
   * chunks are filled (or read) on several copy threads at once, and chunk k+1 is staged while chunk
   * k moves, where one chunk of the whole range would be copied on one thread first and moved after.
   */
  static int localChunk(long limit, long bytes) {
    return localChunk(limit, bytes, SPLIT);
  }

  /** {@link #localChunk(long, long)} cut in {@code pieces} chunks. */
  static int localChunk(long limit, long bytes, int pieces) {
    long split = ((bytes + pieces - 1) / pieces + 4095) / 4096 * 4096;
    return (int) Math.min(localChunk(limit), Math.max(SPLIT_CHUNK, split));
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
   * Writes {@code data}, which must fit {@code target}, into it through {@code route} to a device in
   * this JVM (a device's own pump), in views of the memory it lends; read piece by piece when
   * {@code data} is several pieces (never merged first).
   */
  public static Future<Void> uploadLocal(TransferRoute route, BufferHandle target, Buffer data) {
    HostElements host = HostElements.ofBuffer(data);
    host.checkFits(target);
    return new ChunkedTransfer(route, target, host, true, Integer.MAX_VALUE).start();
  }

  /**
   * Reads {@code source} from a device in this JVM ({@code route}'s, which must lend memory) into host
   * memory from {@code make}, asked on the first copy thread that reads into it (fresh memory is
   * zeroed, which for a large download would stall the caller's loop), and handed over once all is
   * in; on a failure what was made goes back to the device's memory. Where {@code make} gives none
   * (null: no room in the device's transfer budget) the bytes land in heap arrays of about 32 MiB
   * ({@link HostElements#landing}, as a remote download's do), each made on the copy thread that
   * first reads into it, and the Buffer is one composite over them: never one new array of the whole
   * range, which the JVM would zero in one piece without reaching a safepoint, stopping every thread
   * that reaches one meanwhile (the caller's loop too) until it is done.
   */
  public static Future<Buffer> downloadLanded(TransferRoute route, BufferHandle source, IntFunction<Buffer> make) {
    TransferMemory lent = route.lent();
    int bytes = (int) source.byteLength();
    AtomicReference<Buffer> landing = new AtomicReference<>();
    HostElements into = HostElements.landing(bytes, k -> {
      Buffer memory = make.apply(k);
      if (memory == null) {
        return null;
      }
      landing.set(memory);
      return VertxInternals.byteBuf(memory).nioBuffer(0, k);
    });
    into.checkFits(source);
    return new ChunkedTransfer(route, source, into, false, Integer.MAX_VALUE).start()
      .map(x -> {
        Buffer memory = landing.get();
        return memory != null ? memory : into.landed();
      })
      .onFailure(t -> {
        Buffer landed = landing.get();
        if (landed != null) {
          lent.release(landed);
        }
      });
  }

  /**
   * Copies {@code source} (read from {@code from}'s device) into {@code target} (written on
   * {@code to}'s), same dtype and length, staged through this JVM in views of {@code maxMessageSize}.
   */
  public static Future<Void> copy(RequestSender from, RequestSender to, BufferHandle source, BufferHandle target,
                           int maxMessageSize) {
    return new ChunkedTransfer(from, to, source, target, maxMessageSize).start();
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
    // An upload of several chunks writes none before its whole range is known good (below): the
    // probe holds a place in the window, and every send, until it has come back good.
    boolean probe = upload && chunks > 1;
    if (probe) {
      pump.block();
    }
    pump.start();
    if (probe) {
      probeRange();
    }
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

  // Sent before any chunk, the first chunks filled meanwhile; they go once it has come back good.
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
      pump.unblock(ar.failed() ? ar.cause() : null);
    });
  }

  // An upload's chunk k: host values into a buffer, handed to the pump to leave in order.
  private void fill(long k) {
    int room = Math.toIntExact(chunks == 1 ? handle.byteLength() : perChunk * handle.dtype().size());
    long from = k * perChunk;
    int values = Math.toIntExact(Math.min(perChunk, handle.length() - from) * per);
    stageUpload(pump, k, lent, room, host, from * per, values, bytes(k), parallel);
  }

  /**
   * Stages unit {@code k} of an upload to a device in this JVM (or, with no {@code lent}, over the
   * event bus) and hands it to {@code pump}: host values [{@code from}, {@code from + values}), which
   * are {@code bytes} device bytes, copied in bulk into the start of a buffer of {@code room} bytes —
   * one a done unit left, else one the device lends, else heap memory (the device then stages it, so
   * a transfer never fails for want of lent memory). With {@code spread}, the buffer is found (or
   * lent, which may allocate) and filled on the copy threads, the copy spread over them; otherwise
   * here.
   */
  static void stageUpload(Pump pump, long k, TransferMemory lent, int room, HostElements host, long from, int values,
                          int bytes, boolean spread) {
    if (spread) {
      CopyThreads.execute(() -> {
        Buffer b = null;
        ByteBuffer le;
        try {
          b = staging(pump, lent, room);
          le = VertxInternals.byteBuf(b).nioBuffer(0, bytes);
        } catch (RuntimeException | Error e) {
          // No memory for the chunk (a heap array the JVM could not make): the transfer fails, once.
          pump.staged(k, b, Failures.toCudaException(e));
          return;
        }
        if (pump.failed()) {
          pump.staged(k, b, null);
          return;
        }
        Buffer filled = b;
        host.write(from, values, le, error -> pump.staged(k, filled, error == null ? null : Failures.toCudaException(error)));
      });
      return;
    }
    Buffer b = null;
    try {
      b = staging(pump, lent, room);
      host.write(from, values, VertxInternals.byteBuf(b).nioBuffer(0, bytes));
    } catch (RuntimeException | Error e) {
      // No memory for the chunk, or its copy failed: the transfer fails, once.
      pump.staged(k, b, Failures.toCudaException(e));
      return;
    }
    pump.staged(k, b, null);
  }

  // Any thread: a buffer of room bytes for an upload's unit, from the pump, lent by the device, or on the heap.
  private static Buffer staging(Pump pump, TransferMemory lent, int room) {
    Buffer b = pump.reuse();
    if (b != null) {
      return b;
    }
    if (lent != null && room > 0) {
      try {
        b = lent.allocate(room);
      } catch (RuntimeException notNow) {
        // not ready, or it lends no more now: the heap, which the device stages itself
      }
      if (b != null) {
        if (b.length() < room) {
          b.setByte(room - 1, (byte) 0); // its length is its room: chunks are filled through an NIO view
        }
        return b;
      }
    }
    return VertxInternals.buffer(Unpooled.wrappedBuffer(new byte[room]));
  }

  // An upload's chunk k leaves, in order: from a view of the buffer's first bytes (the same memory,
  // so the device still finds it lent).
  private void sendUpload(long k, Buffer b) {
    int n = bytes(k);
    Future<BufferHandle> reply;
    try {
      reply = sender.dispatch(new UploadRequest(view(k), b.length() == n ? b : b.slice(0, n)), caller, order);
    } catch (RuntimeException | Error e) {
      reply = Future.failedFuture(Failures.toCudaException(e));
    }
    // Done once the device has read it: the buffer fills a later chunk.
    reply.onComplete(ar -> pump.sent(k, b, ar.failed() ? ar.cause() : null));
  }

  // A download's chunk k has nothing to stage: it is asked for as soon as it starts.
  private void ask(long k) {
    pump.staged(k, null, null);
  }

  // Asks for a download's chunk k; its reply is read into the host elements on the copy threads (a
  // transfer of at most INLINE_BYTES whole on the thread the reply came on).
  private void sendDownload(long k, Buffer none) {
    Future<DownloadReply> reply;
    try {
      reply = sender.dispatch(new DownloadRequest(view(k)), caller, order);
    } catch (RuntimeException | Error e) {
      reply = Future.failedFuture(Failures.toCudaException(e));
    }
    reply.onComplete(ar -> {
      if (ar.failed()) {
        pump.sent(k, null, ar.cause());
      } else if (parallel) {
        CopyThreads.execute(() -> readInto(k, ar.result().getData()));
      } else {
        readInto(k, ar.result().getData());
      }
    });
  }

  // Reads chunk k's reply into the host elements, spread over the copy threads; the pump gives the
  // reply's memory back to the device once it is read.
  private void readInto(long k, Buffer data) {
    if (pump.failed()) {
      pump.sent(k, data, null);
      return;
    }
    ByteBuffer le;
    int values;
    try {
      values = Math.toIntExact(Math.min(perChunk, handle.length() - k * perChunk) * per);
      le = VertxInternals.byteBuf(data).nioBuffer();
    } catch (RuntimeException e) {
      pump.sent(k, data, Failures.toCudaException(e));
      return;
    }
    // A reply of the wrong size fails the transfer like a failed chunk.
    host.read(le, k * perChunk * per, values, error -> pump.sent(k, data, error == null ? null : Failures.toCudaException(error)));
  }

  // A copy's chunk k is read from the source as it starts.
  private void read(long k) {
    Future<DownloadReply> read;
    try {
      read = sender.dispatch(new DownloadRequest(view(k)), caller, order);
    } catch (RuntimeException | Error e) {
      read = Future.failedFuture(Failures.toCudaException(e));
    }
    read.onComplete(ar -> pump.staged(k, ar.succeeded() ? ar.result().getData() : null, ar.failed() ? ar.cause() : null));
  }

  // A copy's chunk k is written to the target over the bytes read, in chunk order: reads may complete
  // out of order, and a later request on the caller waits for the last write to leave. Done once the
  // target has the bytes; the pump then gives the source's lent memory back.
  private void write(long k, Buffer data) {
    long from = k * perChunk;
    BufferHandle into = chunks == 1 ? copyTarget : copyTarget.view(from, Math.min(perChunk, copyTarget.length() - from));
    Future<BufferHandle> write;
    try {
      write = copyTo.dispatch(new UploadRequest(into, data), caller, order);
    } catch (RuntimeException | Error e) {
      write = Future.failedFuture(Failures.toCudaException(e));
    }
    write.onComplete(w -> pump.sent(k, data, w.failed() ? w.cause() : null));
  }

  private BufferHandle view(long k) {
    long from = k * perChunk;
    return chunks == 1 ? handle : handle.view(from, Math.min(perChunk, handle.length() - from));
  }

  // Device bytes of chunk k.
  private int bytes(long k) {
    return Math.toIntExact(Math.min(perChunk, handle.length() - k * perChunk) * handle.dtype().size());
  }

  // Any thread: a buffer goes back to the device when it lent it (a heap buffer is not its, and stays).
  private void giveBack(Buffer b) {
    if (lent != null) {
      lent.release(b);
    }
  }

  // Every chunk has left, or the transfer failed: what waits behind it in the caller's order may go.
  private void left(Throwable failure) {
    order.release(this);
  }

  // On the caller's context, once: every chunk is done, or nothing is in flight or being copied after a failure.
  private void report(Throwable failure) {
    if (failure == null) {
      done.tryComplete();
    } else {
      done.tryFail(failure);
    }
  }
}
