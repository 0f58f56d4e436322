package com.vertxcuda.library.rand;

/**
 * cuRAND's XORWOW: Marsaglia's xorshift over five words plus a Weyl sequence, seeded as
 * {@code curand_init(seed, 0, offset)} does. Skipping ahead raises the xorshift's GF(2) transition
 * matrix to the offset's power.
 */
final class Xorwow implements Bits {

  private static final int WEYL = 362437;
  private final int[] v = new int[5];
  private int d;

  Xorwow(long seed, long offset) {
    int s0 = (int) seed ^ 0xaad26b49;
    int s1 = (int) (seed >>> 32) ^ 0xf7dcefdd;
    int t0 = 1099087573 * s0;
    int t1 = (int) 2591861531L * s1;
    d = 6615241 + t1 + t0;
    v[0] = 123456789 + t0;
    v[1] = 362436069 ^ t0;
    v[2] = 521288629 + t1;
    v[3] = 88675123 ^ t1;
    v[4] = 5783321 + t0;
    skip(offset);
  }

  @Override
  public int next() {
    step(v);
    d += WEYL;
    return v[4] + d;
  }

  private static void step(int[] v) {
    int t = v[0] ^ (v[0] >>> 2);
    v[0] = v[1];
    v[1] = v[2];
    v[2] = v[3];
    v[3] = v[4];
    v[4] = (v[4] ^ (v[4] << 4)) ^ (t ^ (t << 1));
  }

  private void skip(long n) {
    d += (int) (n * WEYL);
    if (n < 4096) {
      for (long i = 0; i < n; i++) {
        step(v);
      }
      return;
    }
    // Columns of the 160x160 transition matrix: the images of the unit vectors.
    int[][] power = new int[160][];
    for (int j = 0; j < 160; j++) {
      int[] e = new int[5];
      e[j >>> 5] = 1 << (j & 31);
      step(e);
      power[j] = e;
    }
    int[] state = v.clone();
    while (n != 0) {
      if ((n & 1) != 0) {
        state = apply(power, state);
      }
      n >>>= 1;
      if (n != 0) {
        int[][] squared = new int[160][];
        for (int j = 0; j < 160; j++) {
          squared[j] = apply(power, power[j]);
        }
        power = squared;
      }
    }
    System.arraycopy(state, 0, v, 0, 5);
  }

  private static int[] apply(int[][] matrix, int[] x) {
    int[] out = new int[5];
    for (int j = 0; j < 160; j++) {
      if ((x[j >>> 5] & (1 << (j & 31))) != 0) {
        int[] col = matrix[j];
        for (int w = 0; w < 5; w++) {
          out[w] ^= col[w];
        }
      }
    }
    return out;
  }
}
