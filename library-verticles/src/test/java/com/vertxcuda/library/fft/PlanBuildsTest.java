package com.vertxcuda.library.fft;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Plans being built hold their bytes against the budget before they exist; one always goes. */
class PlanBuildsTest {

  @Test
  void aBuildWaitsForRoomAndOneLargerThanTheBudgetGoesAlone() throws Exception {
    PlanBuilds builds = new PlanBuilds(100);
    builds.reserve(150); // larger than the budget: let through, alone
    CompletableFuture<Void> second = CompletableFuture.runAsync(() -> {
      try {
        builds.reserve(60);
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      }
    });
    assertThrows(TimeoutException.class, () -> second.get(300, TimeUnit.MILLISECONDS));
    builds.adjust(150, 90); // measured smaller once built: still no room for 60 more
    assertThrows(TimeoutException.class, () -> second.get(300, TimeUnit.MILLISECONDS));
    builds.release(90); // taken into the cache
    second.get(10, TimeUnit.SECONDS);
    assertEquals(60, builds.held());
    builds.release(60);
    assertEquals(0, builds.held());
  }
}
