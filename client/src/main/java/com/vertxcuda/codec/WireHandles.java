package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;

/**
 * The handles one message has carried in full, by index ({@link WireOut#writeHandle}), as far as a
 * writer remembers them: the same handle object as one of the last few written is found (by
 * identity, in a table of 64 slots chosen by its identity hash); an equal handle in another object,
 * or one no longer in its slot, is written in full again, which is as correct and a hundred bytes
 * longer. A handle found again keeps its slot, and a new one keeps it for the next {@link #GRACE}
 * written: a batch's shared operands, the same object request after request, are not pushed out by
 * the one-off outputs that land on their slot. Identity, not equality: looking every handle up in a
 * map by its fields costs more than writing it in full.
 */
final class WireHandles {

  private static final int SLOTS = 64;
  /**
   * A handle is not pushed out of its slot by the next few written after it, found again or not: a
   * batch's shared operands are written in full in its first request and found from its second, so
   * the first request's other handles cannot take their slots in between.
   */
  private static final int GRACE = 8;

  /** The first handle written: a message with one (a fill, a download) makes no table. */
  private BufferHandle first;
  private boolean firstFound;
  private BufferHandle[] handles;
  private int[] indexes;
  /** Whether the slot's handle was found again (then it stays). */
  private boolean[] found;
  private int count;

  /** The index at which this very object was written in full, or -1. */
  int indexOf(BufferHandle h) {
    if (handles == null) {
      // A writer makes this at its first handle, so first is set.
      if (h == first) {
        firstFound = true;
        return 0;
      }
      return -1;
    }
    int slot = slot(h);
    if (handles[slot] != h) {
      return -1;
    }
    found[slot] = true;
    return indexes[slot];
  }

  /** Counts {@code h}, written in full, at the next index (the reader numbers every one), and remembers it where it may. */
  void add(BufferHandle h) {
    if (count == 0) {
      first = h;
      count = 1;
      return;
    }
    if (handles == null) {
      handles = new BufferHandle[SLOTS];
      indexes = new int[SLOTS];
      found = new boolean[SLOTS];
      int slot = slot(first);
      handles[slot] = first;
      found[slot] = firstFound;
    }
    int slot = slot(h);
    int index = count++;
    if (handles[slot] == null || !found[slot] && index - indexes[slot] > GRACE) {
      handles[slot] = h;
      indexes[slot] = index;
      found[slot] = false;
    }
  }

  private static int slot(BufferHandle h) {
    int x = System.identityHashCode(h);
    return (x ^ (x >>> 16)) & (SLOTS - 1);
  }
}
