package com.vertxcuda.device.isolation;

import com.vertxcuda.internal.VertxInternals;
import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import com.vertxcuda.device.memory.LentBuffers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A file in /dev/shm mapped by the device verticle and its device host: bulk data moves through it,
 * never through link frames. Past the region, on a page of its own, the file holds the link's two
 * rings ({@link LinkRing}), which the frames themselves go through. The device verticle's side
 * hands out slots (first fit, 4 KiB aligned); the device host only reads and writes where a frame
 * tells it.
 *
 * <p>The file lies in a directory only this user can enter, under a name nobody can guess
 * ({@link DeviceHostProcess}); it is created exclusively, never through a link, readable and
 * writable by its owner only from the moment it exists, and the device host maps it only after
 * checking it is such a file.
 */
final class SharedRegion {

  private static final long ALIGN = 4096;

  private final Path path;
  private final MappedByteBuffer mapping;
  /** The link's rings, in the same file past the region, page-aligned: one object per direction, per process. */
  private final LinkRing toDeviceHost;
  private final LinkRing toNode;
  private final long base;
  private final long size;
  /** Free extents: offset → length. */
  private final TreeMap<Long, Long> free = new TreeMap<>();
  private final LentBuffers lent = new LentBuffers();
  /** Bytes of slots users hold (lent buffers, and downloads about to be lent); at most {@link #heldLimit}. */
  private long held;

  private SharedRegion(Path path, FileChannel ch, long size) throws IOException {
    this.path = path;
    this.mapping = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
    MappedByteBuffer rings = ch.map(FileChannel.MapMode.READ_WRITE, ringsAt(size), LinkRing.PAIR_BYTES);
    this.toDeviceHost = LinkRing.toDeviceHost(rings);
    this.toNode = LinkRing.toNode(rings);
    this.size = mapping.capacity();
    this.base = VertxInternals.directBufferAddress(mapping);
    free.put(0L, size);
  }

  private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rw-------");

  /**
   * Creates the region file and maps it. The file must not exist (nor a link by its name: that
   * fails rather than being followed); it is {@code rw-------} from its creation.
   */
  static SharedRegion create(Path path, long size) {
    if (size < 1 << 16 || size > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("the shared region takes 64 KiB to 2 GiB, not " + size + " bytes");
    }
    Set<OpenOption> how = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE,
      LinkOption.NOFOLLOW_LINKS);
    FileAttribute<?>[] attributes = posix(path)
      ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(OWNER_ONLY)} : new FileAttribute<?>[0];
    try (FileChannel ch = FileChannel.open(path, how, attributes)) {
      // The rings' pages are written now, so a /dev/shm without room for them fails this start; the
      // region's come as transfers touch them, or all at once by reserve().
      ByteBuffer zeros = ByteBuffer.allocate(64 << 10);
      for (long at = ringsAt(size); at < fileSize(size); at += zeros.limit()) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), fileSize(size) - at));
        while (zeros.hasRemaining()) {
          ch.write(zeros, at + zeros.position());
        }
      }
      return new SharedRegion(path, ch, size);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the shared region " + path, e);
    }
  }

  /**
   * Makes sure, at the device host's start, that the region's file system can hold it (the parent's
   * side, before anything else writes there): a page first stored into while serving faults (SIGBUS,
   * in either process) where the file system has no room for it. Without {@code whole}, the file
   * system must have room for the region now (an IOException saying so otherwise), which it may
   * lose later to other files; with it, every page is taken now by writing zeros over the region, so
   * no later store can fault, at the cost of the region's size of the file system's memory (RAM, for
   * /dev/shm) for as long as the region lives.
   */
  void reserve(boolean whole) throws IOException {
    FileStore store = Files.getFileStore(path);
    long free = store.getUsableSpace();
    if (!whole) {
      // A file system that reports no size at all (some sandboxes' tmpfs) says nothing to check.
      if (store.getTotalSpace() > 0 && free < size) {
        throw new IOException(doesNotFit(free, "its file system has room for less"));
      }
      return;
    }
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
      ByteBuffer zeros = ByteBuffer.allocateDirect(1 << 20);
      for (long at = 0; at < size; at += zeros.limit()) {
        zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
        while (zeros.hasRemaining()) {
          ch.write(zeros, at + zeros.position());
        }
      }
    } catch (IOException e) {
      throw new IOException(doesNotFit(free, e.getMessage()), e);
    }
  }

  private String doesNotFit(long free, String why) {
    return "the shared region's " + size + " bytes do not fit in " + path.getParent() + " (" + free
      + " bytes were free: " + why + "): give it more room (a container's --shm-size) or lower "
      + "DeviceOptions.sharedMemorySize";
  }

  /**
   * Maps an existing region file of {@code size} bytes (the device host's side). It is opened
   * without following links, and mapped only if it is a regular file of that size, owned by this
   * user and {@code rw-------}, in a directory of this user's that is {@code rwx------}.
   */
  static SharedRegion open(Path path, long size) {
    try (FileChannel ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE,
      LinkOption.NOFOLLOW_LINKS)) {
      if (posix(path)) {
        check(path, false);
        check(path.toAbsolutePath().getParent(), true);
      } else if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
        throw new IOException("not a regular file");
      }
      if (ch.size() != fileSize(size)) {
        throw new IOException("it holds " + ch.size() + " bytes, not " + fileSize(size));
      }
      return new SharedRegion(path, ch, size);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot map the shared region " + path + ": " + e.getMessage(), e);
    }
  }

  private static boolean posix(Path path) {
    return path.getFileSystem().supportedFileAttributeViews().contains("unix");
  }

  // A regular file (or the directory holding it) of this user's that only this user may use.
  private static void check(Path path, boolean directory) throws IOException {
    PosixFileAttributes a = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (directory ? !a.isDirectory() : !a.isRegularFile()) {
      throw new IOException(path + " is not a " + (directory ? "directory" : "regular file"));
    }
    long uid = ((Number) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
    if (uid != Owner.UID) {
      throw new IOException(path + " belongs to uid " + uid + ", not to this process's " + Owner.UID);
    }
    String want = directory ? "rwx------" : "rw-------";
    if (!a.permissions().equals(PosixFilePermissions.fromString(want))) {
      throw new IOException(path + " is " + PosixFilePermissions.toString(a.permissions()) + ", not " + want);
    }
  }

  /**
   * This process's user id: the owner of a file it creates (java.base only, so it works in the
   * bundle's jlink runtime, which has no jdk.security.auth).
   */
  static final class Owner {
    static final long UID = uid();

    private Owner() {
    }

    private static long uid() {
      try {
        Path probe = Files.createTempFile("vertx-cuda-uid", null);
        try {
          return ((Number) Files.getAttribute(probe, "unix:uid", LinkOption.NOFOLLOW_LINKS)).longValue();
        } finally {
          Files.deleteIfExists(probe);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot learn this process's user id: " + e.getMessage(), e);
      }
    }
  }

  Path path() {
    return path;
  }

  /** Where the link's rings start in the file: past a region of {@code size} bytes, on a page. */
  private static long ringsAt(long size) {
    return alignUp(size);
  }

  /** The file's length for a region of {@code size} bytes: the region, then the link's rings. */
  private static long fileSize(long size) {
    return ringsAt(size) + LinkRing.PAIR_BYTES;
  }

  /** The ring from the device verticle to the device host. */
  LinkRing toDeviceHost() {
    return toDeviceHost;
  }

  /** The ring from the device host to the device verticle. */
  LinkRing toNode() {
    return toNode;
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

  private static long footprint(long length) {
    return Math.max(ALIGN, alignUp(length));
  }

  private static long alignUp(long length) {
    return (length + ALIGN - 1) / ALIGN * ALIGN;
  }

  /**
   * What users may hold of the region at once, all together: three quarters of it. Slots users hold
   * return only when they release them or drop them, so without a bound one user holding large
   * downloads would leave every other transfer without a slot; with it, a quarter of the region is
   * always there for transfers in flight. Three quarters, not half: a region a little under the
   * 2 GiB one mapping allows (the default) lends a 1 GiB download whole, straight from the GPU.
   */
  long heldLimit() {
    return heldLimit(size);
  }

  /** What users may hold at once of a region of {@code size} bytes. */
  static long heldLimit(long size) {
    return size - size / 4;
  }

  /** Bytes users hold now. */
  synchronized long held() {
    return held;
  }

  /**
   * Counts a slot of {@code length} bytes a user is about to hold (lent by {@link #buffer});
   * false, counting nothing, when that would pass {@link #heldLimit}.
   */
  synchronized boolean hold(long length) {
    long fp = footprint(length);
    if (held + fp > heldLimit()) {
      return false;
    }
    held += fp;
    return true;
  }

  /** Undoes {@link #hold} for a slot that was never lent. */
  synchronized void unhold(long length) {
    held -= footprint(length);
  }

  /** A free slot of {@code length} bytes, or -1 when none is free. */
  synchronized long allocate(long length) {
    long want = footprint(length);
    for (Map.Entry<Long, Long> e : free.entrySet()) {
      long extent = e.getValue();
      if (extent >= want) {
        long offset = e.getKey();
        // Read before the removal: TreeMap may reuse a removed entry's node for its successor,
        // so e would then read the successor's length (which corrupted the free list).
        free.remove(offset);
        if (extent > want) {
          free.put(offset + want, extent - want);
        }
        return offset;
      }
    }
    return -1;
  }

  synchronized void release(long offset, long length) {
    long len = footprint(length);
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

  /** The largest slot that could ever be handed out: what users may hold at once. */
  long largestSlot() {
    return heldLimit();
  }

  /**
   * A Vert.x buffer over a slot with room for {@code capacity} bytes, holding {@code length}, counted
   * by {@link #hold} before; the slot returns to the region (and stops counting) when the buffer is
   * released ({@link LentBuffers#release}) or it and every slice of it are unreachable.
   */
  Buffer buffer(long offset, int capacity, int length) {
    return lent.lend(slice(offset, capacity), length, () -> {
      synchronized (this) {
        release(offset, capacity);
        unhold(capacity);
      }
    });
  }

  /** Where a buffer lies in the region, or -1 if it does not. */
  long offsetOf(Buffer buffer) {
    ByteBuf buf = VertxInternals.byteBuf(buffer);
    if (!buf.hasMemoryAddress()) {
      return -1;
    }
    long address = buf.memoryAddress() + buf.readerIndex();
    long offset = address - base;
    return offset >= 0 && offset + buf.readableBytes() <= size ? offset : -1;
  }
}
