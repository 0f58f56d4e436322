package com.vertxcuda.device.isolation;

import com.vertxcuda.device.context.IdleWait;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.function.Consumer;

/**
 * Length-prefixed frames over one socket between a device verticle and its device host, on plain
 * NIO (a Unix domain socket needs no Vert.x native transport). Frames are handed to their handler
 * on the link's reader thread, straight from the socket: no event loop in between.
 *
 * <p>{@link #send} is thread-safe and never blocks: it writes what the socket takes at once and
 * leaves the rest to the reader thread, which flushes it when the socket can take more (a stopped
 * peer cannot stall the sender's event loop). The reader waits as {@link IdleWait} says before it
 * waits in {@code select}: it spins {@code spinNanos} after each frame it reads or sends, since the
 * next frame usually follows at once (an answer, or the request a caller sends when it gets one),
 * and keeps spinning while its side has work outstanding across the link ({@link #awaiting}: the
 * device verticle awaits answers, the device host owes them), so the answer to work of a few
 * milliseconds (an FFT, a large GEMM), and the request that follows it, are read the moment they
 * land instead of after a wake-up from {@code select} (tens of microseconds on a VM).
 */
final class Link {

  private static final System.Logger LOG = System.getLogger(Link.class.getName());
  /** A frame longer than this ends the link: no request or reply comes near it. */
  static final int MAX_FRAME = 64 << 20;

  private final SocketChannel channel;
  private final Selector selector;
  private final Consumer<ByteBuffer> frames;
  private final Consumer<String> closed;
  private final long spinNanos;
  private volatile java.util.function.BooleanSupplier awaiting = () -> false;
  /** When this side last sent a frame (nanoTime): the peer's next frame usually follows within a round trip. */
  private volatile long sentAt = System.nanoTime();
  /** When the reader last read a frame (the reader's alone). */
  private long lastFrame = System.nanoTime();
  /** {@link #lastActivity} as the idle wait reads it (made once: the spin asks it at every step). */
  private final java.util.function.LongSupplier activity = this::lastActivity;
  private final ArrayDeque<ByteBuffer> backlog = new ArrayDeque<>();
  private final Thread reader;
  private volatile boolean open = true;

  /**
   * A link over {@code channel} (connected); {@code frames} gets each frame's body (without its
   * length) on the reader thread, {@code closed} why the link ended, once.
   */
  Link(SocketChannel channel, String name, long spinNanos, Consumer<ByteBuffer> frames, Consumer<String> closed)
    throws IOException {
    this.channel = channel;
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

  /** Sends one frame (its length prefix included); any thread. */
  void send(ByteBuffer frame) {
    if (!open) {
      return;
    }
    sentAt = System.nanoTime();
    boolean later;
    synchronized (backlog) {
      try {
        if (backlog.isEmpty()) {
          channel.write(frame);
        }
      } catch (IOException e) {
        close("the link failed: " + e.getMessage());
        return;
      }
      later = frame.hasRemaining();
      if (later) {
        ByteBuffer copy = ByteBuffer.allocate(frame.remaining());
        copy.put(frame).flip();
        backlog.add(copy);
      }
    }
    if (later) {
      selector.wakeup();
    }
  }

  /**
   * Returns once every frame sent so far has gone into the socket, or after {@code timeoutNanos}
   * (the reader thread flushes what the socket did not take at once).
   */
  void flushed(long timeoutNanos) {
    long end = System.nanoTime() + timeoutNanos;
    while (open && hasBacklog() && System.nanoTime() - end < 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(100_000);
    }
  }

  void close() {
    close("the link was closed");
  }

  boolean isOpen() {
    return open;
  }

  private void close(String why) {
    if (!open) {
      return;
    }
    open = false;
    try {
      channel.close();
      selector.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    closed.accept(why);
  }

  private void read() {
    ByteBuffer in = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.BIG_ENDIAN);
    try {
      lastFrame = System.nanoTime();
      while (open) {
        int n = channel.read(in);
        if (n < 0) {
          close("the peer closed the link");
          return;
        }
        if (n > 0) {
          in = deliver(in);
          lastFrame = System.nanoTime();
          continue;
        }
        if (!hasBacklog() && IdleWait.pause(spinNanos, activity, awaiting)) {
          continue;
        }
        SelectionKey key = channel.keyFor(selector);
        key.interestOps(SelectionKey.OP_READ | (hasBacklog() ? SelectionKey.OP_WRITE : 0));
        selector.select();
        selector.selectedKeys().clear();
        flushBacklog();
      }
    } catch (IOException | RuntimeException e) {
      if (open) {
        LOG.log(System.Logger.Level.DEBUG, "link reader ends: " + e);
      }
      close(open ? "the link failed: " + e.getMessage() : "the link was closed");
    }
  }

  // The last frame read or sent, whichever is later (the reader's own, or an answer leaving).
  private long lastActivity() {
    long sent = sentAt;
    return sent - lastFrame > 0 ? sent : lastFrame;
  }

  private boolean hasBacklog() {
    synchronized (backlog) {
      return !backlog.isEmpty();
    }
  }

  private void flushBacklog() throws IOException {
    synchronized (backlog) {
      while (!backlog.isEmpty()) {
        ByteBuffer b = backlog.peek();
        channel.write(b);
        if (b.hasRemaining()) {
          return;
        }
        backlog.poll();
      }
    }
  }

  // Hands every whole frame in {@code in} to the handler; returns the buffer to read on into
  // (a bigger one when a frame does not fit).
  private ByteBuffer deliver(ByteBuffer in) {
    in.flip();
    while (in.remaining() >= 4) {
      int length = in.getInt(in.position());
      if (length < 0 || length > MAX_FRAME) {
        throw new IllegalStateException("malformed frame length " + length);
      }
      if (in.remaining() < 4 + length) {
        break;
      }
      ByteBuffer frame = in.slice(in.position() + 4, length);
      in.position(in.position() + 4 + length);
      frames.accept(frame);
    }
    in.compact();
    if (in.position() >= 4) {
      int length = in.getInt(0);
      if (length + 4 > in.capacity() && length <= MAX_FRAME) {
        ByteBuffer bigger = ByteBuffer.allocateDirect(length + 4);
        in.flip();
        bigger.put(in);
        return bigger;
      }
    }
    return in;
  }
}
