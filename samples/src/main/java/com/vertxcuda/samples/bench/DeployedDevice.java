package com.vertxcuda.samples.bench;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.rand.RandClient;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;

import java.util.Locale;

import static com.vertxcuda.samples.bench.Await.await;

/** The toolkit under test: a device verticle deployed on its own Vert.x, and the typed clients of it. */
final class DeployedDevice implements AutoCloseable {

  final Vertx vertx;
  final DeviceVerticle verticle;
  final DeviceClient device;
  final BlasClient blas;
  final FftClient fft;
  final RandClient rand;
  final DeviceInfo info;
  /** The path the record files its series under: {@code vertx.in_process} or {@code vertx.process}. */
  final String path;

  private DeployedDevice(Vertx vertx, DeviceVerticle verticle, DeviceInfo info) {
    this.vertx = vertx;
    this.verticle = verticle;
    this.device = DeviceClient.create(vertx);
    this.blas = BlasClient.create(vertx);
    this.fft = FftClient.create(vertx);
    this.rand = RandClient.create(vertx);
    this.info = info;
    this.path = "vertx." + info.getIsolation().toLowerCase(Locale.ROOT).replace('-', '_');
  }

  /**
   * Deploys a device with {@code options} on a new Vert.x; in process isolation, returns once the
   * spare device host stands ready (while it starts it shares the GPU with the serving context).
   */
  static DeployedDevice deploy(DeviceOptions options) throws Exception {
    Vertx vertx = newVertx();
    try {
      DeviceVerticle verticle = new DeviceVerticle(options);
      await(vertx.deployVerticle(verticle));
      DeviceClient client = DeviceClient.create(vertx);
      awaitSpare(client, options);
      return new DeployedDevice(vertx, verticle, await(client.describe()));
    } catch (Exception e) {
      vertx.close();
      throw e;
    }
  }

  /**
   * A Vert.x for the bench: the NIO transport (Vert.x's default), or with
   * {@code -Dvertxcuda.bench.nativeTransport=true} the native one (epoll), which a measurement of
   * {@code DeviceOptions.callerWake} needs; fails rather than measure NIO when native was asked for.
   * With {@code -Dvertxcuda.bench.callerPoll=N} (µs) that transport is made a {@link PollingTransport}
   * polling for N µs.
   */
  static Vertx newVertx() {
    boolean nativeTransport = Boolean.getBoolean(NATIVE_TRANSPORT);
    Transport base = nativeTransport ? Transport.EPOLL : Transport.NIO;
    int poll = Integer.getInteger(CALLER_POLL, -1);
    Vertx vertx = Vertx.builder()
      .withTransport(poll >= 0 ? PollingTransport.create(base, poll) : base)
      .build();
    if (nativeTransport && !vertx.isNativeTransportEnabled()) {
      Throwable why = vertx.unavailableNativeTransportCause();
      vertx.close();
      throw new IllegalStateException(NATIVE_TRANSPORT + " is set but the native transport is unavailable", why);
    }
    return vertx;
  }

  static final String CALLER_POLL = "vertxcuda.bench.callerPoll";
  static final String NATIVE_TRANSPORT = "vertxcuda.bench.nativeTransport";

  static void awaitSpare(DeviceClient client, DeviceOptions options) throws Exception {
    if (options.getIsolation() != Isolation.PROCESS || !options.isSpareDeviceHost()) {
      return;
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (!await(client.stats()).isSpareReady() && System.currentTimeMillis() < deadline) {
      Thread.sleep(20);
    }
  }

  boolean cuda() {
    return "cuda".equals(info.getBackend());
  }

  @Override
  public void close() throws Exception {
    await(vertx.close());
  }
}
