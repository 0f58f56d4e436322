package com.vertxcuda.library.rand;

/**
 * MT19937 (Matsumoto and Nishimura), the host backend's stand-in for cuRAND's MTGP32, seeded with
 * {@code init_genrand} from the seed's two halves xored together. Always starts at offset 0, as
 * cuRAND's MTGP32 does.
 */
final class Mt19937 implements Bits {

  private final int[] mt = new int[624];
  private int index = 624;

  Mt19937(long seed) {
    mt[0] = (int) (seed ^ (seed >>> 32));
    for (int i = 1; i < 624; i++) {
      mt[i] = 1812433253 * (mt[i - 1] ^ (mt[i - 1] >>> 30)) + i;
    }
  }

  @Override
  public int next() {
    if (index == 624) {
      twist();
    }
    int y = mt[index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9D2C5680;
    y ^= (y << 15) & 0xEFC60000;
    y ^= y >>> 18;
    return y;
  }

  private void twist() {
    for (int i = 0; i < 624; i++) {
      int y = (mt[i] & 0x8000_0000) | (mt[(i + 1) % 624] & 0x7FFF_FFFF);
      int next = mt[(i + 397) % 624] ^ (y >>> 1);
      if ((y & 1) != 0) {
        next ^= 0x9908B0DF;
      }
      mt[i] = next;
    }
    index = 0;
  }
}
