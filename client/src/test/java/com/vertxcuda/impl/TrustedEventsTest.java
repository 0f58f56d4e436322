package com.vertxcuda.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a subscriber hears of the events offered, given what the device answers when asked: only
 * transitions the device's answer shows, each once, and no question asked for an event that cannot
 * be news.
 */
class TrustedEventsTest {

  private static final long G = 1_000;

  private final Queue<Promise<DeviceInfo>> asked = new ArrayDeque<>();
  private final List<DeviceEvent> heard = new ArrayList<>();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicInteger gone = new AtomicInteger();
  private final TrustedEvents trusted = new TrustedEvents("n", 0, () -> {
    Promise<DeviceInfo> p = Promise.promise();
    asked.add(p);
    return p.future();
  }, heard::add, dropped, gone::incrementAndGet);

  @Test
  void aLostIsHeardOnlyWhenTheDeviceSaysLostAndOnlyOnce() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    answer(DeviceState.READY, G);
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    answer(DeviceState.LOST, G);
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    assertEquals(0, asked.size(), "a LOST already heard is not asked about");
    assertEquals(List.of("LOST/" + G), names());
    assertEquals(2, dropped.get(), "the forged one while READY and the repeat");

    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device serves this address"));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G + 5, G + 5));
    assertEquals(0, asked.size(), "nothing is removed twice");
    assertEquals(List.of("LOST/" + G, "REMOVED/" + G), names());
    assertEquals(1, gone.get());
  }

  @Test
  void aRemovedAnsweredByTheNextIncarnationStartingIsHeardBeforeItsReady() {
    // Undeployed and deployed again before the question about the REMOVED was answered: the new
    // incarnation, still starting, answers it (only a new deployment starts).
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    answer(DeviceState.STARTING, G + 500);
    assertEquals(List.of("REMOVED/" + G), names());
    trusted.offer(event(DeviceEvent.Type.READY, G + 500, G + 500));
    answer(DeviceState.READY, G + 500);
    assertEquals(List.of("REMOVED/" + G, "READY/" + (G + 500)), names());
    assertEquals(0, asked.size());
  }

  @Test
  void aForgedRemovedIsNotConfirmedByTheDeviceStillServing() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    answer(DeviceState.READY, G);
    answer(DeviceState.READY, G); // asked about once more, then dropped
    assertEquals(List.of(), names());
    assertEquals(0, asked.size());
  }

  @Test
  void aGenerationChangeIsHeardOnlyOnceTheDeviceServesItsGeneration() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G);
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.REBUILDING, G + 1);
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G - 1, G));
    assertEquals(0, asked.size(), "a change to the generation known is not asked about");
    assertEquals(List.of(), names(), "ahead of the device, before it serves, then a replay");
    assertEquals(3, dropped.get());

    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G + 1);
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    assertEquals(0, asked.size());
    assertEquals(List.of("GENERATION_CHANGED/" + G + ">" + (G + 1)), changes());
    assertEquals(4, dropped.get(), "and the repeat");
  }

  @Test
  void eventsOfAnOlderGenerationAreDroppedWithoutAQuestion() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    for (long g : new long[] {0, 1, G - 1}) {
      trusted.offer(event(DeviceEvent.Type.LOST, g, g));
      trusted.offer(event(DeviceEvent.Type.REMOVED, g, g));
      trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, Math.max(0, g - 1), g));
      trusted.offer(event(DeviceEvent.Type.READY, g, g));
    }
    assertEquals(0, asked.size());
    assertEquals(12, dropped.get());
    assertEquals(List.of(), names());
  }

  @Test
  void aForgedLostOfTheGenerationBeforeIsNotHeardOnceTheChangeWas() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    // The forged LOST and the real change both came before the device answered: the answer shows a
    // device serving at G + 1, which is the change, not a loss.
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    assertEquals(1, asked.size(), "events that come while one question is out merge into it");
    answer(DeviceState.READY, G + 1);
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    assertEquals(0, asked.size());
    assertEquals(List.of("GENERATION_CHANGED/" + G + ">" + (G + 1)), changes());
    assertEquals(4, dropped.get());
  }

  @Test
  void anUndeployAndRedeployWithinOneQuestionIsHeardAsRemovedThenReady() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    // The device was undeployed and deployed again before it answered: a new incarnation serves.
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    trusted.offer(event(DeviceEvent.Type.READY, G + 1000, G + 1000));
    answer(DeviceState.READY, G + 1000);
    assertEquals(List.of("REMOVED/" + G, "READY/" + (G + 1000)), names());
    assertEquals(0, dropped.get());
    assertEquals(0, gone.get(), "the device serves again: it is not forgotten");
  }

  @Test
  void aRedeploymentsReadyOfferedWhileTheRemovedIsAskedAboutIsAskedAboutOnceMore() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    // Deployed again while the question about the REMOVED was out; that question found no device.
    trusted.offer(event(DeviceEvent.Type.READY, G + 1000, G + 1000));
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device serves this address"));
    assertEquals(List.of("REMOVED/" + G), names());
    assertEquals(1, asked.size(), "the READY is asked about once more");
    answer(DeviceState.READY, G + 1000);
    assertEquals(List.of("REMOVED/" + G, "READY/" + (G + 1000)), names());
    assertEquals(0, dropped.get());
  }

  @Test
  void aRemovedHeldWhileTheDeviceWasBeingListedIsJudgedAfterTheFirstAnswer() {
    // The watcher's listing showed the device; its REMOVED came while that listing was out.
    trusted.startListed(G, List.of(event(DeviceEvent.Type.REMOVED, G, G)));
    answer(DeviceState.READY, G);
    assertEquals(List.of("READY/" + G), names());
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device serves this address"));
    assertEquals(List.of("READY/" + G, "REMOVED/" + G), names());
    assertEquals(1, gone.get());
  }

  @Test
  void aRemovedOfferedWhileTheDeviceStillAnsweredServingIsAskedAboutOnceMore() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.READY, G, G)); // not news: dropped
    trusted.offer(event(DeviceEvent.Type.LOST, G, G));
    // The REMOVED came while the question about the LOST was out; the device answered serving still.
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    answer(DeviceState.READY, G);
    assertEquals(List.of(), names());
    assertEquals(1, asked.size(), "the REMOVED is asked about once more");
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device serves this address"));
    assertEquals(List.of("REMOVED/" + G), names());
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    assertEquals(0, asked.size(), "nothing is removed twice");
  }

  @Test
  void aForgedReadyOfAGenerationNotServedCostsAtMostOneMoreQuestion() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.READY, G + 5000, G + 5000));
    answer(DeviceState.READY, G);
    assertEquals(1, asked.size(), "asked once more: the answer may have left before it served");
    answer(DeviceState.READY, G);
    assertEquals(0, asked.size(), "then dropped");
    assertEquals(List.of(), names());
    assertEquals(1, dropped.get());
  }

  @Test
  void aRemovedWaitsForTheNewIncarnationsReadyWhenTheAnswerComesFirst() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    // The redeployed device answers before its READY is published.
    answer(DeviceState.READY, G + 1000);
    assertEquals(List.of(), names());
    assertEquals(0, asked.size(), "nothing more is asked until an event comes");
    trusted.offer(event(DeviceEvent.Type.READY, G + 1000, G + 1000));
    answer(DeviceState.READY, G + 1000);
    assertEquals(List.of("REMOVED/" + G, "READY/" + (G + 1000)), names());
  }

  @Test
  void aForgedRemovedBesideARealRebuildIsHeardAsTheRebuild() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    trusted.offer(event(DeviceEvent.Type.READY, G + 1, G + 1));
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    answer(DeviceState.READY, G + 1);
    assertEquals(List.of("GENERATION_CHANGED/" + G + ">" + (G + 1)), changes());
  }

  @Test
  void eventsWaitForTheStartingPointAndMergeIntoOneQuestion() {
    Promise<DeviceInfo> start = Promise.promise();
    trusted.startFrom(start.future());
    trusted.offer(event(DeviceEvent.Type.GENERATION_CHANGED, G, G + 1));
    trusted.offer(event(DeviceEvent.Type.LOST, G + 1, G + 1));
    assertEquals(0, asked.size(), "nothing is judged before the starting point is known");
    start.complete(info(DeviceState.READY, G));
    assertEquals(1, asked.size());
    for (int i = 0; i < 1_000; i++) {
      trusted.offer(event(DeviceEvent.Type.LOST, G + 1, G + 1));
    }
    answer(DeviceState.LOST, G + 1);
    assertEquals(0, asked.size(), "all were answered by the one question");
    assertEquals(List.of("LOST/" + (G + 1)), names());
    assertEquals(1_001, dropped.get());
  }

  @Test
  void aDeviceNeverSeenIsNeitherLostNorRemoved() {
    trusted.startFrom(Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, "no device")));
    trusted.offer(event(DeviceEvent.Type.REMOVED, 1, 1));
    assertEquals(0, asked.size());
    trusted.offer(event(DeviceEvent.Type.LOST, 1, 1));
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device"));
    assertEquals(List.of(), names());
    assertEquals(1, gone.get(), "a watcher may forget it");

    trusted.offer(event(DeviceEvent.Type.READY, G, G));
    answer(DeviceState.READY, G);
    assertEquals(List.of("READY/" + G), names(), "until it is deployed");
  }

  @Test
  void aRedeployedDeviceIsRemovedThenReadyAtItsNewGeneration() {
    trusted.startFrom(Future.succeededFuture(info(DeviceState.READY, G)));
    trusted.offer(event(DeviceEvent.Type.REMOVED, G, G));
    asked.remove().fail(new CudaException(FailureCode.CONTEXT_LOST, "no device"));
    trusted.offer(event(DeviceEvent.Type.READY, G + 100, G + 100));
    answer(DeviceState.READY, G + 100);
    trusted.offer(event(DeviceEvent.Type.LOST, G + 100, G + 100));
    answer(DeviceState.LOST, G + 100);
    assertEquals(List.of("REMOVED/" + G, "READY/" + (G + 100), "LOST/" + (G + 100)), names());
    assertEquals(0, dropped.get());
  }

  private void answer(DeviceState state, long generation) {
    asked.remove().complete(info(state, generation));
  }

  private static DeviceInfo info(DeviceState state, long generation) {
    return new DeviceInfo().setState(state).setGeneration(generation);
  }

  private List<String> names() {
    return heard.stream().map(e -> e.getType() + "/" + e.getNewGeneration()).toList();
  }

  private List<String> changes() {
    return heard.stream().map(e -> e.getType() + "/" + e.getOldGeneration() + ">" + e.getNewGeneration()).toList();
  }

  private static DeviceEvent event(DeviceEvent.Type type, long oldGeneration, long newGeneration) {
    return new DeviceEvent(type, "n", 0, oldGeneration, newGeneration, "test");
  }
}
