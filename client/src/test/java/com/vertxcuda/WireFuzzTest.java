package com.vertxcuda;

import com.vertxcuda.testing.CoreSamples;
import com.vertxcuda.testing.LibrarySamples;
import com.vertxcuda.testing.WireFuzz;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mutated wire bytes of every message type of the contract (core, library and kernel messages)
 * decode or fail with WireFormatException, nothing else.
 */
class WireFuzzTest {

  @Test
  void mutatedBytesGiveOnlyWireFormatException() {
    List<Object> samples = new ArrayList<>(CoreSamples.all());
    samples.addAll(LibrarySamples.all());
    WireFuzz.assertEveryTypeHasASample(samples);
    long[] outcome = WireFuzz.run(samples, 20240611L, 3000);
    // Both outcomes occur: the mutations reach past the header checks into the readers.
    assertTrue(outcome[0] > 1000 && outcome[1] > 10_000, "decoded " + outcome[0] + ", refused " + outcome[1]);
  }
}
