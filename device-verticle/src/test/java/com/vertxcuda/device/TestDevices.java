package com.vertxcuda.device;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

import java.util.ArrayList;
import java.util.List;

/**
 * What the device-tier tests run against. The backend comes from {@code -Dvertxcuda.test.backend}
 * (host by default; the GPU bundle sets cuda) and the isolation from
 * {@code -Dvertxcuda.test.isolation} (in-process by default), so the same classes run everywhere.
 */
public final class TestDevices {

  private TestDevices() {
  }

  public static BackendKind backend() {
    return BackendKind.valueOf(System.getProperty("vertxcuda.test.backend", "host").toUpperCase());
  }

  public static Isolation isolation() {
    return Isolation.valueOf(System.getProperty("vertxcuda.test.isolation", "in_process").toUpperCase().replace('-', '_'));
  }

  /**
   * Whether a poisoned context can be rebuilt in this JVM: always on the host backend and in process
   * isolation; in-process on cuda a sticky error ends the process's use of CUDA (measured), so the
   * device goes LOST instead, which KernelGpuTest#faultDrillInProcess checks in a JVM of its own.
   */
  public static final String POISON_ENDS_CUDA = "in-process on cuda a sticky error ends the process's CUDA: "
    + "KernelGpuTest#faultDrillInProcess covers that, in a JVM of its own";

  public static boolean poisonRebuilds() {
    return backend() == BackendKind.HOST || isolation() == Isolation.PROCESS;
  }

  /**
   * JVM options of the device hosts the tests start, from {@code -Dvertxcuda.test.deviceHostJvmOptions}
   * (space-separated; none when unset). The build's suite starts a few hundred short-lived device
   * hosts and passes options for a quick start (C1 only, serial GC); the GPU bundle passes none, so
   * its device hosts run as an application's would.
   */
  public static List<String> deviceHostJvmOptions() {
    String set = System.getProperty("vertxcuda.test.deviceHostJvmOptions", "").trim();
    return set.isEmpty() ? List.of() : List.of(set.split("\\s+"));
  }

  public static DeviceOptions options() {
    return new DeviceOptions().setBackend(backend()).setIsolation(isolation())
      .setDeviceHostJvmOptions(new ArrayList<>(deviceHostJvmOptions()))
      .setFaultInjection(true).setHeartbeatInterval(500).setHeartbeatTimeout(5_000)
      // One device host per device keeps the suite light; IsolationTest covers the spare.
      .setSpareDeviceHost(false);
  }

  /**
   * Sends a fault request to {@code address} the way the typed clients send (so it keeps its order
   * among their requests); failures come back typed.
   */
  public static Future<Object> fault(Vertx vertx, String address, com.vertxcuda.message.FaultRequest.Kind kind) {
    return new com.vertxcuda.internal.RequestSender(vertx, address, 30_000)
      .request(new com.vertxcuda.message.FaultRequest(kind));
  }

  public static Future<String> deploy(Vertx vertx, DeviceOptions options) {
    return vertx.deployVerticle(new DeviceVerticle(options));
  }

  /** Little-endian F32 bytes. */
  public static Buffer floats(float... values) {
    Buffer b = Buffer.buffer(values.length * 4);
    for (float v : values) {
      b.appendFloatLE(v);
    }
    return b;
  }

  public static float[] floats(Buffer b) {
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }
}
