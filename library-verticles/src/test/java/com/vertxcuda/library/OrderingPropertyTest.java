package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.library.OrderingModel.Step;
import com.vertxcuda.library.OrderingModel.Target;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Random sequences of device, BLAS, FFT and kernel operations on overlapping views of a few
 * buffers, all sent without waiting, each download compared with a sequential model at its point
 * in the sequence. The order promised is per sender: one event loop, each of two Vert.x contexts
 * (on buffers of their own, their sends interleaved), or a thread outside Vert.x.
 */
class OrderingPropertyTest extends HostDeviceTest {

  private static final int BUFFERS = 6;
  private static final int[] ALL = {0, 1, 2, 3, 4, 5};

  /** Allocates the buffers and uploads {@code initial} into them, awaited: the sequence's start. */
  private Target target(float[][] initial) {
    List<BufferHandle> buffers = new ArrayList<>();
    for (float[] values : initial) {
      buffers.add(f32(values));
    }
    return new Target(device, blas, fft, KernelClient.create(vertx), buffers);
  }

  /** Sends steps[from, to) on {@code context}, in one task, into {@code futures}. */
  private static void sendOn(Context context, List<Step> steps, int from, int to, Target target, Future<?>[] futures) {
    context.runOnContext(v -> {
      for (int i = from; i < to; i++) {
        futures[i] = steps.get(i).send().apply(target);
      }
    });
  }

  /** Completes once every task queued on {@code context} before it has run. */
  private static Future<Void> drained(Context context) {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> done.complete());
    return done.future();
  }

  /** Where the tasks of a sequence of {@code size} steps end: chunks of 1 to 24 steps. */
  private static List<Integer> chunks(int size, Random random) {
    List<Integer> ends = new ArrayList<>();
    for (int at = 0; at < size; ) {
      at = Math.min(size, at + 1 + random.nextInt(24));
      ends.add(at);
    }
    return ends;
  }

  @Test
  void fromOneEventLoop() {
    float[][] values = OrderingModel.initial(BUFFERS, 1);
    Target target = target(values);
    List<Step> steps = new OrderingModel(values, ALL, 11).generate(320).steps;
    Future<?>[] futures = new Future<?>[steps.size()];
    Context context = vertx.getOrCreateContext();
    int from = 0;
    for (int end : chunks(steps.size(), new Random(12))) {
      sendOn(context, steps, from, end, target, futures);
      from = end;
    }
    await(drained(context));
    check(steps, futures);
  }

  @Test
  void fromTwoContextsOnBuffersOfTheirOwn() {
    float[][] values = OrderingModel.initial(BUFFERS, 2);
    Target target = target(values);
    List<List<Step>> sequences = List.of(new OrderingModel(values, new int[] {0, 1, 2}, 21).generate(180).steps,
      new OrderingModel(values, new int[] {3, 4, 5}, 22).generate(180).steps);
    List<Context> contexts = List.of(vertx.getOrCreateContext(), vertx.getOrCreateContext());
    List<Future<?>[]> futures = List.of(new Future<?>[sequences.get(0).size()], new Future<?>[sequences.get(1).size()]);
    Random random = new Random(23);
    List<List<Integer>> ends = List.of(chunks(sequences.get(0).size(), random),
      chunks(sequences.get(1).size(), random));
    int[] next = new int[2];
    int[] from = new int[2];
    // Chunks alternate between the contexts, in a fixed pattern, until both sequences are sent.
    for (int turn = 0; next[0] < ends.get(0).size() || next[1] < ends.get(1).size(); turn++) {
      int s = (turn % 3 == 2) ? 1 - turn % 2 : turn % 2;
      if (next[s] < ends.get(s).size()) {
        int end = ends.get(s).get(next[s]++);
        sendOn(contexts.get(s), sequences.get(s), from[s], end, target, futures.get(s));
        from[s] = end;
      }
    }
    await(Future.all(drained(contexts.get(0)), drained(contexts.get(1))));
    check(sequences.get(0), futures.get(0));
    check(sequences.get(1), futures.get(1));
  }

  @Test
  void fromAThreadOutsideVertx() throws InterruptedException {
    float[][] values = OrderingModel.initial(BUFFERS, 3);
    Target target = target(values);
    List<Step> steps = new OrderingModel(values, ALL, 31).generate(320).steps;
    Future<?>[] futures = new Future<?>[steps.size()];
    Thread sender = new Thread(() -> {
      for (int i = 0; i < steps.size(); i++) {
        futures[i] = steps.get(i).send().apply(target);
      }
    }, "ordering-sender");
    sender.start();
    sender.join();
    check(steps, futures);
  }

  /** Every step succeeded and every download read what the model held at its point. */
  private static void check(List<Step> steps, Future<?>[] futures) {
    await(Future.join(Arrays.asList(futures)).otherwiseEmpty());
    int downloads = 0;
    for (int i = 0; i < steps.size(); i++) {
      Step step = steps.get(i);
      assertTrue(futures[i].succeeded(), "step " + i + ", " + step.what() + ": " + futures[i].cause());
      if (step.expected() != null) {
        compare(i, step, TestDevices.floats((Buffer) futures[i].result()));
        downloads++;
      }
    }
    assertTrue(downloads * 8 >= steps.size(), "the sequence checks often enough: " + downloads + " downloads");
  }

  // Exact arithmetic bit for bit; what went through a GEMM or an FFT to 1e-3 of the view's scale.
  private static void compare(int index, Step step, float[] got) {
    float[] expected = step.expected();
    assertEquals(expected.length, got.length, step.what());
    double scale = 1;
    for (float v : expected) {
      scale = Math.max(scale, Math.abs(v));
    }
    for (int j = 0; j < expected.length; j++) {
      boolean same = step.exact()[j] ? Float.floatToIntBits(expected[j]) == Float.floatToIntBits(got[j])
        : Math.abs(expected[j] - got[j]) <= 1e-3 * scale;
      if (!same) {
        fail("step " + index + ", " + step.what() + ": element " + j + " is " + got[j] + ", the model holds "
          + expected[j] + (step.exact()[j] ? " (exact)" : " (within " + 1e-3 * scale + ")"));
      }
    }
  }
}
