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
 * <p>Internal addresses (between the device tier and the context tier) carry the generation, so a
 * message meant for a lost context can never reach its successor.
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

  /** The context tier of one generation (internal). */
  public static String context(String node, int device, long generation) {
    return device(node, device) + ".g" + generation + ".context";
  }

  /** Whether {@code address} is a context tier's (internal) address rather than a library's. */
  public static boolean isContext(String address) {
    return address.startsWith(PREFIX + ".") && address.endsWith(".context");
  }

  /** A library verticle of one generation (internal). */
  public static String contextLibrary(String node, int device, long generation, Library library) {
    return device(node, device) + ".g" + generation + "." + library.suffix();
  }

  /** Where a context reports that it is poisoned (internal). */
  public static String supervisor(String node, int device) {
    return device(node, device) + ".supervisor";
  }

  private static void checkNode(String node) {
    Objects.requireNonNull(node, "node");
    if (node.isEmpty() || node.contains(".")) {
      throw new IllegalArgumentException("node must be a non-empty word without dots: '" + node + "'");
    }
  }
}
