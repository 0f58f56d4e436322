package com.vertxcuda.device;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.FailureCode;
import com.vertxcuda.DeviceEvent;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Undeploying a device says so (REMOVED on its events address and the registry's) and forgets it;
 * deploying it again starts a generation no earlier one used, so every old handle is stale.
 */
@ExtendWith(VertxExtension.class)
class RedeployTest {

  @Test
  void anOldHandleIsStaleAfterARedeploy(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    List<DeviceEvent> events = new CopyOnWriteArrayList<>();
    List<DeviceEvent> watched = new CopyOnWriteArrayList<>();
    c.events(events::add);
    DeviceRegistry.watch(vertx, watched::add);
    BufferHandle[] old = new BufferHandle[1];
    TestDevices.deploy(vertx, TestDevices.options())
      .compose(id -> c.alloc(DType.F32, 8).compose(h -> {
        old[0] = h;
        return vertx.undeploy(id);
      }))
      .compose(x -> DeviceRegistry.list(vertx))
      .compose(listed -> {
        assertTrue(listed.isEmpty(), "an undeployed device is not listed: " + listed);
        return TestDevices.deploy(vertx, TestDevices.options());
      })
      // The new incarnation issues ids from 1 again: without a new generation the old handle would
      // name a live buffer.
      .compose(id -> c.alloc(DType.F32, 8))
      .compose(fresh -> {
        assertEquals(old[0].id(), fresh.id());
        assertTrue(fresh.generation() > old[0].generation(), fresh + " after " + old[0]);
        return FailureCodesTest.expectFailure(FailureCode.STALE_HANDLE, c.download(old[0]))
          .compose(x -> FailureCodesTest.expectFailure(FailureCode.STALE_HANDLE, c.free(old[0])))
          .compose(x -> c.download(fresh));
      })
      // Events are confirmed by asking the device (TrustedEvents): they may still be on their way
      // when the download answers, so the test waits for the three it expects (at most 10 s).
      .compose(b -> untilHeard(vertx, List.of(events, watched), 3, 1000).map(b))
      .onComplete(ctx.succeeding(b -> ctx.verify(() -> {
        assertEquals(32, b.length());
        for (List<DeviceEvent> seen : List.of(events, watched)) {
          assertEquals(List.of(DeviceEvent.Type.READY, DeviceEvent.Type.REMOVED, DeviceEvent.Type.READY),
            seen.stream().map(DeviceEvent::getType).toList(), (seen == events ? "events " : "watched ")
              + seen.stream().map(e -> e.getType() + " " + e.getOldGeneration() + "->" + e.getNewGeneration()).toList());
        }
        ctx.completeNow();
      })));
  }

  // Completes once every list holds at least {@code count} events, or after {@code tries} 10 ms timers.
  private static Future<Void> untilHeard(Vertx vertx, List<List<DeviceEvent>> lists, int count, int tries) {
    if (tries == 0 || lists.stream().allMatch(l -> l.size() >= count)) {
      return Future.succeededFuture();
    }
    Promise<Void> later = Promise.promise();
    vertx.setTimer(10, id -> untilHeard(vertx, lists, count, tries - 1).onComplete(later));
    return later.future();
  }
}
