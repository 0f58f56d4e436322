package com.vertxcuda.library.rand;

/**
 * L'Ecuyer's MRG32k3a. The seed scales the default state 12345 of each component (low half xor
 * 0x55555555, high half xor 0xAAAAAAAA); skipping ahead raises each component's matrix to the
 * offset's power modulo its modulus. Words are the combined output scaled to 32 bits.
 */
final class Mrg32k3a implements Bits {

  private static final long M1 = 4294967087L;
  private static final long M2 = 4294944443L;
  private static final long A12 = 1403580;
  private static final long A13N = 810728;
  private static final long A21 = 527612;
  private static final long A23N = 1370589;
  private static final double NORM = 2.328306549295727688e-10;

  private final long[] s1 = {12345, 12345, 12345};
  private final long[] s2 = {12345, 12345, 12345};

  Mrg32k3a(long seed, long offset) {
    long x1 = (seed ^ 0x55555555L) & 0xFFFF_FFFFL;
    long x2 = ((seed >>> 32) ^ 0xAAAAAAAAL) & 0xFFFF_FFFFL;
    if (x1 % M1 != 0) {
      for (int i = 0; i < 3; i++) {
        s1[i] = mulMod(x1 % M1, s1[i], M1);
      }
    }
    if (x2 % M2 != 0) {
      for (int i = 0; i < 3; i++) {
        s2[i] = mulMod(x2 % M2, s2[i], M2);
      }
    }
    if (offset > 0) {
      jump(s1, new long[][] {{0, 1, 0}, {0, 0, 1}, {M1 - A13N, A12, 0}}, offset, M1);
      jump(s2, new long[][] {{0, 1, 0}, {0, 0, 1}, {M2 - A23N, 0, A21}}, offset, M2);
    }
  }

  @Override
  public int next() {
    long p1 = Math.floorMod(A12 * s1[1] - A13N * s1[0], M1);
    s1[0] = s1[1];
    s1[1] = s1[2];
    s1[2] = p1;
    long p2 = Math.floorMod(A21 * s2[2] - A23N * s2[0], M2);
    s2[0] = s2[1];
    s2[1] = s2[2];
    s2[2] = p2;
    double u = (p1 > p2 ? p1 - p2 : p1 - p2 + M1) * NORM;
    return (int) (long) (u * 4294967296.0);
  }

  private static long mulMod(long a, long b, long m) {
    return Long.remainderUnsigned(a * b, m);
  }

  private static void jump(long[] s, long[][] a, long n, long m) {
    long[][] result = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    while (n != 0) {
      if ((n & 1) != 0) {
        result = multiply(a, result, m);
      }
      a = multiply(a, a, m);
      n >>>= 1;
    }
    long[] out = new long[3];
    for (int i = 0; i < 3; i++) {
      long acc = 0;
      for (int j = 0; j < 3; j++) {
        acc = (acc + mulMod(result[i][j], s[j], m)) % m;
      }
      out[i] = acc;
    }
    System.arraycopy(out, 0, s, 0, 3);
  }

  private static long[][] multiply(long[][] a, long[][] b, long m) {
    long[][] c = new long[3][3];
    for (int i = 0; i < 3; i++) {
      for (int j = 0; j < 3; j++) {
        long acc = 0;
        for (int k = 0; k < 3; k++) {
          acc = (acc + mulMod(a[i][k], b[k][j], m)) % m;
        }
        c[i][j] = acc;
      }
    }
    return c;
  }
}
