package com.vertxcuda.device.spi;

import com.vertxcuda.BufferHandle;

import java.util.Arrays;

/**
 * What one request reads and writes, by key: a buffer's id, or another resource's key (a module, a
 * recorded pipeline). Two footprints conflict when one writes what the other touches: such requests
 * keep their order. Key spaces: buffer ids are positive; a module's key is {@code -1 - id} (the
 * kernel library); a pipeline's is {@link #pipelineKey}.
 */
public final class Footprint {

  /** Touches nothing that another request could depend on (alloc, stats, describe). */
  public static final Footprint NONE = new Footprint(new long[0], new long[0], false);
  /** Conflicts with everything: for bodies that cannot be read. */
  public static final Footprint EVERYTHING = new Footprint(new long[0], new long[0], true);

  private final long[] reads;
  private final long[] writes;
  private final boolean everything;

  private Footprint(long[] reads, long[] writes, boolean everything) {
    this.reads = reads;
    this.writes = writes;
    this.everything = everything;
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * A recorded pipeline's key: its replays read it and its release writes it, so a release waits for
   * the replays sent before it. Far below every module key (module ids stay under 2^62).
   */
  public static long pipelineKey(long id) {
    return Long.MIN_VALUE + id;
  }

  /** Whether it conflicts with every other footprint. */
  public boolean isEverything() {
    return everything;
  }

  /** Whether this and {@code other} must keep their order. */
  public boolean conflicts(Footprint other) {
    if (everything || other.everything) {
      return true;
    }
    for (long w : writes) {
      if (contains(other.reads, w) || contains(other.writes, w)) {
        return true;
      }
    }
    for (long w : other.writes) {
      if (contains(reads, w)) {
        return true;
      }
    }
    return false;
  }

  private static boolean contains(long[] keys, long key) {
    for (long k : keys) {
      if (k == key) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return everything ? "everything" : "reads " + Arrays.toString(reads) + " writes " + Arrays.toString(writes);
  }

  /** Collects keys; null handles are skipped (the request fails its checks later). */
  public static final class Builder {
    private long[] reads = new long[4];
    private long[] writes = new long[4];
    private int r;
    private int w;

    public Builder read(BufferHandle h) {
      return h == null ? this : readKey(h.id());
    }

    public Builder write(BufferHandle h) {
      return h == null ? this : writeKey(h.id());
    }

    /** A read of a resource other than a buffer; keys below zero never meet a buffer id. */
    public Builder readKey(long key) {
      if (r == reads.length) {
        reads = Arrays.copyOf(reads, r * 2);
      }
      reads[r++] = key;
      return this;
    }

    public Builder writeKey(long key) {
      if (w == writes.length) {
        writes = Arrays.copyOf(writes, w * 2);
      }
      writes[w++] = key;
      return this;
    }

    /** Everything {@code other} reads and writes (not {@link #EVERYTHING}: the caller checks it). */
    public Builder include(Footprint other) {
      for (long k : other.reads) {
        readKey(k);
      }
      for (long k : other.writes) {
        writeKey(k);
      }
      return this;
    }

    public Footprint build() {
      return new Footprint(Arrays.copyOf(reads, r), Arrays.copyOf(writes, w), false);
    }
  }
}
