package com.vertxcuda;

import com.vertxcuda.testing.CoreSamples;
import com.vertxcuda.testing.WireFuzz;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Mutated wire bytes of every core message type decode or fail with WireFormatException, nothing else. */
class WireFuzzTest {

  @Test
  void mutatedBytesGiveOnlyWireFormatException() {
    WireFuzz.assertEveryTypeHasASample(CoreSamples.all());
    long[] outcome = WireFuzz.run(CoreSamples.all(), 20240611L, 3000);
    // Both outcomes occur: the mutations reach past the header checks into the readers.
    assertTrue(outcome[0] > 1000 && outcome[1] > 10_000, "decoded " + outcome[0] + ", refused " + outcome[1]);
  }
}
