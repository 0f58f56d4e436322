package com.vertxcuda.device;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import com.vertxcuda.message.FaultRequest;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.AbstractVerticle;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * LOST, GENERATION_CHANGED and REMOVED events that the device did not decide — of any generation,
 * published by another verticle or from another node of the cluster, or a million of them for
 * devices that do not exist — reach neither a {@link DeviceClient#events} subscriber nor a
 * {@link DeviceRegistry#watch}er, are counted, leave the device READY and the heap as it was; the
 * device's real ones still arrive, within 100 ms of the device publishing them.
 */
@ExtendWith(VertxExtension.class)
class ForgedEventsTest {

  /** The most a confirmation may add to a real event's way to its subscriber. */
  private static final long CONFIRMATION_BOUND_MS = 100;

  private final List<Vertx> nodes = new CopyOnWriteArrayList<>();

  @AfterEach
  void close(VertxTestContext ctx) {
    Future.join(nodes.stream().map(Vertx::close).toList()).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 60, timeUnit = TimeUnit.SECONDS)
  @Tag("alone")
  void forgedEventsFromAnotherVerticleReachNoSubscriber(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    DeviceClient c = DeviceClient.create(vertx);
    Subscribers subs = new Subscribers();
    long registryBefore = DeviceRegistry.ignoredEntries();
    TestDevices.deploy(vertx, TestDevices.options().setRestartLimit(1).setRestartWindow(60_000))
      .compose(id -> subs.watch(vertx, c))
      .compose(generation -> vertx.deployVerticle(new Forger(Nodes.self(vertx), generation))
        .compose(id -> counted(vertx, () -> c.ignoredEvents(), Forger.FORGED))
        .compose(x -> counted(vertx, () -> DeviceRegistry.ignoredEntries() - registryBefore, Forger.FORGED)))
      .compose(x -> stillReady(c, subs))
      .compose(x -> subs.realEvents(vertx, vertx, c.address()))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 240, timeUnit = TimeUnit.SECONDS)
  @Tag("runs-once") // the flood is judged by the node's registry, the same in both isolation modes
  void aMillionEventsForUnknownDevicesReachNoSubscriberAndHoldNoMemory(Vertx vertx, VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    DeviceClient c = DeviceClient.create(vertx);
    Subscribers subs = new Subscribers();
    long[] before = new long[2];
    TestDevices.deploy(vertx, TestDevices.options().setRestartLimit(1).setRestartWindow(60_000))
      .compose(id -> subs.watch(vertx, c))
      .compose(generation -> {
        // One round first, so that what a first flood loads and keeps for good (classes, compiled
        // code, pooled buffers) is in the baseline.
        before[0] = DeviceRegistry.ignoredEntries();
        return flood(vertx, c, FLOOD_ROUND, before[0]);
      })
      .compose(x -> {
        before[0] = DeviceRegistry.ignoredEntries();
        before[1] = usedHeapAfterGc();
        return flood(vertx, c, FLOOD, before[0]);
      })
      .compose(x -> {
        long grown = usedHeapAfterGc() - before[1];
        ctx.verify(() -> {
          assertEquals(FLOOD, DeviceRegistry.ignoredEntries() - before[0], "each counted once, none delivered");
          assertTrue(grown < HEAP_BOUND, "heap grew " + (grown >> 10) + " KiB over " + FLOOD + " events");
        });
        return stillReady(c, subs);
      })
      .compose(x -> subs.realEvents(vertx, vertx, c.address()))
      .onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 120, timeUnit = TimeUnit.SECONDS)
  @Tag("alone")
  void forgedEventsFromAnotherNodeReachNoSubscriber(VertxTestContext ctx) {
    assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    String cluster = "vertx-cuda-forged-" + ProcessHandle.current().pid();
    Subscribers subs = new Subscribers();
    long registryBefore = DeviceRegistry.ignoredEntries();
    Vertx[] gpu = new Vertx[1];
    DeviceClient[] client = new DeviceClient[1];
    node(cluster)
      .compose(g -> {
        gpu[0] = g;
        return TestDevices.deploy(g, TestDevices.options().setRestartLimit(1).setRestartWindow(60_000));
      })
      .compose(id -> node(cluster))
      .compose(clientNode -> DeviceRegistry.list(clientNode).compose(devices -> {
        DeviceInfo device = devices.get(0);
        client[0] = DeviceClient.create(clientNode, device);
        return subs.watch(clientNode, client[0]).compose(generation -> node(cluster)
          .compose(forger -> forger.deployVerticle(new Forger(device.getNode(), generation))))
          .compose(id -> counted(clientNode, () -> client[0].ignoredEvents(), Forger.FORGED))
          .compose(x -> counted(clientNode, () -> DeviceRegistry.ignoredEntries() - registryBefore, Forger.FORGED))
          .compose(x -> stillReady(client[0], subs))
          .compose(x -> subs.realEvents(gpu[0], clientNode, client[0].address()));
      }))
      .onComplete(ctx.succeedingThenComplete());
  }

  /** The most the heap may grow, after a full collection, over a flood of forged events. */
  private static final long HEAP_BOUND = 8L << 20;
  /** How many forged events a flood publishes. */
  private static final int FLOOD = 1_000_000;
  /** How many a flood publishes per turn of the publisher's event loop before it waits for them to be judged. */
  private static final int FLOOD_ROUND = 10_000;

  /**
   * Publishes {@code count} events for devices never seen (each a node and device of its own, every
   * type), on the registry's events address and on theirs, a round at a time: the next once the
   * watcher has judged this one (its count of dropped events reaching {@code counted}).
   */
  private static Future<Void> flood(Vertx vertx, DeviceClient c, int count, long counted) {
    Future<Void> done = Future.succeededFuture();
    for (int round = 0; round < count / FLOOD_ROUND; round++) {
      int first = round * FLOOD_ROUND;
      done = done.compose(x -> {
        DeviceEvent.Type[] types = DeviceEvent.Type.values();
        for (int i = first; i < first + FLOOD_ROUND; i++) {
          String node = "forged" + (i / 1_000);
          DeviceEvent e = new DeviceEvent(types[i % types.length], node, i % 1_000, i, i, "forged");
          vertx.eventBus().publish(Addresses.REGISTRY_EVENTS, e);
          vertx.eventBus().publish(Addresses.events(node, i % 1_000), e);
        }
        return counted(vertx, () -> DeviceRegistry.ignoredEntries() - counted, first + FLOOD_ROUND);
      });
    }
    return done;
  }

  private static long usedHeapAfterGc() {
    java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return memory.getHeapMemoryUsage().getUsed();
  }

  /** The subscribers heard nothing but READY, and the device still serves at the generation they know. */
  private static Future<Void> stillReady(DeviceClient c, Subscribers subs) {
    return c.describe().map(info -> {
      subs.heardNothingButReady();
      assertEquals(DeviceState.READY, info.getState());
      assertEquals(subs.generation, info.getGeneration(), "the generation the subscribers started from");
      return null;
    });
  }

  private Future<Vertx> node(String cluster) {
    return LocalCluster.node(cluster).onSuccess(nodes::add);
  }

  /**
   * Publishes, once deployed, what a device in READY at {@code generation} never would: LOST, REMOVED
   * and GENERATION_CHANGED of generation 0, 1, the one before, the current one and the next.
   */
  static final class Forger extends AbstractVerticle {

    /** How many events each address gets. */
    static final int FORGED = 15;

    private final String node;
    private final long generation;

    Forger(String node, long generation) {
      this.node = node;
      this.generation = generation;
    }

    @Override
    public void start() {
      CudaRuntime.of(vertx).registerCodecs();
      List<DeviceEvent> forged = new ArrayList<>();
      for (long g : new long[] {0, 1, generation - 1, generation}) {
        forged.add(new DeviceEvent(DeviceEvent.Type.LOST, node, 0, g, g, "forged"));
        forged.add(new DeviceEvent(DeviceEvent.Type.REMOVED, node, 0, g, g, "forged"));
        forged.add(new DeviceEvent(DeviceEvent.Type.GENERATION_CHANGED, node, 0, Math.max(0, g - 1), g, "forged"));
      }
      forged.add(new DeviceEvent(DeviceEvent.Type.LOST, node, 0, generation + 1, generation + 1, "forged"));
      forged.add(new DeviceEvent(DeviceEvent.Type.REMOVED, node, 0, generation + 1, generation + 1, "forged"));
      forged.add(new DeviceEvent(DeviceEvent.Type.GENERATION_CHANGED, node, 0, generation, generation + 1, "forged"));
      for (DeviceEvent e : forged) {
        vertx.eventBus().publish(Addresses.events(node, 0), e);
        vertx.eventBus().publish(Addresses.REGISTRY_EVENTS, e);
      }
    }
  }

  /** A device's events subscriber and a registry watcher, each with what it heard and when. */
  private static final class Subscribers {

    final List<DeviceEvent> events = new CopyOnWriteArrayList<>();
    final List<DeviceEvent> watched = new CopyOnWriteArrayList<>();
    final Map<String, Long> arrived = new ConcurrentHashMap<>();
    volatile long generation;

    /** Subscribes both; the device's current generation once both listen. */
    Future<Long> watch(Vertx vertx, DeviceClient c) {
      Future<Void> subscribed = c.events(e -> heard(events, "events", e)).completion();
      Future<Void> watching = DeviceRegistry.watch(vertx, e -> heard(watched, "registry", e)).completion();
      return Future.all(subscribed, watching).compose(x -> c.describe()).map(d -> generation = d.getGeneration());
    }

    private void heard(List<DeviceEvent> into, String who, DeviceEvent e) {
      into.add(e);
      arrived.putIfAbsent(who + "/" + e.getType(), System.nanoTime());
    }

    void heardNothingButReady() {
      for (DeviceEvent e : events) {
        assertEquals(DeviceEvent.Type.READY, e.getType(), "events: " + events);
      }
      for (DeviceEvent e : watched) {
        assertEquals(DeviceEvent.Type.READY, e.getType(), "watched: " + watched);
      }
    }

    /**
     * Poisons the device twice (restart limit 1): a real GENERATION_CHANGED, then a real LOST. Both
     * reach both subscribers within the bound of the device publishing them, as seen on its node.
     */
    Future<Void> realEvents(Vertx deviceNode, Vertx subscriberNode, String address) {
      Map<String, Long> published = new ConcurrentHashMap<>();
      Promise<Void> lost = Promise.promise();
      String node = Addresses.nodeOf(address);
      // Registered (on the cluster too) before the first fault: an event published before then would
      // have no publication time here.
      Future<Void> listening = deviceNode.eventBus().<Object>consumer(Addresses.events(node, 0), m -> {
        if (m.body() instanceof DeviceEvent) {
          published.putIfAbsent(((DeviceEvent) m.body()).getType().name(), System.nanoTime());
        }
      }).completion();
      return listening.compose(x -> TestDevices.fault(subscriberNode, address, FaultRequest.Kind.POISON).otherwiseEmpty())
        .compose(x -> heard(subscriberNode, DeviceEvent.Type.GENERATION_CHANGED))
        .compose(x -> TestDevices.fault(subscriberNode, address, FaultRequest.Kind.POISON).otherwiseEmpty())
        .compose(x -> heard(subscriberNode, DeviceEvent.Type.LOST))
        .map(x -> {
          for (DeviceEvent.Type type : List.of(DeviceEvent.Type.GENERATION_CHANGED, DeviceEvent.Type.LOST)) {
            long at = published.get(type.name());
            for (String who : List.of("events", "registry")) {
              long after = TimeUnit.NANOSECONDS.toMillis(arrived.get(who + "/" + type) - at);
              assertTrue(after < CONFIRMATION_BOUND_MS, who + " heard " + type + " " + after + " ms after it was published");
            }
          }
          assertEquals(1, events.stream().filter(e -> e.getType() == DeviceEvent.Type.LOST).count(), "events: " + events);
          return null;
        });
    }

    private Future<Void> heard(Vertx vertx, DeviceEvent.Type type) {
      return counted(vertx, () -> arrived.containsKey("events/" + type) && arrived.containsKey("registry/" + type) ? 1 : 0, 1);
    }
  }

  /** Completes once {@code count} reaches {@code expected} (checked every 10 ms); fails past it. */
  private static Future<Void> counted(Vertx vertx, LongSupplier count, long expected) {
    Promise<Void> reached = Promise.promise();
    vertx.setPeriodic(10, id -> {
      long now = count.getAsLong();
      if (now >= expected) {
        vertx.cancelTimer(id);
        if (now == expected) {
          reached.complete();
        } else {
          reached.fail("counted " + now + ", expected " + expected);
        }
      }
    });
    return reached.future();
  }
}
