package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelClient;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Requests whose plan is not cached wait for it off the submission thread without giving up their
 * place: what reads their output sees their result, and what touches other buffers is not held
 * behind them. Bluestein sizes (2^19 + odd) take tens to hundreds of ms to plan on the host.
 */
class PreparationOrderingTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // each test needs plans not yet cached
  }

  private static final int[] SIZES = {(1 << 19) + 1, (1 << 19) + 3, (1 << 19) + 5};

  /** Futures made in one event-loop task, in order, and the order in which they completed there. */
  private final class Sent {
    final Map<String, Future<?>> futures = new LinkedHashMap<>();
    final List<String> completed = new ArrayList<>();

    <T> Future<T> send(String name, Supplier<Future<T>> request) {
      Future<T> f = request.get();
      futures.put(name, f);
      f.onComplete(ar -> completed.add(name));
      return f;
    }

    int rank(String name) {
      return completed.indexOf(name);
    }
  }

  private Sent inOneTask(java.util.function.Consumer<Sent> requests) {
    Promise<Sent> made = Promise.promise();
    vertx.runOnContext(v -> {
      Sent sent = new Sent();
      requests.accept(sent);
      made.complete(sent);
    });
    Sent sent = await(made.future());
    await(Future.join(new ArrayList<>(sent.futures.values())).otherwiseEmpty());
    return sent;
  }

  private BufferHandle signal(int n, int seed) {
    return f32(floats(values(2 * n, seed)));
  }

  private BufferHandle filled(int count, double value) {
    BufferHandle h = await(device.alloc(DType.F32, count));
    return await(device.fill(h, value));
  }

  /** The transform of {@code x} by a request of its own, awaited alone (its plan cached by now). */
  private float[] alone(BufferHandle x, int n) {
    BufferHandle out = await(device.alloc(DType.F32, 2L * n));
    await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, x, out));
    return readF32(out);
  }

  private static float[] floatsOf(Future<?> download) {
    return TestDevices.floats((Buffer) download.result());
  }

  @Test
  void downloadsSeeTheirFftAndUnrelatedWorkIsNotHeldBehindThePlans() {
    List<BufferHandle> xs = new ArrayList<>();
    List<BufferHandle> ys = new ArrayList<>();
    for (int i = 0; i < SIZES.length; i++) {
      xs.add(signal(SIZES[i], 10 + i));
      ys.add(filled(2 * SIZES[i], -7)); // what a download that overtook its FFT would see
    }
    BufferHandle other = await(device.alloc(DType.F32, 4096));
    Sent sent = inOneTask(s -> {
      for (int i = 0; i < SIZES.length; i++) {
        int at = i;
        s.send("fft" + i, () -> fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(SIZES[at]), 1, xs.get(at),
          ys.get(at)));
        s.send("y" + i, () -> device.download(ys.get(at)));
      }
      s.send("fill", () -> device.fill(other, 3.5));
      s.send("other", () -> device.download(other));
    });
    sent.futures.forEach((name, f) -> assertTrue(f.succeeded(), name + " failed: " + f.cause()));

    for (int i = 0; i < SIZES.length; i++) {
      assertArrayEquals(alone(xs.get(i), SIZES[i]), floatsOf(sent.futures.get("y" + i)), "y" + i);
    }
    float[] expected = new float[4096];
    java.util.Arrays.fill(expected, 3.5f);
    assertArrayEquals(expected, floatsOf(sent.futures.get("other")));
    if (TestDevices.backend() == BackendKind.HOST) {
      // The plans take hundreds of ms on the host; on cuda they may be done before the fill is.
      assertTrue(sent.rank("other") < sent.rank("fft2"),
        "unrelated work should not wait for the plans: " + sent.completed);
    }
  }

  /**
   * A recording whose FFT step's plan is being made keeps its place the same way: a free of one of
   * its buffers sent after it waits for it (and the recording succeeds, its replays then failing
   * NOT_FOUND), work on other buffers does not wait.
   */
  @Test
  void aRecordingWaitsForItsPlanWithoutHoldingUnrelatedWork() {
    int n = SIZES[2];
    BufferHandle x = signal(n, 40);
    BufferHandle y = filled(2 * n, -7);
    BufferHandle spare = await(device.alloc(DType.F32, 16));
    BufferHandle other = await(device.alloc(DType.F32, 4096));
    Sent sent = inOneTask(s -> {
      s.send("record", () -> device.record()
        .step(com.vertxcuda.Library.FFT, new com.vertxcuda.fft.FftRequest().setType(FftType.C2C)
          .setDirection(FftDirection.FORWARD).setN(List.of(n)).setInput(x).setOutput(y))
        .fill(spare, 1).build());
      s.send("free", () -> device.free(spare));
      s.send("fill", () -> device.fill(other, 3.5));
      s.send("other", () -> device.download(other));
    });
    sent.futures.forEach((name, f) -> assertTrue(f.succeeded(), name + " failed: " + f.cause()));
    assertTrue(sent.rank("record") < sent.rank("free"), "the free waited for the recording: " + sent.completed);
    if (TestDevices.backend() == BackendKind.HOST) {
      assertTrue(sent.rank("other") < sent.rank("record"),
        "unrelated work should not wait for the recording's plan: " + sent.completed);
    }
    com.vertxcuda.PipelineHandle p = (com.vertxcuda.PipelineHandle) sent.futures.get("record").result();
    assertEquals(FailureCode.NOT_FOUND, failure(device.replay(p)).code(), "its fill's buffer is gone");
    float[] untouched = new float[2 * n];
    java.util.Arrays.fill(untouched, -7);
    assertArrayEquals(untouched, readF32(y), "recording transforms nothing");
    await(device.release(p));
  }

  /**
   * The kernel library's preparations (a compile, a load) cannot stall on the host: NVRTC and modules
   * need a GPU and their preparation answers UNSUPPORTED at once. So the stall here is an FFT plan,
   * with built-in kernels around it and a compile among them: the kernels that read the FFT's output
   * run after it, in their order; those on other buffers keep theirs and do not wait for it. (Answers
 * of different streams may arrive in either order: the values say what ran after what.)
   */
  @Test
  void builtinKernelsAroundAStalledPreparationKeepTheirOrder() {
    KernelClient kernels = KernelClient.create(vertx);
    int n = SIZES[0];
    BufferHandle x = signal(n, 20);
    BufferHandle y = filled(2 * n, -7);
    BufferHandle z = filled(2 * n, -9);
    BufferHandle u = await(device.alloc(DType.F32, 4096));
    BufferHandle v = await(device.alloc(DType.F32, 4096));
    Sent sent = inOneTask(s -> {
      s.send("compile", () -> kernels.compile("extern \"C\" __global__ void k() {}", null, List.of()));
      s.send("fft", () -> fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, x, y));
      s.send("scale y", () -> kernels.scale(y, 3, z));
      s.send("add z", () -> kernels.add(z, z, z));
      s.send("fill u", () -> kernels.fill(u, 1.25));
      s.send("scale u", () -> kernels.scale(u, -2, v));
      s.send("add u", () -> kernels.add(u, v, u));
      s.send("u", () -> device.download(u));
      s.send("z", () -> device.download(z));
    });

    if (TestDevices.backend() == BackendKind.HOST) {
      Throwable refused = sent.futures.get("compile").cause();
      assertTrue(refused instanceof CudaException, "compile: " + refused);
      assertEquals(FailureCode.UNSUPPORTED, ((CudaException) refused).code());
      assertTrue(sent.rank("u") < sent.rank("fft"),
        "kernels on other buffers should not wait for the plan: " + sent.completed);
    }
    sent.futures.forEach((name, f) -> assertTrue(name.equals("compile") || f.succeeded(), name + ": " + f.cause()));
    float[] spectrum = alone(x, n);
    float[] expectedZ = new float[spectrum.length];
    for (int i = 0; i < spectrum.length; i++) {
      float scaled = 3f * spectrum[i];
      expectedZ[i] = scaled + scaled;
    }
    assertArrayEquals(expectedZ, floatsOf(sent.futures.get("z")), "z = 2 * 3 * FFT(x)");
    float[] expectedU = new float[4096];
    java.util.Arrays.fill(expectedU, 1.25f + -2f * 1.25f);
    assertArrayEquals(expectedU, floatsOf(sent.futures.get("u")), "u = u + (-2) u");
  }

  /**
   * The caller's deadline travels with the request: a fill that waits behind a plan longer than its
   * sender's 50 ms timeout is answered TIMEOUT and never reaches the device (the FFT's output is what
   * a later download sees, not the fill's value).
   */
  @Test
  void aRequestPastItsDeadlineWhileWaitingNeverRuns() {
    assumeTrue(TestDevices.backend() == BackendKind.HOST, "plans take hundreds of ms only on the host");
    int n = SIZES[1];
    BufferHandle x = signal(n, 30);
    BufferHandle y = filled(2 * n, -7);
    com.vertxcuda.DeviceClient impatient = com.vertxcuda.DeviceClient.create(vertx,
      new com.vertxcuda.DeviceClientOptions().setTimeout(50));
    Sent sent = inOneTask(s -> {
      s.send("fft", () -> fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(n), 1, x, y));
      s.send("fill", () -> impatient.fill(y, 1.0));
    });
    assertTrue(sent.futures.get("fft").succeeded(), "fft: " + sent.futures.get("fft").cause());
    Throwable late = sent.futures.get("fill").cause();
    assertTrue(late instanceof CudaException, "fill: " + late);
    assertEquals(FailureCode.TIMEOUT, ((CudaException) late).code());
    assertArrayEquals(alone(x, n), readF32(y), "y holds the FFT, not the late fill");
  }
}
