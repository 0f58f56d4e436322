package com.vertxcuda.device.isolation;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.internal.PlatformDependent;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ref.Cleaner;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.TreeMap;

/**
 * A file in /dev/shm mapped by the device verticle and its device host: bulk data moves through it,
 * never through the link socket. The device verticle's side hands out slots (first fit, 4 KiB
 * aligned); the device host only reads and writes where a frame tells it.
 */
final class SharedRegion {

  private static final long ALIGN = 4096;
  private static final Cleaner CLEANER = Cleaner.create();

  private final Path path;
  private final MappedByteBuffer mapping;
  private final long base;
  private final long size;
  /** Free extents: offset → length. */
  private final TreeMap<Long, Long> free = new TreeMap<>();
  /** Slots lent out as user-visible buffers, by offset. */
  private final Map<Long, Cleaner.Cleanable> lent = new java.util.concurrent.ConcurrentHashMap<>();

  private SharedRegion(Path path, MappedByteBuffer mapping) {
    this.path = path;
    this.mapping = mapping;
    this.size = mapping.capacity();
    this.base = PlatformDependent.directBufferAddress(mapping);
    free.put(0L, size);
  }

  /** Creates (or truncates) the region file and maps it. */
  static SharedRegion create(Path path, long size) {
    if (size < 1 << 16 || size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("the shared region takes 64 KiB to 2 GiB, not " + size + " bytes");
    }
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
      StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
      ch.truncate(size);
      ch.position(size - 1);
      ch.write(ByteBuffer.wrap(new byte[1]));
      return new SharedRegion(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, size));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the shared region " + path, e);
    }
  }

  /** Maps an existing region file. */
  static SharedRegion open(Path path) {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      return new SharedRegion(path, ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size()));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot map the shared region " + path, e);
    }
  }

  Path path() {
    return path;
  }

  long size() {
    return size;
  }

  /** Removes the file; both mappings stay valid until unmapped. */
  void unlink() {
    try {
      Files.deleteIfExists(path);
    } catch (IOException ignored) {
      // already gone
    }
  }

  /** A little-endian view of [offset, offset + length). */
  ByteBuffer slice(long offset, long length) {
    if (offset < 0 || length < 0 || offset + length > size) {
      throw new IllegalArgumentException("[" + offset + ", +" + length + ") is outside the " + size + "-byte region");
    }
    return mapping.slice((int) offset, (int) length).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** A free slot of {@code length} bytes, or -1 when none is free. */
  synchronized long allocate(long length) {
    long want = Math.max(ALIGN, (length + ALIGN - 1) / ALIGN * ALIGN);
    for (Map.Entry<Long, Long> e : free.entrySet()) {
      if (e.getValue() >= want) {
        long offset = e.getKey();
        free.remove(offset);
        if (e.getValue() > want) {
          free.put(offset + want, e.getValue() - want);
        }
        return offset;
      }
    }
    return -1;
  }

  synchronized void release(long offset, long length) {
    long len = Math.max(ALIGN, (length + ALIGN - 1) / ALIGN * ALIGN);
    Map.Entry<Long, Long> before = free.floorEntry(offset);
    if (before != null && before.getKey() + before.getValue() == offset) {
      offset = before.getKey();
      len += before.getValue();
      free.remove(before.getKey());
    }
    Long after = free.get(offset + len);
    if (after != null) {
      free.remove(offset + len);
      len += after;
    }
    free.put(offset, len);
  }

  /** The largest slot that could ever be handed out. */
  long largestSlot() {
    return size / 2;
  }

  /**
   * A Vert.x buffer over a slot; the slot returns to the region when the buffer becomes
   * unreachable (or at once through {@link #releaseBuffer}).
   */
  Buffer buffer(long offset, int capacity, int length) {
    ByteBuf buf = Unpooled.wrappedBuffer(slice(offset, capacity)).writerIndex(length);
    Buffer b = BufferInternal.buffer(buf);
    lent.put(offset, CLEANER.register(b, new SlotReturn(this, offset, capacity)));
    return b;
  }

  /** Returns a buffer's slot now; the buffer must not be used afterwards. False if it holds none. */
  boolean releaseBuffer(Buffer buffer) {
    long offset = offsetOf(buffer);
    Cleaner.Cleanable c = offset < 0 ? null : lent.get(offset);
    if (c == null) {
      return false;
    }
    c.clean();
    return true;
  }

  /** Where a buffer lies in the region, or -1 if it does not. */
  long offsetOf(Buffer buffer) {
    ByteBuf buf = ((BufferInternal) buffer).getByteBuf();
    if (!buf.hasMemoryAddress()) {
      return -1;
    }
    long address = buf.memoryAddress() + buf.readerIndex();
    long offset = address - base;
    return offset >= 0 && offset + buf.readableBytes() <= size ? offset : -1;
  }

  private static final class SlotReturn implements Runnable {
    private final SharedRegion region;
    private final long offset;
    private final long length;
    private boolean done;

    SlotReturn(SharedRegion region, long offset, long length) {
      this.region = region;
      this.offset = offset;
      this.length = length;
    }

    @Override
    public synchronized void run() {
      if (!done) {
        done = true;
        region.lent.remove(offset);
        region.release(offset, length);
      }
    }
  }
}
