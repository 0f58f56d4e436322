package com.vertxcuda.impl;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.MessageConsumer;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@link DeviceRegistry#watch}: the registry's events address, each event judged with the device it
 * names ({@link TrustedEvents}, one per device), plus a LOST raised here for each device served
 * whose node leaves the cluster. Only devices the registry lists are asked: an event for any other
 * asks for a new listing (one at a time; events that come meanwhile merge into the next), and a
 * device listed there for the first time is confirmed and announced READY. The table of devices is
 * bounded ({@link #MAX_DEVICES}) and forgets a device once it is confirmed gone or its node left.
 * All state on the watcher's context; the handler runs there.
 */
public final class RegistryWatch {

  /** What the registry dropped in this JVM: entries its listings left out, events its watchers did. */
  public static final AtomicLong IGNORED = new AtomicLong();

  /** The most devices one watcher follows; a device listed beyond them is not watched (and counted). */
  public static final int MAX_DEVICES = 4_096;

  private final Vertx vertx;
  private final Context context;
  private final Handler<DeviceEvent> handler;
  /** The devices followed, by address. */
  private final Map<String, TrustedEvents> devices = new HashMap<>();
  private boolean listing;
  /** An event for a device not followed came while a listing was out: list once more after it. */
  private boolean listAgain;
  /**
   * Events for devices not followed that came while a listing was out, by address (at most
   * {@link #MAX_DEVICES} addresses, {@link #HELD_PER_DEVICE} events each): a device the listing then
   * follows is offered them after its first answer (a REMOVED published meanwhile is not lost).
   * Cleared when the listing answers.
   */
  private final Map<String, List<DeviceEvent>> heldWhileListing = new HashMap<>();
  /** Events held per device while a listing is out. */
  static final int HELD_PER_DEVICE = 8;

  private RegistryWatch(Vertx vertx, Context context, Handler<DeviceEvent> handler) {
    this.vertx = vertx;
    this.context = context;
    this.handler = handler;
  }

  @SuppressWarnings("unchecked")
  public static MessageConsumer<DeviceEvent> start(Vertx vertx, Handler<DeviceEvent> handler) {
    Context context = vertx.getOrCreateContext();
    RegistryWatch watch = new RegistryWatch(vertx, context, handler);
    MessageConsumer<Object> consumer = vertx.eventBus().consumer(Addresses.REGISTRY_EVENTS,
      m -> watch.on(() -> watch.offer(m.body())));
    watch.on(() -> watch.list(true));
    CudaRuntime.of(vertx).clusterWatch().onLeftWhileRegistered(consumer, context, watch::left);
    return (MessageConsumer<DeviceEvent>) (MessageConsumer<?>) consumer;
  }

  private void on(Runnable r) {
    if (Vertx.currentContext() == context) {
      r.run();
    } else {
      context.runOnContext(v -> r.run());
    }
  }

  private void offer(Object body) {
    if (!(body instanceof DeviceEvent) || !valid((DeviceEvent) body)) {
      IGNORED.incrementAndGet();
      return;
    }
    DeviceEvent e = (DeviceEvent) body;
    TrustedEvents t = devices.get(Addresses.device(e.getNode(), e.getDevice()));
    if (t != null) {
      t.offer(e);
      return;
    }
    // Not a device followed: a new one shows in the registry once it serves (it is put there before its
    // READY is published); the event itself is not kept.
    IGNORED.incrementAndGet();
    if (listing) {
      listAgain = true;
      String address = Addresses.device(e.getNode(), e.getDevice());
      List<DeviceEvent> held = heldWhileListing.get(address);
      if (held == null && heldWhileListing.size() < MAX_DEVICES) {
        held = new ArrayList<>(2);
        heldWhileListing.put(address, held);
      }
      if (held != null && held.size() < HELD_PER_DEVICE) {
        held.add(e);
      }
    } else {
      list(false);
    }
  }

  /**
   * Lists the registry and follows each device listed that is not yet: from its own describe when the
   * watch starts (those serving are not announced, unless their READY came while that first listing
   * was out), else as new (announced READY once it confirms).
   */
  private void list(boolean first) {
    listing = true;
    DeviceRegistry.list(vertx).onComplete(ar -> on(() -> {
      if (ar.succeeded()) {
        follow(ar.result(), first);
      }
      heldWhileListing.clear();
      listing = false;
      if (listAgain) {
        listAgain = false;
        list(false);
      }
    }));
  }

  private void follow(List<DeviceInfo> listed, boolean first) {
    for (DeviceInfo d : listed) {
      if (devices.containsKey(d.getAddress())) {
        continue;
      }
      if (devices.size() >= MAX_DEVICES) {
        IGNORED.incrementAndGet();
        continue;
      }
      String address = d.getAddress();
      DeviceClient client = DeviceClient.create(vertx, new DeviceClientOptions().setNode(d.getNode()).setDevice(d.getDevice()));
      TrustedEvents t = new TrustedEvents(d.getNode(), d.getDevice(), client::describe, handler, IGNORED,
        () -> devices.remove(address));
      devices.put(address, t);
      List<DeviceEvent> held = heldWhileListing.getOrDefault(address, List.of());
      if (first && held.stream().noneMatch(e -> e.getType() == DeviceEvent.Type.READY)) {
        t.startFrom(client.describe());
      } else {
        // A device listed on the first listing whose READY came while it was out started after the
        // watch did: it is announced like one listed later, not taken as already known.
        // Its READY was published after its entry was put, so before this listing answered: the
        // listing stands in for it (the registry's word, confirmed like any event).
        t.startListed(d.getGeneration(), held);
      }
    }
  }

  /** Raises LOST for each device served on {@code node}, which left the cluster, and forgets them. */
  private void left(String node) {
    devices.entrySet().removeIf(entry -> {
      if (!Addresses.nodeOf(entry.getKey()).equals(node)) {
        return false;
      }
      entry.getValue().deliverLocal("node " + node + " left the cluster");
      return true;
    });
  }

  /** Whether {@code e} is an event a device would publish. */
  private static boolean valid(DeviceEvent e) {
    try {
      Addresses.device(e.getNode(), e.getDevice());
    } catch (RuntimeException x) {
      return false;
    }
    return e.getType() != null && e.getOldGeneration() >= 0 && e.getNewGeneration() >= e.getOldGeneration();
  }
}
