package com.vertxcuda.library.rand;

/**
 * The 32-bit Sobol sequence in Gray-code order, point {@code i} of dimension {@code d} computed
 * directly (so any offset costs nothing). Dimension 1 is van der Corput's; dimensions 2 to 16 use
 * Joe and Kuo's direction numbers (new-joe-kuo-6.21201), the set cuRAND's SOBOL32 uses.
 */
final class Sobol32 implements Bits {

  /** Dimensions the host backend has direction numbers for. */
  static final int MAX_DIMENSIONS = 16;

  // {degree s, coefficients a, m_1 .. m_s} for dimensions 2..16.
  private static final int[][] JOE_KUO = {
    {1, 0, 1}, {2, 1, 1, 3}, {3, 1, 1, 3, 1}, {3, 2, 1, 1, 1}, {4, 1, 1, 1, 3, 3}, {4, 4, 1, 3, 5, 13},
    {5, 2, 1, 1, 5, 5, 17}, {5, 4, 1, 1, 5, 5, 5}, {5, 7, 1, 1, 7, 11, 19}, {5, 11, 1, 1, 5, 1, 1},
    {5, 13, 1, 1, 1, 3, 11}, {5, 14, 1, 3, 5, 5, 31}, {6, 1, 1, 3, 3, 9, 7, 49}, {6, 13, 1, 1, 1, 15, 21, 21},
    {6, 16, 1, 3, 1, 13, 27, 49}
  };

  private final int[] directions;
  private long index;

  Sobol32(int dimension, long offset) {
    directions = directions(dimension);
    index = offset;
  }

  @Override
  public int next() {
    long gray = index ^ (index >>> 1);
    index++;
    int x = 0;
    for (int bit = 0; gray != 0 && bit < 32; bit++, gray >>>= 1) {
      if ((gray & 1) != 0) {
        x ^= directions[bit];
      }
    }
    return x;
  }

  /** v_1 .. v_32 of a 0-based dimension. */
  static int[] directions(int dimension) {
    int[] v = new int[32];
    if (dimension == 0) {
      for (int k = 0; k < 32; k++) {
        v[k] = 1 << (31 - k);
      }
      return v;
    }
    int[] row = JOE_KUO[dimension - 1];
    int s = row[0];
    int a = row[1];
    long[] m = new long[33];
    for (int k = 1; k <= s; k++) {
      m[k] = row[1 + k];
    }
    for (int k = s + 1; k <= 32; k++) {
      long next = m[k - s] ^ (m[k - s] << s);
      for (int j = 1; j < s; j++) {
        if (((a >>> (s - 1 - j)) & 1) != 0) {
          next ^= m[k - j] << j;
        }
      }
      m[k] = next;
    }
    for (int k = 1; k <= 32; k++) {
      v[k - 1] = (int) (m[k] << (32 - k));
    }
    return v;
  }
}
