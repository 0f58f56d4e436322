package com.vertxcuda.library.rand;

/**
 * Philox4x32-10 (Salmon et al., Random123) as cuRAND's {@code curand_init(seed, 0, offset)} sets it
 * up: key = the seed's two halves, counter = offset / 4, words taken in order x, y, z, w of each block.
 */
final class Philox4x32 implements Bits {

  private static final int M0 = 0xD2511F53;
  private static final int M1 = 0xCD9E8D57;
  private static final int W0 = 0x9E3779B9;
  private static final int W1 = 0xBB67AE85;

  private final int key0;
  private final int key1;
  private long counter;
  private final int[] block = new int[4];
  private int pos;

  Philox4x32(long seed, long offset) {
    key0 = (int) seed;
    key1 = (int) (seed >>> 32);
    counter = offset >>> 2;
    pos = (int) (offset & 3);
    fill();
  }

  @Override
  public int next() {
    if (pos == 4) {
      counter++;
      fill();
      pos = 0;
    }
    return block[pos++];
  }

  private void fill() {
    block(new int[] {(int) counter, (int) (counter >>> 32), 0, 0}, key0, key1, block);
  }

  /** One Philox4x32-10 block: 10 rounds with the key bumped between them. */
  static void block(int[] ctr, int k0, int k1, int[] out) {
    int c0 = ctr[0];
    int c1 = ctr[1];
    int c2 = ctr[2];
    int c3 = ctr[3];
    for (int round = 0; round < 10; round++) {
      if (round > 0) {
        k0 += W0;
        k1 += W1;
      }
      long p0 = (M0 & 0xFFFF_FFFFL) * (c0 & 0xFFFF_FFFFL);
      long p1 = (M1 & 0xFFFF_FFFFL) * (c2 & 0xFFFF_FFFFL);
      int hi0 = (int) (p0 >>> 32);
      int lo0 = (int) p0;
      int hi1 = (int) (p1 >>> 32);
      int lo1 = (int) p1;
      c0 = hi1 ^ c1 ^ k0;
      c1 = lo1;
      c2 = hi0 ^ c3 ^ k1;
      c3 = lo0;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
  }
}
