package com.vertxcuda;

import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftReply;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.internal.CudaRuntime;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.rand.RandClient;
import com.vertxcuda.rand.RandRequest;
import com.vertxcuda.rand.RngType;
import com.vertxcuda.testing.LocalCluster;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A sending node needs this artifact alone: with nothing of the device or library modules (nor
 * JCuda) on the class path, every typed client sends its requests to another node of a cluster
 * and reads the replies, both crossing the wire through the codecs. The other node stands in for
 * a GPU node, answering at the library addresses.
 */
class SendingNodeTest {

  private final List<Vertx> nodes = new ArrayList<>();

  @AfterEach
  void close() throws Exception {
    for (Vertx v : nodes) {
      await(v.close());
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void everyTypedClientWorksFromANodeWithOnlyTheContract() throws Exception {
    assertThrows(ClassNotFoundException.class, () -> Class.forName("jcuda.Pointer"));
    assertThrows(ClassNotFoundException.class, () -> Class.forName("com.vertxcuda.device.DeviceVerticle"));

    String cluster = "vertx-cuda-client-it-" + ProcessHandle.current().pid();
    Vertx gpu = await(LocalCluster.node(cluster));
    nodes.add(gpu);
    Vertx sender = await(LocalCluster.node(cluster));
    nodes.add(sender);
    CudaRuntime.of(gpu).registerCodecs();
    String node = Nodes.self(gpu);
    Set<String> senders = ConcurrentHashMap.newKeySet();
    List<Future<Void>> registered = new ArrayList<>();
    registered.add(answer(gpu, Library.BLAS, senders, (BlasRequest r) -> new BlasReply().setOutput(r.getC())));
    registered.add(answer(gpu, Library.FFT, senders, (FftRequest r) -> new FftReply(r.getOutput(), false)));
    registered.add(answer(gpu, Library.RAND, senders, RandRequest::getOutput));
    registered.add(answer(gpu, Library.KERNEL, senders, (KernelRequest r) -> new KernelReply().setOutput(r.getOutput())));
    await(Future.all(registered));

    BufferHandle a = BufferHandle.issue(node, 0, 1, 1, DType.F32, 64);
    BufferHandle c = BufferHandle.issue(node, 0, 1, 2, DType.F32, 64);
    BufferHandle spectrum = BufferHandle.issue(node, 0, 1, 3, DType.C64, 64);
    DeviceClientOptions options = new DeviceClientOptions().setNode(node).setDevice(0);
    // Replies may take a moment to find the consumers the other node registered.
    assertEquals(c, retry(() -> BlasClient.create(sender, options)
      .gemm(Transpose.N, Transpose.N, 8, 8, 8, 1, a, 8, a, 8, 0, c, 8)));
    assertEquals(spectrum, retry(() -> FftClient.create(sender, options)
      .transform(FftType.C2C, FftDirection.FORWARD, List.of(64), 1, spectrum, spectrum)));
    assertEquals(a, retry(() -> RandClient.create(sender, options).uniform(RngType.PHILOX4_32_10, 7, a)));
    assertEquals(c, retry(() -> KernelClient.create(sender, options).scale(a, 2, c)));
    assertEquals(Set.of(Nodes.self(sender)), senders, "every request came over the wire from the sending node");
  }

  private static <T> Future<Void> answer(Vertx gpu, Library library, Set<String> senders, Function<T, Object> reply) {
    MessageConsumer<T> consumer = gpu.eventBus().consumer(Addresses.library(Nodes.self(gpu), 0, library),
      (Message<T> m) -> {
        senders.add(VertxInternals.sender(gpu, m));
        m.reply(reply.apply(m.body()));
      });
    return consumer.completion();
  }

  private static <T> T retry(java.util.function.Supplier<Future<T>> request) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      try {
        return await(request.get());
      } catch (CudaException e) {
        if (System.nanoTime() > deadline) {
          throw e;
        }
        Thread.sleep(100);
      }
    }
  }

  private static <T> T await(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }
}
