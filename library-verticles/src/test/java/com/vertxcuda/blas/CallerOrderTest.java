package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's promise, from every kind of caller: requests made one after the other on one caller
 * (an event loop, a worker thread, a plain thread) reach the device in that order, whatever clients
 * made them and whatever holds some back (a coalescing BLAS client, a transfer in chunks) — without
 * awaiting anything in between. Runs against the suite's backend and isolation: on the H200 in both
 * modes (where GEMMs finish in microseconds, and a request that overtook one read zeros), on the host
 * backend in CI.
 */
class CallerOrderTest extends HostDeviceTest {

  enum Caller { EVENT_LOOP, WORKER, PLAIN_THREAD }

  static final int N = 64;
  static final int ROUNDS = 10;

  /** Runs {@code work} on the caller and returns what it returned (the futures it made, unawaited). */
  private <T> T on(Caller caller, Callable<T> work) {
    switch (caller) {
      case EVENT_LOOP: {
        Promise<T> made = Promise.promise();
        vertx.runOnContext(v -> {
          try {
            made.complete(work.call());
          } catch (Exception e) {
            made.fail(e);
          }
        });
        return await(made.future());
      }
      case WORKER:
        return await(vertx.executeBlocking(work));
      default:
        CompletableFuture<T> made = new CompletableFuture<>();
        Thread t = new Thread(() -> {
          try {
            made.complete(work.call());
          } catch (Exception e) {
            made.completeExceptionally(e);
          }
        }, "plain-caller");
        t.start();
        return made.join();
    }
  }

  private BlasClient coalescing() {
    return BlasClient.create(vertx, new DeviceClientOptions(), new BlasClientOptions().setCoalesce(true));
  }

  /**
   * 16 GEMMs through a coalescing client into 16 outputs zeroed just before, then at once a download
   * of the first output: it reads the product, never the zeros.
   */
  @ParameterizedTest
  @EnumSource(Caller.class)
  void aDownloadAfterCoalescedGemmsReadsTheirProduct(Caller caller) {
    BlasClient coalescing = coalescing();
    float[] a = floats(values(N * N, 1));
    float[] b = floats(values(N * N, 2));
    BufferHandle ha = f32(a);
    BufferHandle hb = f32(b);
    double[] product = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.0, widen(a), N, widen(b), N,
      0.0, new double[N * N], N);
    List<BufferHandle> outputs = new ArrayList<>();
    for (int i = 0; i < 16; i++) {
      outputs.add(await(device.alloc(DType.F32, N * N)));
    }
    int wrong = 0;
    for (int round = 0; round < ROUNDS; round++) {
      for (BufferHandle o : outputs) {
        await(device.fill(o, 0));
      }
      Future<Buffer> read = on(caller, () -> {
        for (BufferHandle o : outputs) {
          coalescing.gemm(Transpose.N, Transpose.N, N, N, N, 1.0, ha, N, hb, N, 0.0, o, N);
        }
        return device.download(outputs.get(0));
      });
      if (!matches(product, await(read))) {
        wrong++;
      }
    }
    assertEquals(0, wrong, "rounds (of " + ROUNDS + ") in which the download overtook the GEMMs made before it");
  }

  /**
   * Four coalesced GEMMs accumulating into c, then at once a kernel scale of c into d and a download
   * of d: d holds all four products.
   */
  @ParameterizedTest
  @EnumSource(Caller.class)
  void aKernelAfterCoalescedGemmsReadsAllOfThem(Caller caller) {
    BlasClient coalescing = coalescing();
    KernelClient kernel = KernelClient.create(vertx);
    float[] a = floats(values(N * N, 3));
    float[] b = floats(values(N * N, 4));
    BufferHandle ha = f32(a);
    BufferHandle hb = f32(b);
    double[] product = BlasVerticleTest.gemmReference(Transpose.N, Transpose.N, N, N, N, 1.0, widen(a), N, widen(b), N,
      0.0, new double[N * N], N);
    double[] four = new double[product.length];
    for (int i = 0; i < four.length; i++) {
      four[i] = 4 * product[i];
    }
    BufferHandle c = await(device.alloc(DType.F32, N * N));
    BufferHandle d = await(device.alloc(DType.F32, N * N));
    int wrong = 0;
    for (int round = 0; round < 8; round++) {
      await(device.fill(c, 0));
      await(device.fill(d, 0));
      Future<Buffer> read = on(caller, () -> {
        for (int i = 0; i < 4; i++) {
          coalescing.gemm(Transpose.N, Transpose.N, N, N, N, 1.0, ha, N, hb, N, 1.0, c, N);
        }
        kernel.scale(c, 1.0, d);
        return device.download(d);
      });
      if (!matches(four, await(read))) {
        wrong++;
      }
    }
    assertEquals(0, wrong, "rounds (of 8) in which the scale read c before the GEMMs made before it");
  }

  /**
   * A transfer in chunks keeps its place without the caller waiting for it: an array upload of
   * several chunks, then at once a kernel reading it; and a download of several chunks, then at once
   * an overwrite of its source — the download still reads what was there.
   */
  @ParameterizedTest
  @EnumSource(Caller.class)
  void chunkedTransfersKeepTheirPlace(Caller caller) {
    KernelClient kernel = KernelClient.create(vertx);
    int n = 5 << 20; // 20 MiB of F32: three chunks of at most 8 MiB
    float[] data = new float[n];
    for (int i = 0; i < n; i++) {
      data[i] = i % 1000;
    }
    BufferHandle x = await(device.alloc(DType.F32, n));
    BufferHandle y = await(device.alloc(DType.F32, n));
    for (int round = 0; round < 3; round++) {
      await(device.fill(x, -1));
      List<Future<?>> made = on(caller, () -> {
        List<Future<?>> f = new ArrayList<>();
        f.add(device.upload(x, data));
        f.add(kernel.scale(x, 2.0, y));
        f.add(device.downloadFloats(y));
        f.add(device.downloadFloats(x));
        f.add(device.fill(x, 5));
        return f;
      });
      float[] scaled = (float[]) await(made.get(2));
      float[] before = (float[]) await(made.get(3));
      for (int i = 0; i < n; i += 4099) {
        assertEquals(2 * data[i], scaled[i], 0, "y[" + i + "] after upload then scale");
        assertEquals(data[i], before[i], 0, "x[" + i + "] read before the fill made after it");
      }
      assertEquals(5f, readF32(x)[n - 1], 0);
    }
  }

  private static boolean matches(double[] expected, Buffer got) {
    if (got.length() != expected.length * 4) {
      return false;
    }
    for (int i = 0; i < expected.length; i++) {
      float v = got.getFloatLE(i * 4);
      if (Math.abs(v - expected[i]) > 1e-2 * Math.max(1, Math.abs(expected[i]))) {
        return false;
      }
    }
    assertTrue(expected.length > 0);
    return true;
  }
}
