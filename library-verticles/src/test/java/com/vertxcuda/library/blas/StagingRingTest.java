package com.vertxcuda.library.blas;

import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The batched GEMMs' pointer-array ring: parts are handed out after the newest held one, wrap to
 * the start, are never handed out twice while the device may still read them, and come back in
 * order as their events are reached.
 */
class StagingRingTest {

  /** An event the test reaches by hand, counting its references. */
  private static final class Event implements GpuEvent {
    volatile boolean complete;
    int references = 1;

    @Override
    public GpuStream stream() {
      return null;
    }

    @Override
    public boolean isComplete() {
      return complete;
    }

    @Override
    public GpuEvent retain() {
      references++;
      return this;
    }

    @Override
    public void release() {
      references--;
    }
  }

  @Test
  void partsFollowEachOtherWrapAndNeverOverlapWhatTheDeviceStillReads() {
    StagingRing ring = new StagingRing(1000);
    List<Event> events = new ArrayList<>();
    long[] starts = new long[3];
    for (int i = 0; i < 3; i++) {
      starts[i] = ring.reserve(300);
      Event e = new Event();
      events.add(e);
      ring.hold(starts[i], 300, e);
    }
    assertEquals(0, starts[0]);
    assertEquals(300, starts[1]);
    assertEquals(600, starts[2]);
    // 100 bytes left at the end, nothing free at the start: no room while all three are read.
    assertEquals(-1, ring.reserve(300));
    assertEquals(900, ring.reserve(100));

    // The first part's work is done: the next part wraps into its place.
    events.get(0).complete = true;
    assertEquals(0, ring.reserve(300));
    assertEquals(0, events.get(0).references, "a reached part's event is released");
    Event fourth = new Event();
    ring.hold(0, 300, fourth);
    // Wrapped: free only between the new part and the oldest held one (at 300).
    assertEquals(-1, ring.reserve(1));
    events.get(1).complete = true;
    assertEquals(300, ring.reserve(300));
    assertEquals(-1, ring.reserve(301), "the part at 600 is still read");
    assertEquals(2, ring.held());

    // Everything reached: the ring starts over at 0.
    events.get(2).complete = true;
    fourth.complete = true;
    assertEquals(0, ring.reserve(1000));
    assertEquals(0, ring.held());
    assertEquals(-1, ring.reserve(1001), "a part larger than the ring never fits");
  }

  @Test
  void manySmallPartsInFlightFitWhereEightFixedSlotsDidNot() {
    // A coalesced message of 1,024 GEMMs is 16 groups of 64: 16 parts of 64 x 3 pointers in flight.
    StagingRing ring = new StagingRing(CudaBlasEngine.BATCH_STAGING);
    long part = (3L * 64 * 8 + 255) & ~255L;
    List<Event> inFlight = new ArrayList<>();
    for (int group = 0; group < 160; group++) {
      long at = ring.reserve(part);
      assertTrue(at >= 0, "group " + group + " found room");
      assertEquals(group * part, at);
      Event e = new Event();
      inFlight.add(e);
      ring.hold(at, part, e);
    }
    assertEquals(160, ring.held());
    ring.clear();
    for (Event e : inFlight) {
      assertEquals(0, e.references, "closing releases every held event");
    }
  }
}
