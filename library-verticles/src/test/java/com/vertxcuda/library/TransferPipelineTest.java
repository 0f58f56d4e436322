package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.PipelineRecorder;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.message.DownloadIntoRequest;
import com.vertxcuda.message.UploadRequest;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.internal.RequestSender;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Recorded pipelines that upload from and download into transfer buffers, on the suite's backend
 * and isolation: every replay uploads the transfer buffer's bytes as they are then, runs the steps
 * after it and lands the result in the other transfer buffer, as a plain Java reference computes
 * it; bad buffers fail the build with BAD_REQUEST naming the step; a transfer buffer released
 * before its pipeline stays lent (no one else gets its memory) until the pipeline is released or
 * its context is lost (in process isolation: its device host ends).
 */
class TransferPipelineTest extends HostDeviceTest {

  @Override
  protected boolean devicePerTest() {
    return true; // a poison test rebuilds the context; held bytes are read per device
  }

  static final int N = 64;

  /** A transfer buffer of {@code n} floats holding {@code values}. */
  private Buffer transferBuffer(float... values) {
    Buffer b = verticle.allocateTransferBuffer(values.length * 4);
    for (float v : values) {
      b.appendFloatLE(v);
    }
    return b;
  }

  /** Exact small values (halves in [-8, 8]), different for each {@code round}. */
  private static float[] input(int round) {
    float[] v = new float[N];
    for (int i = 0; i < N; i++) {
      v[i] = ((i * 7 + round * 13) % 33 - 16) / 2f;
    }
    return v;
  }

  private static float[] floatsOf(Buffer b) {
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }

  /** upload in -> x; y = 2.5 x; z = 1; w = y + z; download w -> out. */
  private PipelineRecorder scaleAndAdd(Buffer in, Buffer out, BufferHandle x, BufferHandle y, BufferHandle z,
                                       BufferHandle w) {
    return device.record()
      .upload(in, x)
      .step(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(x).setScalar(2.5).setOutput(y))
      .fill(z, 1)
      .step(Library.KERNEL, new KernelRequest(KernelOp.ADD).setX(y).setY(z).setOutput(w))
      .download(w, out);
  }

  @Test
  void eachReplayUploadsTheBuffersBytesAsTheyAreThenAndLandsTheResult() {
    BufferHandle x = await(device.alloc(DType.F32, N));
    BufferHandle y = await(device.alloc(DType.F32, N));
    BufferHandle z = await(device.alloc(DType.F32, N));
    BufferHandle w = await(device.alloc(DType.F32, N));
    Buffer in = transferBuffer(input(0));
    Buffer out = transferBuffer(new float[N]);
    PipelineHandle p = await(scaleAndAdd(in, out, x, y, z, w).build());
    assertEquals(5, p.steps());
    assertEquals(TestDevices.backend() == BackendKind.CUDA, p.captured(), "captured as one CUDA graph on cuda: " + p);
    for (int round = 0; round < 4; round++) {
      float[] values = input(round);
      for (int i = 0; i < N; i++) {
        in.setFloatLE(i * 4, values[i]);
        out.setFloatLE(i * 4, Float.NaN);
      }
      await(device.replay(p));
      float[] expected = new float[N];
      for (int i = 0; i < N; i++) {
        expected[i] = values[i] * 2.5f + 1f;
      }
      assertArrayEquals(expected, floatsOf(out), "replay " + round + ": the transfer buffer downloaded into");
      assertArrayEquals(values, readF32(x), "replay " + round + ": the buffer uploaded to");
    }
    await(device.release(p));
  }

  @Test
  void badTransferBuffersFailTheBuildNamingTheStep() {
    BufferHandle x = await(device.alloc(DType.F32, N));
    await(device.fill(x, 9));
    // Heap memory: no device lends it.
    assertBadStep(device.record().fill(x, 5).upload(Buffer.buffer(new byte[N * 4]), x).build(), "steps[1]");
    assertBadStep(device.record().download(x, Buffer.buffer(new byte[N * 4])).build(), "steps[0]");
    // Direct memory no pool of the device lent.
    Buffer unlent = VertxInternals.buffer(Unpooled.directBuffer(N * 4).writeZero(N * 4));
    assertBadStep(device.record().fill(x, 5).upload(unlent, x).build(), "steps[1]");
    // A device on another node cannot take one: its memory is not in this JVM.
    Buffer lent = transferBuffer(new float[N]);
    DeviceClient remote = DeviceClient.create(vertx, new DeviceClientOptions().setNode("elsewhere").setDevice(0));
    assertBadStep(remote.record().upload(lent, x).build(), "steps[0]");
    // Lengths must match the handle's byte length.
    Buffer short1 = transferBuffer(new float[N - 1]);
    assertBadStep(device.record().fill(x, 5).upload(short1, x).build(), "steps[1]");
    assertBadStep(device.record().fill(x, 5).download(x, short1).build(), "steps[1]");
    assertBadStep(device.record().download(x.view(0, N - 2), lent).build(), "steps[0]");
    // A slice of a transfer buffer is not the buffer the device lent.
    Buffer twice = transferBuffer(new float[2 * N]);
    assertBadStep(device.record().upload(twice.slice(0, N * 4), x).build(), "steps[0]");
    // Released already.
    Buffer released = transferBuffer(new float[N]);
    assertTrue(verticle.releaseTransferBuffer(released));
    assertBadStep(device.record().fill(x, 5).fill(x, 6).download(x, released).build(), "steps[2]");
    assertArrayEquals(filled(9), readF32(x), "nothing ran");
    // The good buffer is still good for a pipeline.
    PipelineHandle p = await(device.record().fill(x, 4).download(x, lent).build());
    await(device.replay(p));
    assertArrayEquals(filled(4), floatsOf(lent));
    await(device.release(p));
  }

  /**
   * What a raw sender (another node, or a hand-written message) cannot get past the device: a
   * recording whose upload or download step carries memory no pool lent (the typed recorder refuses it
   * before sending), and a download into a buffer sent as a request of its own (a step only). Each is
   * answered once, BAD_REQUEST, and the device serves on.
   */
  @Test
  void rawStepsOfMemoryNoPoolLentAreRefusedByTheDevice() {
    BufferHandle x = await(device.alloc(DType.F32, N));
    await(device.fill(x, 2));
    RequestSender raw = new RequestSender(vertx, device.address(), 20_000);
    Buffer heap = Buffer.buffer(new byte[N * 4]);
    assertBadStep(raw.request(new RecordRequest(List.of(
      new PipelineStep(null, new UploadRequest(x, heap))))), "steps[0]");
    assertBadStep(raw.request(new RecordRequest(List.of(
      new PipelineStep(null, new DownloadIntoRequest(x, heap))))), "steps[0]");
    CudaException alone = failure(raw.request(new DownloadIntoRequest(x, transferBuffer(new float[N]))));
    assertEquals(FailureCode.BAD_REQUEST, alone.code(), alone.getMessage());
    assertArrayEquals(filled(2), readF32(x), "nothing ran");
  }

  @Test
  void aTransferBufferReleasedEarlyStaysLentUntilItsPipelineIsReleased() {
    BufferHandle x = await(device.alloc(DType.F32, N));
    Buffer in = transferBuffer(input(1));
    Buffer out = transferBuffer(new float[N]);
    PipelineHandle p = await(device.record().upload(in, x).download(x, out).build());
    long held = verticle.heldTransferBytes();
    // Released early: it succeeds, and the memory stays lent to the pipeline.
    assertTrue(verticle.releaseTransferBuffer(in));
    assertEquals(held, verticle.heldTransferBytes(), "the memory went back while a pipeline holds it");
    // A buffer the pool lends now, of the same size, written with other values: were it the
    // pipeline's memory, the replay would upload these.
    Buffer other = transferBuffer(input(7));
    // The pipeline still reads its own; no new step may name it.
    await(device.replay(p));
    assertArrayEquals(input(1), floatsOf(out), "the pool lent the pipeline's memory again");
    assertTrue(verticle.releaseTransferBuffer(other));
    assertBadStep(device.record().upload(in, x).build(), "steps[0]");
    // Releasing the pipeline gives it back, by the time the release is answered.
    long before = verticle.heldTransferBytes();
    await(device.release(p));
    assertTrue(verticle.heldTransferBytes() < before, "the pipeline's transfer buffer went back with its release");
    // A transfer buffer whose pipeline went first stays the user's until released.
    long now = verticle.heldTransferBytes();
    assertArrayEquals(input(1), floatsOf(out), "out is still the user's, with what the last replay left");
    assertTrue(verticle.releaseTransferBuffer(out));
    assertTrue(verticle.heldTransferBytes() < now, "released at once");
    // A build that fails holds nothing: a buffer its good steps named goes back at once when released.
    Buffer spare = transferBuffer(input(3));
    BufferHandle shorter = await(device.alloc(DType.F32, N - 1));
    assertBadStep(device.record().upload(spare, x).copy(x, shorter).build(), "steps[1]");
    long lent = verticle.heldTransferBytes();
    assertTrue(verticle.releaseTransferBuffer(spare));
    assertTrue(verticle.heldTransferBytes() < lent, "a failed build kept its transfer buffer");
  }

  @Test
  void aLostContextReleasesWhatItsPipelinesHeld() {
    Assumptions.assumeTrue(TestDevices.poisonRebuilds(), TestDevices.POISON_ENDS_CUDA);
    BufferHandle x = await(device.alloc(DType.F32, N));
    Buffer in = transferBuffer(input(2));
    PipelineHandle p = await(device.record().upload(in, x).build());
    assertTrue(verticle.releaseTransferBuffer(in));
    long before = verticle.heldTransferBytes();
    poisonAndAwaitTheNextGeneration();
    assertEquals(FailureCode.STALE_HANDLE, failure(device.replay(p)).code());
    awaitHeldBelow(before);
  }

  private void awaitHeldBelow(long bytes) {
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (verticle.heldTransferBytes() >= bytes && System.nanoTime() < deadline) {
      try {
        Thread.sleep(10);
      } catch (InterruptedException e) {
        throw new AssertionError(e);
      }
    }
    assertTrue(verticle.heldTransferBytes() < bytes, "the pipeline's transfer buffer went back to its pool: "
      + verticle.heldTransferBytes() + " bytes held, " + bytes + " before");
  }

  private static void assertBadStep(Future<?> f, String step) {
    CudaException e = failure(f);
    assertEquals(FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(e.getMessage().contains(step), "'" + e.getMessage() + "' should name " + step);
  }

  private static float[] filled(float v) {
    float[] f = new float[N];
    java.util.Arrays.fill(f, v);
    return f;
  }
}
