package com.vertxcuda;

import java.util.Objects;

/**
 * The address scheme, built here and nowhere else.
 *
 * <p>Public addresses: {@code vertx-cuda.<node>.<device>} for the device,
 * {@code vertx-cuda.<node>.<device>.blas|fft|rand|kernel} for its libraries and
 * {@code vertx-cuda.<node>.<device>.events} for published lifecycle events. {@code <node>} is the
 * cluster node id, or {@link #LOCAL_NODE} when the event bus is not clustered.
 *
 * <p>There are no internal addresses: the device tier reaches its context through a typed channel
 * (a queue in this JVM, a link to a device host), so nothing on the bus can bypass the device.
 */
public final class Addresses {

  /** The prefix of every vertx-cuda address. */
  public static final String PREFIX = "vertx-cuda";
  /** The node word used when the event bus is not clustered. */
  public static final String LOCAL_NODE = "local";
  /** The cluster-wide map that lists devices (see {@link DeviceRegistry}). */
  public static final String REGISTRY_MAP = PREFIX + ".devices";

  private Addresses() {
  }

  /** The device's stable address: {@code vertx-cuda.<node>.<device>}. */
  public static String device(String node, int device) {
    checkNode(node);
    if (device < 0) {
      throw new IllegalArgumentException("device index must be >= 0, got " + device);
    }
    return PREFIX + "." + node + "." + device;
  }

  /** A library's stable address: {@code vertx-cuda.<node>.<device>.<library>}. */
  public static String library(String node, int device, Library library) {
    return device(node, device) + "." + library.suffix();
  }

  /** Where lifecycle events (generation changed, lost, ready) are published. */
  public static String events(String node, int device) {
    return device(node, device) + ".events";
  }

  private static void checkNode(String node) {
    Objects.requireNonNull(node, "node");
    if (node.isEmpty() || node.contains(".")) {
      throw new IllegalArgumentException("node must be a non-empty word without dots: '" + node + "'");
    }
  }
}
