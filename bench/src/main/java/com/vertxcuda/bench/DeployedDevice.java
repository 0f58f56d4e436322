package com.vertxcuda.bench;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.PollingTransport;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.rand.RandClient;
import io.vertx.core.Vertx;
import io.vertx.core.transport.Transport;

import java.util.Locale;

import static com.vertxcuda.bench.Await.await;

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
    return deploy(options, newVertx());
  }

  /** {@link #deploy(DeviceOptions)} on {@code vertx} (closed with the device, or when deploying fails). */
  static DeployedDevice deploy(DeviceOptions options, Vertx vertx) throws Exception {
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
   * A Vert.x for the bench, as the quickstart makes its own: a {@link PollingTransport} ({@link
   * PollingTransport#create()}: epoll where Netty's native classes load, else NIO; polling
   * {@link PollingTransport#defaultPollMicros} for a local answer). With {@code -Dvertxcuda.bench.callerPoll=N} (µs) a PollingTransport on NIO polling N
   * µs, or with N = 0 Vert.x's plain NIO transport, whose loops sleep until woken; with
   * {@code -Dvertxcuda.bench.nativeTransport=true} the native transport (epoll), sleeping unless
   * callerPoll says otherwise (a measurement of {@code DeviceOptions.callerWake} needs it), and the run
   * fails rather than measure NIO when native was asked for but is missing. {@link #transportName}
   * says which, for the record.
   */
  static Vertx newVertx() {
    return checked(Vertx.builder().withTransport(transport()).build());
  }

  /** A Vert.x as {@link #newVertx()} makes it, with {@code tracer}. */
  static Vertx newVertx(io.vertx.core.spi.VertxTracerFactory tracer) {
    return checked(Vertx.builder().withTransport(transport()).withTracer(tracer).build());
  }

  private static Vertx checked(Vertx vertx) {
    if (Boolean.getBoolean(NATIVE_TRANSPORT) && !vertx.isNativeTransportEnabled()) {
      Throwable why = vertx.unavailableNativeTransportCause();
      vertx.close();
      throw new IllegalStateException(NATIVE_TRANSPORT + " is set but the native transport is unavailable", why);
    }
    return vertx;
  }

  // Unset, the quickstart's choice (PollingTransport.create()); else the base and poll time asked for.
  private static Transport transport() {
    Integer poll = Integer.getInteger(CALLER_POLL);
    boolean nativeTransport = Boolean.getBoolean(NATIVE_TRANSPORT);
    if (poll == null && !nativeTransport) {
      return PollingTransport.create();
    }
    Transport base = nativeTransport ? Transport.EPOLL : Transport.NIO;
    return poll != null && poll > 0 ? PollingTransport.create(base, poll) : base;
  }

  /** The bench's transport as the record names it: "nio", "native" (loops that sleep), "polling nio|epoll N us". */
  static String transportName() {
    Transport t = transport();
    if (t instanceof PollingTransport) {
      PollingTransport p = (PollingTransport) t;
      return "polling " + p.name().toLowerCase(Locale.ROOT) + " " + p.pollMicros() + " us";
    }
    return t == Transport.NIO ? "nio" : "native";
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
