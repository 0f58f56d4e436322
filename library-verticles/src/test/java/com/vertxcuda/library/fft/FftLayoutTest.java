package com.vertxcuda.library.fft;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which layouts are cuFFT's basic one (a complex plan then passes no embeds): contiguous elements,
 * each storage size past the first the transform's, one transform right after the other. The first
 * storage size only sets the distance, so it may differ where the distance is still one transform.
 */
class FftLayoutTest {

  @Test
  void contiguousTransformsOneAfterTheOtherAreTheBasicLayout() {
    assertTrue(new FftLayout(List.of(1 << 24), 1, 1 << 24).contiguous(List.of(1 << 24)));
    assertTrue(new FftLayout(List.of(64, 32), 1, 64 * 32).contiguous(List.of(64, 32)));
    // The slowest storage size is not an address step of its own.
    assertTrue(new FftLayout(List.of(128, 32), 1, 64 * 32).contiguous(List.of(64, 32)));
  }

  @Test
  void stridedPaddedOrSpreadTransformsAreNot() {
    assertFalse(new FftLayout(List.of(64), 2, 128).contiguous(List.of(64)), "stride 2");
    assertFalse(new FftLayout(List.of(64, 40), 1, 64 * 40).contiguous(List.of(64, 32)), "rows padded to 40");
    assertFalse(new FftLayout(List.of(64), 1, 100).contiguous(List.of(64)), "transforms 100 apart");
    assertFalse(new FftLayout(List.of(64), 1, 1).contiguous(List.of(64)), "interleaved batches");
    assertFalse(new FftLayout(List.of(8, 8), 1, 64).contiguous(List.of(64)), "another rank");
  }
}
