package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Supervision and stop are not event-bus addresses: what any code in the JVM sends or publishes
 * cannot drop a healthy context or stop the device. The reproduction: six JSON "poisoned" reports
 * to the device's former supervisor address used to make it LOST. Now those addresses have no
 * consumer, the same bodies sent to the device's own addresses are BAD_REQUEST, and the device keeps
 * its generation, its state and its buffers. Both isolation modes.
 */
@ExtendWith(VertxExtension.class)
class ControlPathsTest {

  @Test
  void nothingOnTheBusCanDropAHealthyContextOrStopTheDevice(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    List<DeviceEvent> events = new ArrayList<>();
    String node = Addresses.LOCAL_NODE;
    String device = Addresses.device(node, 0);
    JsonObject report = new JsonObject().put("generation", 1).put("reason", "CUDA_ERROR_ILLEGAL_ADDRESS")
      .put("poisoned", true).put("stop", true);
    // The internal addresses of earlier versions: a supervisor, a context tier per generation.
    List<String> former = List.of(device + ".supervisor", device + ".g1.context", device + ".g1.blas");
    TestDevices.deploy(vertx, TestDevices.options())
      .compose(id -> c.events(events::add).completion())
      .compose(x -> c.alloc(DType.F32, 3))
      .compose(h -> c.upload(h, TestDevices.floats(1, 2, 3)))
      .compose(h -> {
        List<Future<?>> sent = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
          for (String address : former) {
            sent.add(vertx.eventBus().request(address, report).transform(ar -> {
              assertTrue(ar.failed(), address + " answered");
              assertEquals(FailureCode.CONTEXT_LOST, Failures.codeOf(ar.cause()), address + ": no consumer");
              return Future.succeededFuture();
            }));
            vertx.eventBus().publish(address, report);
          }
          for (String address : List.of(device)) {
            sent.add(vertx.eventBus().request(address, report).transform(ar -> {
              assertTrue(ar.failed(), address + " served a report");
              assertEquals(FailureCode.BAD_REQUEST, Failures.codeOf(ar.cause()), ar.cause().getMessage());
              return Future.succeededFuture();
            }));
          }
        }
        return Future.all(sent).map(h);
      })
      .compose(h -> c.download(h).compose(b -> c.describe().map(info -> {
        ctx.verify(() -> {
          assertArrayEquals(new float[] {1, 2, 3}, TestDevices.floats(b));
          assertEquals(DeviceState.READY, info.getState());
          assertEquals(info.getGeneration(), h.generation(), "no rebuild: the generation the buffer was issued by");
          assertTrue(events.stream().noneMatch(e -> e.getType() != DeviceEvent.Type.READY), events.toString());
        });
        return null;
      })))
      .onComplete(ctx.succeedingThenComplete());
  }
}
