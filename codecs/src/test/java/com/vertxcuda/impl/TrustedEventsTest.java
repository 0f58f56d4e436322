package com.vertxcuda.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.message.DeviceEvent;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a subscriber hears of the events offered, given what the device answers when asked: only
 * events the device stands behind, each once, in the order offered.
 */
class TrustedEventsTest {

  private static final long G = 1_000;

  private final Queue<Promise<DeviceInfo>> asked = new ArrayDeque<>();
  private final List<DeviceEvent> heard = new ArrayList<>();
  private final AtomicLong dropped = new AtomicLong();
  private final TrustedEvents trusted = new TrustedEvents(() -> {
    Promise<DeviceInfo> p = Promise.promise();
    asked.add(p);
    return p.future();
  }, heard::add, dropped);

  @Test
  void aLostIsHeardOnlyWhenTheDeviceSaysLostOrNoLongerAnswers() {
    trusted.startFrom(Future.succeededFuture(G));
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    answer(DeviceState.READY, G);
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    answer(DeviceState.LOST, G);
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    answer(DeviceState.LOST, G);
    assertEquals(List.of("LOST/" + G), names());
    assertEquals(2, dropped.get(), "the forged one while READY and the repeat");

    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device serves this address"));
    assertEquals(List.of("LOST/" + G, "REMOVED/" + G), names());
  }

  @Test
  void aGenerationChangeIsHeardOnlyForAGenerationTheDeviceReachedAndNoOlderThanKnown() {
    trusted.startFrom(Future.succeededFuture(G));
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G);
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G - 1, G));
    answer(DeviceState.READY, G);
    assertEquals(List.of(), names(), "ahead of the device, then a replay of the change it started from");
    assertEquals(2, dropped.get());

    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G + 1);
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G + 1);
    assertEquals(List.of("GENERATION_CHANGED/" + (G + 1)), names());
    assertEquals(3, dropped.get(), "and the repeat");
  }

  @Test
  void eventsWaitForTheStartingGenerationAndArriveInTheOrderOffered() {
    Promise<Long> start = Promise.promise();
    trusted.startFrom(start.future());
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    trusted.offer(event(DeviceEvent.Type.LOST, G + 1, G + 1));
    assertEquals(0, asked.size(), "nothing is judged before the generation to start from is known");
    start.complete(G);
    answer(DeviceState.LOST, G + 1);
    answer(DeviceState.LOST, G + 1);
    assertEquals(List.of("GENERATION_CHANGED/" + (G + 1), "LOST/" + (G + 1)), names());
    assertEquals(0, dropped.get());
  }

  private void answer(DeviceState state, long generation) {
    asked.remove().complete(new DeviceInfo().setState(state).setGeneration(generation));
  }

  private List<String> names() {
    return heard.stream().map(e -> e.getType() + "/" + e.getNewGeneration()).toList();
  }

  private static DeviceEvent event(DeviceEvent.Type type, long oldGeneration, long newGeneration) {
    return new DeviceEvent(type, "n", 0, oldGeneration, newGeneration, "test");
  }
}
