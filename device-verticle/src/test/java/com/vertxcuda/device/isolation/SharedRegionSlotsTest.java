package com.vertxcuda.device.isolation;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The region's slots never overlap, however fragmented its free extents get: slots taken and
 * returned in random order (as a chunk ring and lent downloads do) are always disjoint. A free
 * list of three or more extents once handed out a slot over one still in use.
 */
@Tag("runs-once")
class SharedRegionSlotsTest {

  @Test
  void slotsNeverOverlapUnderChurn(@TempDir Path dir) {
    long size = 1 << 24;
    SharedRegion region = SharedRegion.create(dir.resolve("region"), size);
    Random r = new Random(3);
    List<long[]> taken = new ArrayList<>();
    for (int step = 0; step < 20_000; step++) {
      if (!taken.isEmpty() && (r.nextBoolean() || taken.size() > 40)) {
        long[] s = taken.remove(r.nextInt(taken.size()));
        region.release(s[0], s[1]);
        continue;
      }
      long length = r.nextBoolean() ? 4096 : (1 + r.nextInt(64)) * 4096L;
      long at = region.allocate(length);
      if (at < 0) {
        continue;
      }
      assertTrue(at + length <= size, "inside the region");
      for (long[] s : taken) {
        assertTrue(at + length <= s[0] || s[0] + s[1] <= at,
          "slot [" + at + ", +" + length + ") overlaps [" + s[0] + ", +" + s[1] + ") at step " + step);
      }
      taken.add(new long[] {at, length});
    }
  }
}
