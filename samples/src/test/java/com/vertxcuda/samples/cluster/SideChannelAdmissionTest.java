package com.vertxcuda.samples.cluster;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.CoreWireTypes;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.internal.Nodes;
import com.vertxcuda.testing.LocalCluster;
import io.netty.buffer.Unpooled;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.NetSocket;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a peer that is not an owner gets from a node's bulk side channel: raw connections from
 * 127.0.0.1 against one clustered node on the host backend, beside a client node whose real transfers
 * must still pass. A forged token is answered FAIL and the connection closed within a second, before
 * the node keeps a byte of what follows; idle connections cost the node little memory; past the
 * connections allowed from one address a new one is answered QUEUE_FULL and closed.
 */
@ExtendWith(VertxExtension.class)
@Tag("alone")
class SideChannelAdmissionTest {

  /** Connections the node's side channel serves from one address in this test. */
  private static final int PER_PEER = 1008;
  private static final long MIB = 1 << 20;

  private static Vertx gpu;
  private static Vertx client;
  private static Vertx raw;
  private static NetClient sockets;
  /** The device, through the GPU node's own Vert.x (its local route). */
  private static DeviceClient local;
  /** The device, from the client node (remote: past 1 MiB over the side channel). */
  private static DeviceClient remote;
  private static String host;
  private static int port;

  @BeforeAll
  static void start() throws Exception {
    ClusterSettings settings = new ClusterSettings();
    settings.name = "vertx-cuda-admission-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
    gpu = await(settings.start());
    await(DeviceNode.deploy(gpu, new NodeOptions().setDeviceOptions(new DeviceOptions().setBackend(BackendKind.HOST)
      .setHostMemory(256 * MIB).setBulkMaxConnectionsPerPeer(PER_PEER))));
    client = await(settings.start());
    local = DeviceClient.create(gpu, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    remote = DeviceClient.create(client, new DeviceClientOptions().setNode(Nodes.self(gpu)).setDevice(0));
    String bulk = await(local.describe()).getBulkAddress();
    host = bulk.substring(0, bulk.lastIndexOf(':'));
    port = Integer.parseInt(bulk.substring(bulk.lastIndexOf(':') + 1));
    raw = Vertx.vertx();
    sockets = raw.createNetClient();
  }

  @AfterAll
  static void stop() throws Exception {
    if (raw != null) {
      await(raw.close());
    }
    await(LocalCluster.close(client, gpu));
  }

  /**
   * A header naming a real 8 MiB buffer with a wrong token, then 8 MiB less one byte: FAIL (FORBIDDEN)
   * and closed within a second of the header; a hundred such at once leave the node's memory where it
   * was; the buffer reads as before. A download with a wrong token hears FAIL, and not a byte of data.
   */
  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void aForgedTokenIsAnsweredFailAndClosedWithinASecond() throws Exception {
    int size = (int) (8 * MIB);
    BufferHandle real = await(local.alloc(DType.U8, size));
    Buffer pattern = ProcessCluster.pattern(size, 48);
    await(local.upload(real, pattern));
    BufferHandle forged = new BufferHandle(real.node(), real.device(), real.generation(), real.id(), real.dtype(),
      real.count(), real.tokenHigh() ^ 1, real.tokenLow(), 0, real.count());
    // One direct buffer written to every socket (never copied per connection on this side).
    Buffer payload = BufferInternal.buffer(Unpooled.unreleasableBuffer(
      Unpooled.directBuffer(size - 1).writeZero(size - 1)));

    Raw one = await(open());
    long sent = System.nanoTime();
    one.socket.write(header(true, forged));
    one.socket.write(payload);
    long closed = await(one.closed.future());
    assertTrue(closed - sent <= TimeUnit.SECONDS.toNanos(1),
      "closed " + (closed - sent) / 1_000_000 + " ms after the header");
    assertEquals(FailureCode.FORBIDDEN, one.failure(), one.heard());

    long heapBefore = heap();
    long directBefore = direct();
    List<Raw> crowd = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      crowd.add(await(open()));
    }
    long crowdSent = System.nanoTime();
    for (Raw r : crowd) {
      r.socket.write(header(true, forged));
      r.socket.write(payload);
    }
    for (Raw r : crowd) {
      long at = await(r.closed.future());
      assertTrue(at - crowdSent <= TimeUnit.SECONDS.toNanos(5), "closed " + (at - crowdSent) / 1_000_000
        + " ms after a hundred headers");
      assertEquals(FailureCode.FORBIDDEN, r.failure(), r.heard());
    }
    assertTrue(heap() - heapBefore <= 64 * MIB, "heap up " + (heap() - heapBefore) / MIB + " MiB");
    assertTrue(direct() - directBefore <= 64 * MIB, "direct memory up " + (direct() - directBefore) / MIB + " MiB");

    Raw download = await(open());
    download.socket.write(header(false, forged));
    await(download.closed.future());
    assertEquals(FailureCode.FORBIDDEN, download.failure(), download.heard());

    assertTrue(pattern.equals(await(local.download(real))), "the buffer reads what its owner wrote");
    await(local.free(real));
  }

  /**
   * A thousand connections that send nothing leave the node's heap and direct memory within 64 MiB of
   * where they were, and a real upload and download still pass beside them; past the connections
   * allowed from one address, a new one hears QUEUE_FULL and is closed.
   */
  @Test
  @Timeout(value = 180, unit = TimeUnit.SECONDS)
  void aThousandIdleConnectionsCostLittleAndRealTransfersPass() throws Exception {
    long heapBefore = heap();
    long directBefore = direct();
    List<Raw> idle = new ArrayList<>();
    List<Raw> more = new ArrayList<>();
    try {
      for (int batch = 0; batch < 10; batch++) {
        List<Future<Raw>> opened = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
          opened.add(open());
        }
        for (Future<Raw> f : opened) {
          idle.add(await(f));
        }
      }
      assertTrue(heap() - heapBefore <= 64 * MIB, "heap up " + (heap() - heapBefore) / MIB + " MiB");
      assertTrue(direct() - directBefore <= 64 * MIB, "direct memory up " + (direct() - directBefore) / MIB + " MiB");

      Buffer data = ProcessCluster.pattern((int) (3 * MIB), 1000);
      BufferHandle h = await(remote.alloc(DType.U8, data.length()));
      await(remote.upload(h, data));
      assertTrue(data.equals(await(remote.download(h))), "3 MiB came back equal beside a thousand idle connections");
      await(remote.free(h));

      // 1,000 idle and at least 9 more from this address: past 1,008, each new one is refused.
      for (int i = 0; i < PER_PEER - idle.size() + 1; i++) {
        more.add(await(open()));
      }
      // The last is past the limit whatever the client node keeps open; each refusal is written as the
      // connection is accepted, so those before it have arrived by the time it has.
      Raw last = more.get(more.size() - 1);
      await(last.closed.future());
      assertEquals(FailureCode.QUEUE_FULL, last.failure(), last.heard());
      for (Raw r : more) {
        if (!r.heard().isEmpty()) {
          // A refusal is written, then the connection closed: the frame can arrive before the close.
          await(r.closed.future());
          assertEquals(FailureCode.QUEUE_FULL, r.failure(), r.heard());
        } else {
          assertTrue(!r.closed.future().isComplete(), "a connection within the limit is not closed unheard");
        }
      }
      for (Raw r : idle) {
        assertTrue(!r.closed.future().isComplete(), "an idle connection within the limit stays open");
      }
    } finally {
      // Closed and their close seen by this side, so the next test starts with none from this address.
      List<Future<Long>> gone = new ArrayList<>();
      for (Raw r : idle) {
        r.socket.close();
        gone.add(r.closed.future());
      }
      for (Raw r : more) {
        r.socket.close();
        gone.add(r.closed.future());
      }
      await(Future.all(gone));
      awaitRoomFromThisAddress();
    }
  }

  /**
   * Waits until the node has seen this address's closes: a probe connection that hears nothing for
   * 200 ms is within the limit again (one past it is answered QUEUE_FULL as it is accepted).
   */
  private static void awaitRoomFromThisAddress() throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      Raw probe = await(open());
      Thread.sleep(200);
      boolean refused = !probe.heard().isEmpty();
      probe.socket.close();
      await(probe.closed.future());
      if (!refused) {
        return;
      }
      assertTrue(System.nanoTime() < deadline, "the node still refuses this address 30 s after its connections closed");
    }
  }

  /** A raw connection to the node's side channel: what it heard, and when it closed. */
  private static final class Raw {
    NetSocket socket;
    private final Buffer heard = Buffer.buffer();
    final Promise<Long> closed = Promise.promise();

    synchronized String heard() {
      return heard.length() == 0 ? "" : heard.length() + " bytes: " + heard.getBuffer(Math.min(9, heard.length()),
        heard.length()).toString(StandardCharsets.UTF_8);
    }

    /** The code of the FAIL frame it heard; null where it heard none. */
    synchronized FailureCode failure() {
      if (heard.length() < 9 || heard.getByte(0) != 'F') {
        return null;
      }
      int code = heard.getInt(1);
      for (FailureCode c : FailureCode.values()) {
        if (c.code() == code) {
          return c;
        }
      }
      return null;
    }
  }

  private static Future<Raw> open() {
    return sockets.connect(port, host).map(s -> {
      Raw r = new Raw();
      r.socket = s;
      s.handler(b -> {
        synchronized (r) {
          r.heard.appendBuffer(b);
        }
      });
      s.closeHandler(v -> r.closed.tryComplete(System.nanoTime()));
      s.exceptionHandler(t -> { }); // a write cut by the node's close
      return r;
    });
  }

  /** A transfer's header as a client writes it: magic, direction, timeout, the handle (token included). */
  private static Buffer header(boolean upload, BufferHandle h) {
    Buffer handle = Buffer.buffer();
    CudaCodecs.codec(CoreWireTypes.HANDLE).encodeToWire(handle, h);
    return Buffer.buffer().appendInt(0x56434232).appendByte((byte) (upload ? 'U' : 'D')).appendLong(600_000)
      .appendInt(handle.length()).appendBuffer(handle);
  }

  private static long heap() {
    System.gc();
    System.gc();
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  private static long direct() {
    long jdk = ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
      .filter(p -> p.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    return jdk + Math.max(0, io.netty.util.internal.PlatformDependent.usedDirectMemory());
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }
}
