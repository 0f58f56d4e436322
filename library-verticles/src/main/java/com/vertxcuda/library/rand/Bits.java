package com.vertxcuda.library.rand;

/** A generator's sequence of 32-bit words, positioned by seed and offset. */
interface Bits {

  /** The next word (unsigned, in an int). */
  int next();

  static long unsigned(int w) {
    return w & 0xFFFF_FFFFL;
  }
}
