package com.vertxcuda.testing;

import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.WireCodec;
import io.vertx.core.buffer.Buffer;

import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Mutates the wire form of valid samples (bit flips, truncation, length and count fields set to
 * huge or negative values, random bytes) and decodes each result: only a value or a
 * {@link WireFormatException} may come out. Shared by the modules that add wire types.
 */
public final class WireFuzz {

  private static final int[] INTS = {Integer.MAX_VALUE, Integer.MAX_VALUE - 1, Integer.MAX_VALUE - 4,
    Integer.MIN_VALUE, -2, -1, 0, 1, 0x7fff_fff0, 1 << 30, 1 << 20, 65536};
  private static final long[] LONGS = {Long.MAX_VALUE, Long.MIN_VALUE, -1, 1L << 62, 1L << 61, (1L << 62) + 1,
    Long.MAX_VALUE / 2, Integer.MAX_VALUE + 1L, -(1L << 62)};

  private WireFuzz() {
  }

  /** Fails unless every wire type {@link CudaCodecs} registers has at least one sample. */
  public static void assertEveryTypeHasASample(List<?> samples) {
    Set<String> missing = new TreeSet<>();
    for (WireType<?> t : CudaCodecs.wireTypes()) {
      if (samples.stream().noneMatch(s -> s.getClass() == t.type())) {
        missing.add(t.name());
      }
    }
    assertTrue(missing.isEmpty(), "wire types without a fuzz sample: " + missing);
  }

  /**
   * Runs {@code casesPerSample} mutations of each sample's wire form through its codec; returns how
   * many decoded and how many were refused ({@code [decoded, refused]}).
   */
  public static long[] run(List<?> samples, long seed, int casesPerSample) {
    Random random = new Random(seed);
    long decoded = 0;
    long refused = 0;
    for (Object sample : samples) {
      WireCodec<Object> codec = codecFor(sample);
      Buffer wire = Buffer.buffer();
      codec.encodeToWire(wire, sample);
      byte[] valid = wire.getBytes();
      for (int i = 0; i < casesPerSample; i++) {
        byte[] bytes = mutate(valid, random);
        int prefix = random.nextInt(4) == 0 ? random.nextInt(8) : 0;
        Buffer in = Buffer.buffer(new byte[prefix]).appendBytes(bytes);
        try {
          codec.decodeFromWire(prefix, in);
          decoded++;
        } catch (WireFormatException e) {
          refused++;
        } catch (Throwable t) {
          fail(codec.name() + " case " + i + " (seed " + seed + ") threw " + t + " for bytes "
            + hex(bytes), t);
        }
      }
    }
    return new long[] {decoded, refused};
  }

  @SuppressWarnings("unchecked")
  private static WireCodec<Object> codecFor(Object sample) {
    WireType<?> type = CudaCodecs.wireTypes().stream().filter(t -> t.type() == sample.getClass()).findFirst()
      .orElseThrow(() -> new AssertionError("no wire type for " + sample.getClass()));
    return (WireCodec<Object>) CudaCodecs.codec(type);
  }

  private static byte[] mutate(byte[] valid, Random random) {
    byte[] b = valid.clone();
    switch (random.nextInt(7)) {
      case 0: { // bit flips, anywhere after the header's length
        int flips = 1 + random.nextInt(3);
        for (int f = 0; f < flips && b.length > 5; f++) {
          int at = 5 + random.nextInt(b.length - 5);
          b[at] ^= (byte) (1 << random.nextInt(8));
        }
        return b;
      }
      case 1: { // truncation, the header's length fixed to match
        int len = 5 + random.nextInt(Math.max(1, b.length - 5));
        byte[] t = java.util.Arrays.copyOf(b, Math.min(len, b.length));
        putInt(t, 0, t.length - 4);
        return t;
      }
      case 2: { // a 4-byte field (a length, a count, an int) set to an extreme
        if (b.length > 9) {
          putInt(b, 5 + random.nextInt(b.length - 8), INTS[random.nextInt(INTS.length)]);
        }
        return b;
      }
      case 3: { // an 8-byte field (a count, an offset, a length) set to an extreme
        if (b.length > 13) {
          long v = LONGS[random.nextInt(LONGS.length)];
          int at = 5 + random.nextInt(b.length - 12);
          for (int k = 0; k < 8; k++) {
            b[at + k] = (byte) (v >>> (56 - 8 * k));
          }
        }
        return b;
      }
      case 4: { // a run of random bytes
        if (b.length > 5) {
          int at = 5 + random.nextInt(b.length - 5);
          int n = 1 + random.nextInt(Math.min(16, b.length - at));
          for (int k = 0; k < n; k++) {
            b[at + k] = (byte) random.nextInt(256);
          }
        }
        return b;
      }
      case 5: { // the header's own length set to an extreme
        putInt(b, 0, INTS[random.nextInt(INTS.length)]);
        return b;
      }
      default: { // a random payload behind a valid header
        byte[] r = new byte[5 + random.nextInt(64)];
        random.nextBytes(r);
        putInt(r, 0, r.length - 4);
        r[4] = b[4];
        return r;
      }
    }
  }

  private static void putInt(byte[] b, int at, int v) {
    b[at] = (byte) (v >>> 24);
    b[at + 1] = (byte) (v >>> 16);
    b[at + 2] = (byte) (v >>> 8);
    b[at + 3] = (byte) v;
  }

  private static String hex(byte[] bytes) {
    StringBuilder s = new StringBuilder();
    for (byte x : bytes) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }
}
