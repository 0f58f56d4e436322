package com.vertxcuda.library;

import com.vertxcuda.device.TestDevices;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.rand.RandClient;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A device with every library (the execution's backend and isolation), and the typed clients. One
 * device serves a class's tests in turn, as an application's would serve its requests; a class whose
 * tests break or reconfigure it (poison it, undeploy it, count its plans) takes a device per test
 * ({@link #devicePerTest()}). Tests run on the JUnit thread and wait on futures there (never on a
 * Vert.x thread).
 */
@ExtendWith(VertxExtension.class)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class HostDeviceTest {

  protected Vertx vertx;
  protected DeviceClient device;
  protected BlasClient blas;
  protected FftClient fft;
  protected RandClient rand;
  /** The device verticle's deployment. */
  protected String deployment;
  /** The device verticle deployed (its transfer buffers). */
  protected DeviceVerticle verticle;

  /** The device's options; tests override to set library options. */
  protected DeviceOptions options() {
    return TestDevices.options();
  }

  /**
   * Whether each test gets a device of its own, undeployed after it: for classes whose tests poison
   * or undeploy the device, or need what a fresh one has (no plan cached).
   */
  protected boolean devicePerTest() {
    return false;
  }

  @BeforeAll
  void clients(Vertx vertx) {
    this.vertx = vertx;
    device = DeviceClient.create(vertx);
    blas = BlasClient.create(vertx);
    fft = FftClient.create(vertx);
    rand = RandClient.create(vertx);
  }

  @BeforeEach
  void deploy() {
    if (deployment == null) {
      verticle = new DeviceVerticle(options());
      deployment = await(vertx.deployVerticle(verticle));
    }
  }

  @AfterEach
  void undeploy() {
    if (devicePerTest() && deployment != null) {
      String id = deployment;
      deployment = null;
      // A test may have undeployed it itself.
      await(vertx.undeploy(id).otherwiseEmpty());
    }
  }

  protected static <T> T await(Future<T> f) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause() : new RuntimeException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  /** Poisons the device's context and waits for the generation change of its rebuild. */
  protected com.vertxcuda.DeviceEvent poisonAndAwaitTheNextGeneration() {
    io.vertx.core.Promise<com.vertxcuda.DeviceEvent> changed = io.vertx.core.Promise.promise();
    device.events(e -> {
      if (e.getType() == com.vertxcuda.DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete(e);
      }
    });
    TestDevices.fault(vertx, device.address(), com.vertxcuda.message.FaultRequest.Kind.POISON);
    return await(changed.future());
  }

  /** Waits for {@code f} to fail with BAD_REQUEST whose message names {@code field}. */
  protected static void assertBadRequest(Future<?> f, String field) {
    CudaException e = failure(f);
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(field), "'" + e.getMessage() + "' should name " + field);
  }

  protected static CudaException failure(Future<?> f) {
    try {
      f.toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof CudaException) {
        return (CudaException) e.getCause();
      }
      throw new AssertionError("failed with " + e.getCause(), e.getCause());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    return fail("expected a failure");
  }

  protected BufferHandle f32(float... values) {
    BufferHandle h = await(device.alloc(DType.F32, values.length));
    Buffer b = Buffer.buffer(values.length * 4);
    for (float v : values) {
      b.appendFloatLE(v);
    }
    return await(device.upload(h, b));
  }

  protected BufferHandle f64(double... values) {
    BufferHandle h = await(device.alloc(DType.F64, values.length));
    Buffer b = Buffer.buffer(values.length * 8);
    for (double v : values) {
      b.appendDoubleLE(v);
    }
    return await(device.upload(h, b));
  }

  /** A buffer of {@code count} elements of {@code dtype} holding {@code values} encoded (F16, BF16, ...). */
  protected BufferHandle encoded(DType dtype, double... values) {
    BufferHandle h = await(device.alloc(dtype, values.length));
    Buffer b = Buffer.buffer();
    for (double v : values) {
      long bits = dtype.encode(v);
      switch (dtype.size()) {
        case 2: b.appendShortLE((short) bits); break;
        case 4: b.appendIntLE((int) bits); break;
        default: b.appendLongLE(bits);
      }
    }
    return await(device.upload(h, b));
  }

  protected float[] readF32(BufferHandle h) {
    Buffer b = await(device.download(h));
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }

  protected double[] readF64(BufferHandle h) {
    Buffer b = await(device.download(h));
    double[] out = new double[b.length() / 8];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getDoubleLE(i * 8);
    }
    return out;
  }

  protected long[] readU32(BufferHandle h) {
    Buffer b = await(device.download(h));
    long[] out = new long[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getIntLE(i * 4) & 0xFFFF_FFFFL;
    }
    return out;
  }

  /** Deterministic test values in [-1, 1). */
  protected static double[] values(int n, int seed) {
    double[] v = new double[n];
    long x = seed * 0x9E3779B97F4A7C15L + 1;
    for (int i = 0; i < n; i++) {
      x ^= x << 13;
      x ^= x >>> 7;
      x ^= x << 17;
      v[i] = ((x >>> 11) * 0x1.0p-53) * 2 - 1;
    }
    return v;
  }

  protected static float[] floats(double[] v) {
    float[] f = new float[v.length];
    for (int i = 0; i < v.length; i++) {
      f[i] = (float) v[i];
    }
    return f;
  }

  protected static double[] widen(float[] f) {
    double[] d = new double[f.length];
    for (int i = 0; i < f.length; i++) {
      d[i] = f[i];
    }
    return d;
  }

  protected static void assertClose(double[] expected, double[] actual, double tolerance, String what) {
    assertEquals(expected.length, actual.length, what + ": length");
    for (int i = 0; i < expected.length; i++) {
      double scale = Math.max(1, Math.abs(expected[i]));
      if (Math.abs(expected[i] - actual[i]) > tolerance * scale) {
        fail(what + ": element " + i + " is " + actual[i] + ", expected " + expected[i] + " within " + tolerance);
      }
    }
  }
}
