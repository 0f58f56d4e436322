package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.core.shareddata.AsyncMap;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bodies that are not valid events or registry entries (garbage published on a device's events
 * address, forged entries in the registry) are ignored and counted; the real ones still arrive.
 */
@ExtendWith(VertxExtension.class)
class ForgedBodiesTest {

  @Test
  void eventSubscribersIgnoreAndCountGarbageAndKeepGettingRealEvents(Vertx vertx, VertxTestContext ctx) {
    DeviceClient c = DeviceClient.create(vertx);
    String node = c.address().substring("vertx-cuda.".length(), c.address().lastIndexOf('.'));
    String events = Addresses.events(node, 0);
    List<DeviceEvent> got = new ArrayList<>();
    Promise<Void> ready = Promise.promise();
    Promise<Void> changed = Promise.promise();
    c.events(e -> {
      got.add(e);
      if (e.getType() == DeviceEvent.Type.READY) {
        ready.tryComplete();
      } else if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete();
      }
    });
    vertx.eventBus().publish(events, "garbage");
    vertx.eventBus().publish(events, new JsonObject().put("type", "READY"));
    vertx.eventBus().publish(events, new DeviceEvent());
    vertx.eventBus().publish(events, new DeviceEvent(DeviceEvent.Type.LOST, node, 7, 1, 1, "another device"));
    vertx.eventBus().publish(events, new DeviceEvent(DeviceEvent.Type.LOST, node, 0, 5, -1, "negative"));
    vertx.eventBus().publish(events, new DeviceEvent(null, node, 0, 1, 1, "no type"));
    TestDevices.deploy(vertx, TestDevices.options())
      .compose(id -> ready.future())
      .compose(x -> {
        if (!TestDevices.poisonRebuilds()) {
          return Future.succeededFuture();
        }
        vertx.eventBus().publish(events, 42);
        return TestDevices.fault(vertx, c.address(), FaultRequest.Kind.POISON).otherwiseEmpty()
          .compose(y -> changed.future());
      })
      .onComplete(ctx.succeeding(x -> ctx.verify(() -> {
        assertEquals(TestDevices.poisonRebuilds() ? 7 : 6, c.ignoredEvents());
        assertEquals(DeviceEvent.Type.READY, got.get(0).getType());
        for (DeviceEvent e : got) {
          assertEquals(node, e.getNode());
          assertEquals(0, e.getDevice());
        }
        if (TestDevices.poisonRebuilds()) {
          assertTrue(got.stream().anyMatch(e -> e.getType() == DeviceEvent.Type.GENERATION_CHANGED), got.toString());
        }
        ctx.completeNow();
      })));
  }

  @Test
  void leastLoadedIgnoresAndCountsForgedEntries(Vertx vertx, VertxTestContext ctx) {
    long before = DeviceRegistry.ignoredEntries();
    DeviceInfo forged = new DeviceInfo().setNode("forger").setDevice(0).setAddress(Addresses.device("forger", 0))
      .setState(DeviceState.READY).setLoad(-1_000_000).setGeneration(1);
    TestDevices.deploy(vertx, TestDevices.options())
      .compose(id -> vertx.sharedData().<String, Object>getAsyncMap(Addresses.REGISTRY_MAP))
      .compose(m -> put(m, "forged", forged.toJson())
        .compose(x -> put(m, "not-json", "garbage"))
        .compose(x -> put(m, "bad-state", new JsonObject().put("node", "x").put("state", "NOPE")))
        .compose(x -> put(m, "elsewhere", forged.toJson().put("load", 0).put("address", "vertx-cuda.victim.0")))
        .compose(x -> put(m, "no-node", new JsonObject().put("load", 0).put("state", "READY"))))
      .compose(x -> registered(vertx, 50))
      .compose(x -> DeviceRegistry.leastLoaded(vertx).compose(least -> DeviceRegistry.list(vertx)
        .map(all -> {
          assertEquals(DeviceClient.create(vertx).address(), least.getAddress());
          assertEquals(1, all.size(), all.toString());
          // Both listings met the five forged entries.
          assertEquals(before + 10, DeviceRegistry.ignoredEntries());
          return null;
        })))
      .onComplete(ctx.succeedingThenComplete());
  }

  private static Future<Void> put(AsyncMap<String, Object> m, String key, Object value) {
    return m.put(key, value);
  }

  // Waits until the real device has registered itself.
  private static Future<Void> registered(Vertx vertx, int tries) {
    return vertx.sharedData().<String, Object>getAsyncMap(Addresses.REGISTRY_MAP)
      .compose(m -> m.get(DeviceClient.create(vertx).address()))
      .compose(v -> {
        if (v != null || tries == 0) {
          return Future.succeededFuture();
        }
        Promise<Void> later = Promise.promise();
        vertx.setTimer(100, t -> registered(vertx, tries - 1).onComplete(later));
        return later.future();
      });
  }
}
