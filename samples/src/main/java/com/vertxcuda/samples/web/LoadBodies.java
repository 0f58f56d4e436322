package com.vertxcuda.samples.web;

import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Prebuilt request bodies for one n (A then B, little-endian float32) and the answers each must
 * get: the product, and for the echo endpoint A's bytes. The entries are -2, -1, 1 or 2, so every
 * sum of products is an integer well inside float32's exact range, and a zero one is +0 (no
 * product is zero, so no sum can be -0): the GPU's product (FP32 or TF32, summed in any order)
 * equals the CPU's bit for bit, and an answer is checked by comparing bytes. GemmServer's tests
 * and the bench module's {@code WebLoad} send them.
 */
public final class LoadBodies {

  public final int n;
  public final List<Buffer> bodies = new ArrayList<>();
  public final List<Buffer> products = new ArrayList<>();
  public final List<Buffer> echoes = new ArrayList<>();

  public LoadBodies(int n, int count, long seed) {
    this.n = n;
    SplittableRandom random = new SplittableRandom(seed);
    for (int k = 0; k < count; k++) {
      int[] a = entries(random, n);
      int[] b = entries(random, n);
      Buffer body = Buffer.buffer(8 * n * n);
      append(body, a);
      append(body, b);
      bodies.add(body);
      products.add(append(Buffer.buffer(4 * n * n), product(n, a, b)));
      echoes.add(body.getBuffer(0, 4 * n * n));
    }
  }

  private static int[] entries(SplittableRandom random, int n) {
    return random.ints((long) n * n, 0, 4).map(i -> i < 2 ? i - 2 : i - 1).toArray();
  }

  /** Row-major C = A B, exactly. */
  static int[] product(int n, int[] a, int[] b) {
    int[] c = new int[n * n];
    for (int i = 0; i < n; i++) {
      for (int k = 0; k < n; k++) {
        int aik = a[i * n + k];
        for (int j = 0; j < n; j++) {
          c[i * n + j] += aik * b[k * n + j];
        }
      }
    }
    return c;
  }

  private static Buffer append(Buffer into, int[] values) {
    for (int v : values) {
      into.appendFloatLE(v);
    }
    return into;
  }
}
