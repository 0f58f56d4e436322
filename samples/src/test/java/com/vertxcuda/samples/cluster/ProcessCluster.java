package com.vertxcuda.samples.cluster;

import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.CudaException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import org.junit.jupiter.api.AfterEach;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the tests of GPU nodes in JVMs of their own ({@link GpuNode} on the host backend, 127.0.0.1)
 * share: a cluster name per test, the nodes a test starts or joins (closed after it), and the bytes
 * they send and check.
 */
abstract class ProcessCluster {

  private static final AtomicLong CLUSTERS = new AtomicLong();
  private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  final List<AutoCloseable> closing = new ArrayList<>();
  private final List<Vertx> nodes = new ArrayList<>();
  private final String clusterName = "vertx-cuda-it-" + ProcessHandle.current().pid() + "-" + CLUSTERS.incrementAndGet();
  final ClusterSettings settings = settings();

  /** Settings of a member of this test's cluster (a new object each time). */
  ClusterSettings settings() {
    ClusterSettings s = new ClusterSettings();
    s.name = clusterName;
    return s;
  }

  @AfterEach
  void close() throws Exception {
    for (Vertx v : nodes) {
      await(v.close());
    }
    for (AutoCloseable c : closing) {
      c.close();
    }
  }

  /** A GPU node's arguments: {@code s}'s, the host backend, then {@code extra}. */
  static List<String> gpuNodeArguments(ClusterSettings s, String... extra) {
    List<String> args = new ArrayList<>(s.arguments());
    args.addAll(List.of("--backend", "host"));
    args.addAll(List.of(extra));
    return args;
  }

  /** A GPU node of this test's cluster, killed after the test. */
  NodeProcess gpuNode(String... extra) throws Exception {
    NodeProcess p = NodeProcess.start(GpuNode.class, gpuNodeArguments(settings, extra), "READY ");
    closing.add(p);
    return p;
  }

  /** A member in this JVM, closed after the test. */
  Vertx join(ClusterSettings s) throws Exception {
    Vertx v = await(s.start());
    nodes.add(v);
    return v;
  }

  static List<DeviceInfo> devicesOf(Vertx v, String node, int count) throws Exception {
    long deadline = System.currentTimeMillis() + 60_000;
    while (true) {
      List<DeviceInfo> ready = new ArrayList<>();
      for (DeviceInfo d : await(DeviceRegistry.list(v))) {
        if (d.getNode().equals(node)) {
          ready.add(d);
        }
      }
      if (ready.size() >= count) {
        return ready;
      }
      if (System.currentTimeMillis() > deadline) {
        fail("node " + node + " registered " + ready.size() + " of " + count + " devices");
      }
      Thread.sleep(100);
    }
  }

  /**
   * Bytes that differ from one position to the next (xorshift, each long big-endian), so a misplaced
   * piece shows; {@code size} a multiple of 8. Made a mebibyte at a time in an array, then appended:
   * quicker on the suite's C1-only JVMs than appending each long to the buffer.
   */
  static Buffer pattern(int size, long seed) {
    if (size % 8 != 0) {
      throw new IllegalArgumentException("the pattern is made of longs: size " + size + " is not a multiple of 8");
    }
    Buffer data = Buffer.buffer(size);
    byte[] piece = new byte[Math.min(size, 1 << 20)];
    for (int at = 0; at < size; at += piece.length) {
      int n = Math.min(piece.length, size - at);
      for (int i = 0; i < n; i += 8) {
        seed ^= seed << 13;
        seed ^= seed >>> 7;
        seed ^= seed << 17;
        LONGS.set(piece, i, seed);
      }
      data.appendBytes(piece, 0, n);
    }
    return data;
  }

  /**
   * Whether two buffers hold the same bytes, compared as NIO buffers (the JDK's vectorized mismatch:
   * a gibibyte in a fraction of a second where {@link Buffer#equals} takes seconds).
   */
  static boolean sameBytes(Buffer a, Buffer b) {
    return a.length() == b.length()
      && ((BufferInternal) a).getByteBuf().nioBuffer().equals(((BufferInternal) b).getByteBuf().nioBuffer());
  }

  static <T> T await(Future<T> f) throws Exception {
    return await(f, 60);
  }

  static <T> T await(Future<T> f, long seconds) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
    }
  }

  static CudaException awaitFailure(Future<?> f) throws Exception {
    try {
      f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      return (CudaException) e.getCause();
    }
    throw new AssertionError("expected a failure");
  }
}
