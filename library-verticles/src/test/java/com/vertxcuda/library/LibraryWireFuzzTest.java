package com.vertxcuda.library;

import com.vertxcuda.device.isolation.IsolationSamples;
import com.vertxcuda.testing.CoreSamples;
import com.vertxcuda.testing.LibrarySamples;
import com.vertxcuda.testing.WireFuzz;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Mutated wire bytes of every type registered on a GPU node's class path (core, link, library and
 * kernel messages) decode or fail with WireFormatException, nothing else.
 */
class LibraryWireFuzzTest {

  @Test
  void mutatedBytesOfEveryRegisteredTypeGiveOnlyWireFormatException() {
    List<Object> samples = new ArrayList<>(CoreSamples.all());
    samples.addAll(IsolationSamples.all());
    samples.addAll(LibrarySamples.all());
    WireFuzz.assertEveryTypeHasASample(samples);
    long[] outcome = WireFuzz.run(samples, 20240611L, 1500);
    assertTrue(outcome[0] > 1000 && outcome[1] > 10_000, "decoded " + outcome[0] + ", refused " + outcome[1]);
  }
}
