package com.vertxcuda.device.isolation;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.Consumer;

/**
 * One direction of a {@link Link}: a ring of frames in memory both processes map (beside the shared
 * region, in its file), written by one side and read by the other's link reader. A frame crosses as
 * a store into the ring and a load on the other side, no system call, while the reader is awake
 * (the Unix socket carries only nudges; {@code LinkRoundTripBenchmark} measures both).
 *
 * <p>Layout: a header of four words, each on its own cache line — the producer's {@code tail} (bytes
 * written, ever), whether the consumer is {@code parked} (about to block in {@code select}), the
 * consumer's {@code head} (bytes read, ever), whether the producer is {@code waiting} for room —
 * then {@link #CAPACITY} bytes of records at 8-byte aligned positions. A record is an {@code int}
 * length of the piece, an {@code int} of the frame's bytes left from this piece on, and the piece;
 * a frame goes in one piece where it fits before the ring's end and in several otherwise (or when
 * it is larger than {@link #MAX_PIECE}), which the reader joins again. A length of {@link #WRAP}
 * says the rest of the ring is unused: go on at its start.
 *
 * <p>Positions are published with release stores and read with acquire loads; {@code parked} and
 * {@code waiting} are Dekker flags with a full fence on both sides, so a wake-up is never lost: a
 * consumer that parks sets its flag, fences and looks at the ring once more; a producer publishes,
 * fences and reads the flag, and if it is set the link writes a byte to the socket
 * ({@link Link}'s nudge) that wakes the consumer's {@code select}. The same for room: a producer
 * that finds the ring full sets {@code waiting}, and the consumer that frees room nudges it.
 *
 * <p>Not thread-safe by itself: one thread consumes (the link's reader) and producers take the
 * link's lock.
 */
final class LinkRing {

  /**
   * Bytes of records per direction. 4 MiB: a batch frame of 1,024 coalesced GEMMs goes in one piece
   * and several such batches fit at once; a smaller ring splits large frames into more pieces, each
   * a wake-up of the reader.
   */
  static final int CAPACITY = 4 << 20;
  /** A piece is at most this long: a larger frame takes several, so it never waits for the whole ring. */
  static final int MAX_PIECE = CAPACITY / 4;
  private static final int HEADER = 256;
  /** Bytes one ring takes in the mapping. */
  static final int BYTES = HEADER + CAPACITY;
  /** Bytes both directions take. */
  static final int PAIR_BYTES = 2 * BYTES;

  private static final int TAIL = 0;
  private static final int PARKED = 64;
  private static final int HEAD = 128;
  private static final int WAITING = 192;
  private static final int WRAP = -1;
  private static final int RECORD_HEADER = 8;
  private static final long MASK = CAPACITY - 1;

  private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
  private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());

  private final ByteBuffer memory;
  /** The producer's position (the producer's alone, under the link's lock). */
  private long tail;
  /** The consumer's position (the consumer's alone). */
  private long head;
  /** A frame being joined from its pieces (the consumer's), or null. */
  private ByteBuffer joining;

  private LinkRing(ByteBuffer memory) {
    if (memory.capacity() != BYTES || !memory.isDirect()) {
      throw new IllegalArgumentException("a link ring is " + BYTES + " bytes of direct memory");
    }
    // A ring is new with its file (zeros): each side starts at 0, whatever the peer wrote meanwhile.
    this.memory = memory.order(ByteOrder.nativeOrder());
  }

  /** The ring from the device verticle to its device host, in {@code pair} ({@link #PAIR_BYTES}, 8-byte aligned). */
  static LinkRing toDeviceHost(ByteBuffer pair) {
    return new LinkRing(pair.slice(0, BYTES));
  }

  /** The ring from the device host to its device verticle, in {@code pair}. */
  static LinkRing toNode(ByteBuffer pair) {
    return new LinkRing(pair.slice(BYTES, BYTES));
  }

  // ---- the producer's side (under the link's lock)

  /**
   * Writes as much of {@code frame} (its remaining bytes: one frame's, or what is left of one) as
   * the ring has room for and publishes it; true when all of it went in. The frame's position
   * advances past what was written.
   */
  boolean offer(ByteBuffer frame) {
    long start = tail;
    while (frame.hasRemaining()) {
      long free = CAPACITY - (tail - (long) LONGS.getAcquire(memory, HEAD));
      int at = (int) (tail & MASK);
      int toEnd = CAPACITY - at;
      long room = Math.min(free, toEnd);
      if (room <= RECORD_HEADER) {
        if (toEnd == RECORD_HEADER && free >= toEnd) {
          memory.putInt(HEADER + at, WRAP);
          tail += toEnd;
          continue;
        }
        break;
      }
      int left = frame.remaining();
      int piece = (int) Math.min(Math.min(left, room - RECORD_HEADER), MAX_PIECE);
      memory.putInt(HEADER + at, piece);
      memory.putInt(HEADER + at + 4, left);
      memory.put(HEADER + at + RECORD_HEADER, frame, frame.position(), piece);
      frame.position(frame.position() + piece);
      tail += RECORD_HEADER + align(piece);
    }
    if (tail != start) {
      LONGS.setRelease(memory, TAIL, tail);
    }
    return !frame.hasRemaining();
  }

  /** After publishing: whether the consumer may be blocked and needs a nudge. */
  boolean consumerParked() {
    VarHandle.fullFence();
    return (int) INTS.getVolatile(memory, PARKED) != 0;
  }

  /** The producer found no room: the consumer nudges it once it frees some. Offer again after this. */
  void waitForRoom() {
    INTS.setVolatile(memory, WAITING, 1);
    VarHandle.fullFence();
  }

  // ---- the consumer's side (the link's reader)

  /**
   * Hands every whole frame in the ring to {@code frames} (a view of the ring's bytes, valid only
   * during the call: the handler copies what it keeps), freeing each record's room once it returns;
   * answers how many records it read. Throws {@link IllegalStateException} for a malformed record.
   */
  int drain(Consumer<ByteBuffer> frames) {
    long published = (long) LONGS.getAcquire(memory, TAIL);
    int records = 0;
    while (head != published) {
      if (published - head < RECORD_HEADER || published - head > CAPACITY) {
        throw new IllegalStateException("malformed link ring: " + (published - head) + " bytes published");
      }
      int at = (int) (head & MASK);
      int piece = memory.getInt(HEADER + at);
      if (piece == WRAP) {
        if (CAPACITY - at != RECORD_HEADER) {
          throw new IllegalStateException("malformed link ring: a wrap " + (CAPACITY - at) + " bytes before its end");
        }
        head += CAPACITY - at;
      } else {
        int left = memory.getInt(HEADER + at + 4);
        if (piece < 0 || piece > CAPACITY - at - RECORD_HEADER || left < piece || left > Link.MAX_FRAME
          || RECORD_HEADER + align(piece) > published - head
          || (joining != null && left != joining.remaining())) {
          throw new IllegalStateException("malformed link frame record: piece " + piece + " of " + left);
        }
        ByteBuffer bytes = memory.slice(HEADER + at + RECORD_HEADER, piece);
        if (joining == null && piece == left) {
          frames.accept(bytes);
        } else {
          if (joining == null) {
            joining = ByteBuffer.allocate(left);
          }
          joining.put(bytes);
          if (!joining.hasRemaining()) {
            ByteBuffer whole = joining.flip();
            joining = null;
            frames.accept(whole);
          }
        }
        head += RECORD_HEADER + align(piece);
      }
      LONGS.setRelease(memory, HEAD, head);
      records++;
    }
    return records;
  }

  /** Whether a record is published and not yet read. */
  boolean hasRecords() {
    return (long) LONGS.getAcquire(memory, TAIL) != head;
  }

  /** The consumer is about to block (true) or is awake again (false); after true, look at the ring once more. */
  void parked(boolean parked) {
    INTS.setVolatile(memory, PARKED, parked ? 1 : 0);
    if (parked) {
      VarHandle.fullFence();
    }
  }

  /** After freeing room: whether the producer waits for it (and takes its flag down: it is nudged once). */
  boolean producerWaiting() {
    VarHandle.fullFence();
    return (int) INTS.getVolatile(memory, WAITING) != 0 && INTS.compareAndSet(memory, WAITING, 1, 0);
  }

  private static int align(int n) {
    return (n + 7) & ~7;
  }
}
