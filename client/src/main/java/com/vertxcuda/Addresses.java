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
  /**
   * Where every device also publishes its lifecycle events, so that one subscriber sees devices of
   * the whole cluster come and go ({@link DeviceRegistry#watch}).
   */
  public static final String REGISTRY_EVENTS = PREFIX + ".registry";
  /** The cluster-wide map that holds the cluster's policy (whether the event bus must use TLS). */
  public static final String CLUSTER_MAP = PREFIX + ".cluster";

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
    return library(device(node, device), library);
  }

  /** A library's stable address, from its device's ({@link #device}). */
  public static String library(String deviceAddress, Library library) {
    return deviceAddress + "." + library.suffix();
  }

  /** Where lifecycle events (generation changed, lost, ready) are published. */
  public static String events(String node, int device) {
    return device(node, device) + ".events";
  }

  /**
   * The node word of a device or library address built by {@link #device} or {@link #library};
   * throws IllegalArgumentException for any other address.
   */
  public static String nodeOf(String address) {
    String prefix = PREFIX + ".";
    int end = address.indexOf('.', prefix.length());
    if (!address.startsWith(prefix) || end < 0) {
      throw new IllegalArgumentException("not a vertx-cuda device address: '" + address + "'");
    }
    return address.substring(prefix.length(), end);
  }

  private static void checkNode(String node) {
    Objects.requireNonNull(node, "node");
    if (node.isEmpty() || node.contains(".")) {
      throw new IllegalArgumentException("node must be a non-empty word without dots: '" + node + "'");
    }
  }
}
