package com.vertxcuda.device.isolation;

import com.vertxcuda.device.spi.IdleWait;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Frames between a device verticle and its device host: each direction a {@link LinkRing} in memory
 * both processes map, the socket between them (a Unix domain socket, on plain NIO) only for
 * wake-ups and the end of the peer. Frames are handed to their handler on the link's reader thread,
 * straight from the ring: no event loop in between, no system call on the way while the reader is
 * awake.
 *
 * <p>{@link #send} is thread-safe and never blocks: it writes what the ring has room for at once and
 * leaves the rest to the reader thread, which writes it when the peer frees room (a stopped peer
 * cannot stall the sender's event loop). The reader waits as {@link IdleWait} says before it blocks
 * in {@code select}: it spins {@code spinNanos} after each frame it reads or sends, since the next
 * frame usually follows at once (an answer, or the request a caller sends when it gets one), and
 * keeps spinning while its side has work outstanding across the link ({@link #awaiting}: the device
 * verticle awaits answers, the device host owes them), so the answer to work of a few milliseconds
 * (an FFT, a large GEMM), and the request that follows it, are read the moment they land. A reader
 * that blocks says so in its ring first; a sender that sees it writes one byte to the socket (a
 * nudge) to wake it. While spinning the reader looks at the socket every {@link #SOCKET_CHECK_NANOS}
 * for the end of the peer: a peer that exits or is killed closes it, and the frames it wrote before
 * (a poisoned context's notice) are still read first.
 *
 * <p>The backlog is bounded in bytes ({@link #DEFAULT_MAX_BACKLOG}): past it {@link #send} refuses a
 * frame rather than hold it, so a peer that stops reading costs this side no more than that. A
 * frame of at most {@link #SMALL_FRAME} bytes is never refused (failures and notices: their number
 * is bounded by the requests in flight), so a refused reply can still be answered with a failure.
 * Whatever ends the reader — the peer's end, a malformed ring, an {@link Error} such as running out
 * of heap for a frame — ends the link at once and says so through {@link Closed}, once.
 */
final class Link {

  private static final System.Logger LOG = System.getLogger(Link.class.getName());
  /** A frame longer than this ends the link: no request or reply comes near it. */
  static final int MAX_FRAME = 64 << 20;
  /** How often a spinning reader reads the socket (nudges, and the end of the peer). */
  static final long SOCKET_CHECK_NANOS = 50_000;
  /** Bytes the backlog may hold: four of the largest frames. */
  static final long DEFAULT_MAX_BACKLOG = 4L * MAX_FRAME;
  /** A frame this small (a failure, a notice) goes into the backlog whatever it holds. */
  static final int SMALL_FRAME = 4096;

  /** Hears once why a link ended. */
  interface Closed {
    /**
     * The link ended: {@code byPeer} when the peer closed the socket (its process exited or was
     * killed), false when this side ended it (its reader failed, or {@link #close} was called).
     */
    void closed(String why, boolean byPeer);
  }

  private final SocketChannel channel;
  private final Selector selector;
  private final LinkRing in;
  private final LinkRing out;
  private final Consumer<ByteBuffer> frames;
  private final Closed closed;
  private final long spinNanos;
  private final long maxBacklog;
  private volatile java.util.function.BooleanSupplier awaiting = () -> false;
  /** When this side last sent a frame (nanoTime): the peer's next frame usually follows within a round trip. */
  private volatile long sentAt = System.nanoTime();
  /** When the reader last read a frame (the reader's alone). */
  private long lastFrame = System.nanoTime();
  /** {@link #lastActivity} as the idle wait reads it (made once: the spin asks it at every step). */
  private final java.util.function.LongSupplier activity = this::lastActivity;
  /** What the ring had no room for yet, in order (under its own lock, which is the producers' lock). */
  private final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
  /** Whether {@link #backlog} holds anything (read without the lock by the reader's spin). */
  private volatile boolean backlogged;
  /** Bytes {@link #backlog} holds (under its lock). */
  private long backlogBytes;
  private final ByteBuffer nudge = ByteBuffer.allocateDirect(1);
  private final Thread reader;
  private final java.util.concurrent.atomic.AtomicBoolean open = new java.util.concurrent.atomic.AtomicBoolean(true);

  /**
   * A link over {@code channel} (connected) with frames coming in through {@code in} and going out
   * through {@code out}; {@code frames} gets each frame's body (without its length) on the reader
   * thread, {@code closed} why the link ended, once.
   */
  Link(SocketChannel channel, LinkRing in, LinkRing out, String name, long spinNanos, Consumer<ByteBuffer> frames,
       Closed closed) throws IOException {
    this(channel, in, out, name, spinNanos, frames, closed, DEFAULT_MAX_BACKLOG);
  }

  /** As above, the backlog holding at most {@code maxBacklog} bytes. */
  Link(SocketChannel channel, LinkRing in, LinkRing out, String name, long spinNanos, Consumer<ByteBuffer> frames,
       Closed closed, long maxBacklog) throws IOException {
    this.maxBacklog = maxBacklog;
    this.channel = channel;
    this.in = in;
    this.out = out;
    this.spinNanos = spinNanos;
    this.frames = frames;
    this.closed = closed;
    channel.configureBlocking(false);
    this.selector = Selector.open();
    channel.register(selector, SelectionKey.OP_READ);
    this.reader = new Thread(this::read, name);
    reader.setDaemon(true);
  }

  void start() {
    reader.start();
  }

  /** Whether this side has work outstanding across the link now (the reader does not block meanwhile, when spinning is on). */
  void awaiting(java.util.function.BooleanSupplier awaiting) {
    this.awaiting = awaiting;
  }

  /**
   * Sends one frame, given with its 4-byte length prefix (as {@code LinkFrame.encode} makes it); any
   * thread. False, sending nothing, when the ring has no room for it and the backlog would pass its
   * bound (a frame of {@link #SMALL_FRAME} bytes or less is always taken); true otherwise, also on a
   * closed link (whose calls the closing answers).
   */
  boolean send(ByteBuffer frame) {
    if (!open.get()) {
      return true;
    }
    sentAt = System.nanoTime();
    ByteBuffer body = frame.duplicate();
    body.position(body.position() + 4);
    synchronized (backlog) {
      if (!backlog.isEmpty() && body.remaining() > SMALL_FRAME && backlogBytes + body.remaining() > maxBacklog) {
        return false;
      }
      if (!backlog.isEmpty() || !out.offer(body)) {
        // The rest waits its turn (copied: the caller's bytes are its scratch buffer's). Into an empty
        // backlog a frame always goes (at most MAX_FRAME): the bound refuses only what queues behind.
        backlog.add(ByteBuffer.allocate(body.remaining()).put(body).flip());
        backlogBytes += backlog.peekLast().remaining();
        backlogged = true;
        flushBacklog();
      }
    }
    if (out.consumerParked()) {
      wake();
    }
    return true;
  }

  /** Bytes waiting in the backlog now. */
  long backlogBytes() {
    synchronized (backlog) {
      return backlogBytes;
    }
  }

  /**
   * Returns once every frame sent so far has gone into the ring, or after {@code timeoutNanos}
   * (the reader thread writes what the ring had no room for as the peer frees it).
   */
  void flushed(long timeoutNanos) {
    long end = System.nanoTime() + timeoutNanos;
    while (open.get() && backlogged && System.nanoTime() - end < 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(100_000);
    }
  }

  void close() {
    close("the link was closed");
  }

  boolean isOpen() {
    return open.get();
  }

  // Once, whoever comes first (the reader at the peer's end, a stop): `closed` hears of it once.
  private void close(String why) {
    close(why, false);
  }

  private void close(String why, boolean byPeer) {
    if (!open.compareAndSet(true, false)) {
      return;
    }
    try {
      channel.close();
      selector.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    closed.closed(why, byPeer);
  }

  // The peer's reader may be blocked: one byte on the socket wakes it (a full socket already will).
  private void wake() {
    try {
      synchronized (nudge) {
        nudge.clear();
        channel.write(nudge);
      }
    } catch (IOException e) {
      // The reader learns of the end from the socket itself.
    }
  }

  private void read() {
    ByteBuffer socketBytes = ByteBuffer.allocateDirect(64);
    try {
      lastFrame = System.nanoTime();
      long checked = lastFrame;
      while (open.get()) {
        if (in.drain(frames) > 0) {
          lastFrame = System.nanoTime();
          if (in.producerWaiting()) {
            wake();
          }
          // Frames that keep coming must not hold this side's backlog back.
          if (backlogged) {
            writeBacklog();
          }
          continue;
        }
        if (backlogged) {
          writeBacklog();
        }
        long now = System.nanoTime();
        if (now - checked >= SOCKET_CHECK_NANOS) {
          checked = now;
          if (!readSocket(socketBytes)) {
            return;
          }
        }
        if (!backlogged && IdleWait.pause(spinNanos, activity, awaiting)) {
          continue;
        }
        // About to block. In this order, so no wake-up is lost: say so (a frame written from now on
        // nudges); read away the nudges already there (one that comes from now on wakes the select);
        // write the backlog once more, which asks for a nudge when room comes if it stays; then look
        // at the ring a last time.
        in.parked(true);
        if (!readSocket(socketBytes)) {
          return;
        }
        if (backlogged) {
          writeBacklog();
        }
        if (!in.hasRecords()) {
          selector.select();
          selector.selectedKeys().clear();
        }
        in.parked(false);
        checked = System.nanoTime();
        if (!readSocket(socketBytes)) {
          return;
        }
      }
    } catch (IOException | RuntimeException | Error e) {
      // An Error too (no heap for a frame being joined, a handler's): the reader is gone, so the link
      // ends now and its calls are answered, rather than wait for a heartbeat to miss.
      // A socket error is the peer's end (a reset when its process is killed); anything else is this
      // side's reader failing.
      boolean wasOpen = open.get();
      close(wasOpen ? "the link failed: " + (e instanceof Error ? e.toString() : e.getMessage())
        : "the link was closed", e instanceof IOException);
      // Logged once the calls are answered: a first log line can take a while.
      if (wasOpen) {
        LOG.log(e instanceof Error ? System.Logger.Level.ERROR : System.Logger.Level.DEBUG, "link reader ends: " + e);
      }
    }
  }

  // Reads the nudges waiting on the socket; false (the link closed) when the peer has gone, after
  // handing on every frame it wrote before it went.
  private boolean readSocket(ByteBuffer socketBytes) throws IOException {
    int n;
    do {
      socketBytes.clear();
      n = channel.read(socketBytes);
    } while (n > 0);
    if (n < 0) {
      in.drain(frames);
      close("the peer closed the link", true);
      return false;
    }
    return true;
  }

  // The last frame read or sent, whichever is later (the reader's own, or an answer leaving).
  private long lastActivity() {
    long sent = sentAt;
    return sent - lastFrame > 0 ? sent : lastFrame;
  }

  private void writeBacklog() {
    synchronized (backlog) {
      if (!flushBacklog()) {
        return;
      }
    }
    if (out.consumerParked()) {
      wake();
    }
  }

  // Under the lock: writes what the ring takes of the backlog, in order; when the ring is full, asks
  // the peer to nudge this side once it frees room. Answers whether anything went in.
  private boolean flushBacklog() {
    boolean wrote = false;
    while (!backlog.isEmpty()) {
      ByteBuffer b = backlog.peek();
      int before = b.remaining();
      boolean whole = out.offer(b);
      backlogBytes -= before - b.remaining();
      wrote |= b.remaining() != before;
      if (!whole) {
        out.waitForRoom();
        // Room may have come between the offer and the flag: the peer saw no flag then.
        before = b.remaining();
        whole = out.offer(b);
        backlogBytes -= before - b.remaining();
        wrote |= b.remaining() != before;
        if (!whole) {
          return wrote;
        }
      }
      backlog.poll();
    }
    backlogged = false;
    return wrote;
  }
}
