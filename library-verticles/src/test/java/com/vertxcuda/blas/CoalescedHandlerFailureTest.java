package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A caller's handler that throws costs only its own request: the other members of a coalesced group,
 * answered together, each get their answer (and without coalescing, as a control).
 */
class CoalescedHandlerFailureTest extends HostDeviceTest {

  static final int N = 4;

  private static BlasRequest gemm(BufferHandle a, BufferHandle b, BufferHandle c) {
    return new BlasRequest(BlasOp.GEMM).setM(N).setN(N).setK(N).setAlpha(1).setA(a).setLda(N).setB(b).setLdb(N)
      .setBeta(0).setC(c).setLdc(N);
  }

  /** A handler of one coalesced request that throws must not cost the other requests of its batch their answers. */
  @Test
  void aThrowingHandlerDoesNotStrandTheRestOfTheBatch() throws Exception {
    check(true);
  }

  /** The same without coalescing: every request is answered (control). */
  @Test
  void withoutCoalescingEveryOtherRequestIsAnswered() throws Exception {
    check(false);
  }

  private void check(boolean coalesce) throws Exception {
    BlasClient client = BlasClient.create(vertx, new DeviceClientOptions(),
      new BlasClientOptions().setCoalesce(coalesce));
    BufferHandle a = f32(new float[N * N]);
    BufferHandle b = f32(new float[N * N]);
    List<BufferHandle> cs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      cs.add(f32(new float[N * N]));
    }
    Promise<List<Future<BufferHandle>>> made = Promise.promise();
    vertx.runOnContext(v -> {
      List<Future<BufferHandle>> fs = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        Future<BufferHandle> f = client.execute(gemm(a, b, cs.get(i))).map(BlasReply::getOutput);
        if (i == 0) {
          f.onSuccess(h -> {
            throw new IllegalStateException("a bug in the user's handler of request 0");
          });
        }
        fs.add(f);
      }
      made.complete(fs);
    });
    List<Future<BufferHandle>> fs = await(made.future());
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    while (!fs.stream().skip(1).allMatch(Future::isComplete) && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    for (int i = 1; i < 4; i++) {
      assertTrue(fs.get(i).succeeded(), "request " + i + " (coalesce=" + coalesce + "): "
        + (fs.get(i).isComplete() ? String.valueOf(fs.get(i).cause()) : "never answered"));
      assertTrue(fs.get(i).result().equals(cs.get(i)), "request " + i + " answered another output");
    }
  }
}
