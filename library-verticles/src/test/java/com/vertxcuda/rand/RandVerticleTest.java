package com.vertxcuda.rand;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.library.HostDeviceTest;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Random numbers on the host backend: repeatable, positioned by offset, with the right moments. */
class RandVerticleTest extends HostDeviceTest {

  private static final int N = 4096;

  private BufferHandle f32s(int n) {
    return await(device.alloc(DType.F32, n));
  }

  @Test
  void sameSeedSameNumbersOtherSeedOtherNumbers() {
    for (RngType gen : RngType.values()) {
      BufferHandle a = f32s(64);
      BufferHandle b = f32s(64);
      BufferHandle c = f32s(64);
      await(rand.uniform(gen, 7, a));
      await(rand.uniform(gen, 7, b));
      await(rand.uniform(gen, 8, c));
      assertArrayEquals(readF32(a), readF32(b), gen + " repeats");
      if (!gen.isQuasi()) {
        assertFalse(java.util.Arrays.equals(readF32(a), readF32(c)), gen + " depends on the seed");
      }
    }
  }

  @Test
  void offsetContinuesTheSequence() {
    for (RngType gen : new RngType[] {RngType.PHILOX4_32_10, RngType.XORWOW, RngType.MRG32K3A, RngType.SOBOL32}) {
      BufferHandle whole = f32s(32);
      BufferHandle tail = f32s(16);
      await(rand.uniform(gen, 3, whole));
      await(rand.generate(new RandRequest().setGenerator(gen).setSeed(3).setOffset(16).setOutput(tail)));
      assertArrayEquals(java.util.Arrays.copyOfRange(readF32(whole), 16, 32), readF32(tail), gen.name());
    }
  }

  /**
   * A request's numbers depend on its seed and offset only, never on what ran before: requests that
   * continue each other (same seed, each offset where the last ended) give what one request made
   * after a request of another seed. For uniforms that is also the matching stretch of one long
   * request. (The cuda engine skips re-seeding a generator that already stands where a request
   * starts; on the H200, XORWOW normals at an offset are not the tail of a longer run, so only
   * uniforms take that path.)
   */
  @Test
  void aRequestsNumbersDependOnItsSeedAndOffsetOnly() {
    for (RngType gen : new RngType[] {RngType.PHILOX4_32_10, RngType.XORWOW, RngType.MRG32K3A}) {
      for (Distribution dist : new Distribution[] {Distribution.UNIFORM, Distribution.NORMAL}) {
        BufferHandle whole = f32s(3 * 64);
        await(rand.generate(new RandRequest().setGenerator(gen).setDistribution(dist).setSeed(11).setOutput(whole)));
        BufferHandle[] parts = {f32s(64), f32s(64), f32s(64)};
        for (int i = 0; i < 3; i++) {
          await(rand.generate(new RandRequest().setGenerator(gen).setDistribution(dist).setSeed(11).setOffset(64L * i)
            .setOutput(parts[i])));
        }
        // The middle part again, after a request of another seed moved the generator.
        BufferHandle other = f32s(64);
        BufferHandle again = f32s(64);
        await(rand.generate(new RandRequest().setGenerator(gen).setDistribution(dist).setSeed(12).setOutput(other)));
        await(rand.generate(new RandRequest().setGenerator(gen).setDistribution(dist).setSeed(11).setOffset(64)
          .setOutput(again)));
        String what = gen + " " + dist;
        assertArrayEquals(readF32(again), readF32(parts[1]), what + ": the same seed and offset after another seed");
        assertFalse(java.util.Arrays.equals(readF32(other), readF32(parts[0])), what + ": another seed");
        if (dist == Distribution.UNIFORM) {
          float[] expected = readF32(whole);
          for (int i = 0; i < 3; i++) {
            assertArrayEquals(java.util.Arrays.copyOfRange(expected, 64 * i, 64 * (i + 1)), readF32(parts[i]),
              what + ": part " + i + " of one long request");
          }
        }
      }
    }
  }

  private static double mean(double[] v) {
    double s = 0;
    for (double x : v) {
      s += x;
    }
    return s / v.length;
  }

  private static double stddev(double[] v) {
    double m = mean(v);
    double s = 0;
    for (double x : v) {
      s += (x - m) * (x - m);
    }
    return Math.sqrt(s / v.length);
  }

  @Test
  void distributionsHaveTheirMoments() {
    for (RngType gen : RngType.values()) {
      BufferHandle u = f32s(N);
      await(rand.uniform(gen, 11, u));
      double[] uv = widen(readF32(u));
      for (double x : uv) {
        assertTrue(x > 0 && x <= 1, gen + " uniform in (0, 1]: " + x);
      }
      assertEquals(0.5, mean(uv), 0.02, gen + " uniform mean");

      BufferHandle z = await(device.alloc(DType.F64, N));
      await(rand.normal(gen, 12, 2, 3, z));
      double[] zv = readF64(z);
      assertEquals(2, mean(zv), 0.15, gen + " normal mean");
      assertEquals(3, stddev(zv), 0.15, gen + " normal stddev");

      BufferHandle l = f32s(N);
      await(rand.logNormal(gen, 13, 0.5, 0.25, l));
      double[] lv = widen(readF32(l));
      for (int i = 0; i < lv.length; i++) {
        assertTrue(lv[i] > 0, "log-normal is positive");
        lv[i] = Math.log(lv[i]);
      }
      assertEquals(0.5, mean(lv), 0.02, gen + " log-normal's log mean");
      assertEquals(0.25, stddev(lv), 0.02, gen + " log-normal's log stddev");

      for (double lambda : new double[] {4, 500}) {
        BufferHandle p = await(device.alloc(DType.U32, N));
        await(rand.poisson(gen, 14, lambda, p));
        long[] pv = readU32(p);
        double[] dv = new double[N];
        for (int i = 0; i < N; i++) {
          dv[i] = pv[i];
        }
        assertEquals(lambda, mean(dv), 0.1 * Math.sqrt(lambda) + 0.05, gen + " poisson mean " + lambda);
        assertEquals(Math.sqrt(lambda), stddev(dv), 0.1 * Math.sqrt(lambda), gen + " poisson stddev " + lambda);
      }
    }
  }

  @Test
  void aViewIsFilledAndNothingElse() {
    BufferHandle whole = f32(new float[12]);
    await(rand.uniform(RngType.XORWOW, 5, whole.view(4, 6)));
    float[] v = readF32(whole);
    BufferHandle alone = f32s(6);
    await(rand.uniform(RngType.XORWOW, 5, alone));
    assertArrayEquals(readF32(alone), java.util.Arrays.copyOfRange(v, 4, 10), "the view holds the sequence");
    for (int i : new int[] {0, 1, 2, 3, 10, 11}) {
      assertEquals(0f, v[i], "element " + i + " outside the view");
    }
  }

  @Test
  void sobolFillsDimensionAfterDimension() {
    BufferHandle out = await(device.alloc(DType.F64, 8));
    await(rand.generate(new RandRequest().setGenerator(RngType.SOBOL32).setDimensions(2).setOutput(out)));
    double[] v = readF64(out);
    // The first points of Sobol's first dimension are 0, 1/2, 3/4, 1/4, each lifted into (0, 1] by
    // at most 2^-32 (the host adds 2^-33, cuRAND 2^-32).
    double lift = 0x1p-32;
    assertArrayEquals(new double[] {0, 0.5, 0.75, 0.25}, java.util.Arrays.copyOfRange(v, 0, 4), lift,
      "dimension 1");
    assertTrue(v[0] > 0, "values are in (0, 1]");
    assertEquals(v[0], v[4], 0, "dimension 2 starts at its first point");
  }

  @Test
  void badRequestsNameTheField() {
    BufferHandle f = f32s(9);
    assertBadRequest(rand.poisson(RngType.XORWOW, 1, 3, f), "output has dtype F32");
    assertBadRequest(rand.uniform(RngType.XORWOW, 1, await(device.alloc(DType.U32, 4))), "output has dtype U32");
    assertBadRequest(rand.normal(RngType.PHILOX4_32_10, 1, 0, 1, f), "output length must be even");
    assertBadRequest(rand.normal(RngType.PHILOX4_32_10, 1, 0, 0, f32s(8)), "stddev");
    assertBadRequest(rand.poisson(RngType.PHILOX4_32_10, 1, -1, await(device.alloc(DType.U32, 4))), "lambda");
    assertBadRequest(rand.generate(new RandRequest().setGenerator(RngType.MTGP32).setOffset(4).setOutput(f)), "offset");
    assertBadRequest(rand.generate(new RandRequest().setOffset(-1).setOutput(f)), "offset");
    // An offset whose end passes 2^63 - 1 is refused before anything is queued, and the device serves on.
    BufferHandle eight = f32s(8);
    assertBadRequest(rand.generate(new RandRequest().setOffset(Long.MAX_VALUE - 3).setOutput(eight)),
      "passes the generator's last position");
    assertEquals(eight, await(rand.generate(new RandRequest().setOffset(Long.MAX_VALUE - 8).setOutput(eight))));
    assertBadRequest(rand.generate(new RandRequest().setDimensions(2).setOutput(f32s(8))), "dimensions applies");
    assertBadRequest(rand.generate(new RandRequest().setGenerator(RngType.SOBOL32).setDimensions(2).setOutput(f)),
      "dimensions");
    assertBadRequest(rand.generate(new RandRequest().setGenerator(null).setOutput(f)), "generator is missing");
    assertBadRequest(rand.generate(new RandRequest()), "output is missing");
  }
}
