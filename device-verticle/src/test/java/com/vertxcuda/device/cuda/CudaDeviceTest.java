package com.vertxcuda.device.cuda;

import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.device.context.Allocation;
import com.vertxcuda.device.context.AllocationTable;
import com.vertxcuda.device.context.StreamOrdering;
import com.vertxcuda.device.spi.DeviceMemory;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.junit5.Timeout;
import io.vertx.junit5.VertxExtension;
import io.vertx.junit5.VertxTestContext;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What only a GPU can show: ordering across streams, pinned and pageable copies, device OOM, a 1 GiB round trip. */
@Tag("gpu")
@ExtendWith(VertxExtension.class)
class CudaDeviceTest {

  private static final DeviceOptions CUDA = new DeviceOptions().setBackend(BackendKind.CUDA);

  @BeforeAll
  static void needsGpu() {
    try {
      CudaBackend.load(new DeviceOptions());
    } catch (CudaUnavailableException e) {
      assumeTrue(false, "no usable GPU: " + e.getMessage());
    }
  }

  /** A pattern a byte at a time, so misplaced chunks show. */
  private static byte pattern(long i) {
    return (byte) (i * 31 + (i >>> 16) * 7 + 1);
  }

  private static ByteBuffer patterned(ByteBuffer b) {
    for (int i = 0; i < b.capacity(); i++) {
      b.put(i, pattern(i));
    }
    return b;
  }

  private static void assertPattern(ByteBuffer b, int n) {
    for (int i = 0; i < n; i++) {
      if (b.get(i) != pattern(i)) {
        fail("byte " + i + " is " + b.get(i) + ", expected " + pattern(i));
      }
    }
  }

  @Test
  void longWriteThenDownloadOnAnotherStreamSeesFinalValues() throws Exception {
    CudaContext device = (CudaContext) CudaBackend.load(CUDA).open(0);
    try {
      GpuStream writer = device.createStream("writer");
      GpuStream reader = device.createStream("reader");
      long count = 256L << 20; // 1 GiB of I32
      DeviceMemory memory = device.allocate(count * 4);
      AllocationTable table = new AllocationTable("local", 0, 1, 0, 0);
      Allocation a = table.register(DType.I32, count, "test", memory);
      StreamOrdering ordering = new StreamOrdering(device);
      // Twenty passes over 1 GiB keep the writer busy for milliseconds; only the last value may be seen.
      for (int pass = 0; pass < 20; pass++) {
        int value = pass == 19 ? 0x5EED0001 : pass;
        ordering.run(writer, List.of(), List.of(a), () -> device.fill(writer, memory, 0, count, 4, value)).release();
      }
      int tail = 1 << 20;
      Buffer out = device.hostBuffer(tail * 4);
      ByteBuffer dst = VertxInternals.byteBuf(out).nioBuffer(0, tail * 4).order(ByteOrder.LITTLE_ENDIAN);
      GpuEvent read = ordering.run(reader, List.of(a), List.of(),
        () -> device.copyDeviceToHost(reader, memory, (count - tail) * 4, dst));
      device.whenComplete(read).get(30, TimeUnit.SECONDS);
      read.release();
      for (int i = 0; i < tail; i++) {
        assertEquals(0x5EED0001, dst.getInt(i * 4), "element " + i + " of the tail");
      }
      PinnedMemory.release(out);
      ordering.forget(a);
      device.release(memory);
    } finally {
      device.close(false);
    }
  }

  @Test
  void pinnedDirectAndHeapCopiesRoundTrip() throws Exception {
    CudaContext device = (CudaContext) CudaBackend.load(CUDA).open(0);
    try {
      GpuStream s = device.createStream("copies");
      int n = (40 << 20) + 123; // not a whole number of pages
      DeviceMemory memory = device.allocate(n);

      // Heap source (staged through a pinned block), pinned destination.
      device.copyHostToDevice(s, patterned(ByteBuffer.allocate(n)), memory, 0);
      Buffer pinnedOut = device.hostBuffer(n);
      ByteBuffer pinnedDst = VertxInternals.byteBuf(pinnedOut).nioBuffer(0, n);
      device.copyDeviceToHost(s, memory, 0, pinnedDst);
      waitFor(device, s);
      assertPattern(pinnedDst, n);

      // Pageable direct source, heap destination (staged).
      device.fill(s, memory, 0, n, 1, 0);
      device.copyHostToDevice(s, patterned(ByteBuffer.allocateDirect(n)), memory, 0);
      ByteBuffer heapDst = ByteBuffer.allocate(n);
      device.copyDeviceToHost(s, memory, 0, heapDst);
      waitFor(device, s);
      assertPattern(heapDst, n);

      // Pinned source, pageable direct destination.
      device.fill(s, memory, 0, n, 1, 0);
      Buffer pinnedIn = device.pinnedBuffer(n);
      pinnedIn.appendBytes(patterned(ByteBuffer.allocate(n)).array());
      assertTrue(PinnedMemory.isPinned(pinnedIn));
      ByteBuffer src = VertxInternals.byteBuf(pinnedIn).nioBuffer();
      assertTrue(src.isDirect());
      device.copyHostToDevice(s, src, memory, 0);
      ByteBuffer directDst = ByteBuffer.allocateDirect(n);
      device.copyDeviceToHost(s, memory, 0, directDst);
      waitFor(device, s);
      assertPattern(directDst, n);

      assertTrue(PinnedMemory.release(pinnedIn));
      assertTrue(PinnedMemory.release(pinnedOut));
      device.release(memory);
      assertTrue(device.cachedBytes() >= n);
    } finally {
      device.close(false);
    }
  }

  private static void waitFor(CudaContext device, GpuStream s) throws Exception {
    GpuEvent e = device.record(s);
    device.whenComplete(e).get(30, TimeUnit.SECONDS);
    e.release();
  }

  @Test
  void eightByteFillsPlaceLowAndHighWords() throws Exception {
    CudaContext device = (CudaContext) CudaBackend.load(CUDA).open(0);
    try {
      GpuStream s = device.createStream("fill");
      DeviceMemory memory = device.allocate(8 * 1000);
      device.fill(s, memory, 8, 998, 8, 0x0123456789ABCDEFL);
      ByteBuffer out = ByteBuffer.allocateDirect(8 * 1000).order(ByteOrder.LITTLE_ENDIAN);
      device.fill(s, memory, 0, 1, 8, 0);
      device.fill(s, memory, 8 * 999, 1, 8, -1L);
      device.copyDeviceToHost(s, memory, 0, out);
      waitFor(device, s);
      assertEquals(0L, out.getLong(0));
      for (int i = 1; i < 999; i++) {
        assertEquals(0x0123456789ABCDEFL, out.getLong(i * 8), "element " + i);
      }
      assertEquals(-1L, out.getLong(999 * 8));
      device.release(memory);
    } finally {
      device.close(false);
    }
  }

  @Test
  void tooLargeAllocationAnswersOutOfMemoryAndServiceContinues(Vertx vertx, VertxTestContext ctx) {
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions(CUDA).setIsolation(TestDevices.isolation()))).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      return c.alloc(DType.U8, 64 << 20).compose(c::free)
        .compose(x -> c.describe())
        .compose(info -> c.alloc(DType.U8, info.getTotalMemory() * 2).transform(ar -> {
          assertTrue(ar.failed(), "an allocation of twice the device's memory succeeded");
          CudaException e = (CudaException) ar.cause();
          assertEquals(FailureCode.OUT_OF_MEMORY, e.code(), e.getMessage());
          return c.alloc(DType.F32, 3);
        }))
        .compose(h -> c.upload(h, floats(1, 2, 3)).compose(x -> c.download(h)))
        .map(b -> {
          assertEquals(floats(1, 2, 3), b);
          return null;
        });
    }).onComplete(ctx.succeedingThenComplete());
  }

  @Test
  @Timeout(value = 5, timeUnit = TimeUnit.MINUTES)
  void oneGibUploadDownloadReturnsEqualBytes(Vertx vertx, VertxTestContext ctx) {
    int n = 1 << 30;
    ByteBuffer data = patterned(ByteBuffer.allocate(n));
    Buffer up = VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(data));
    vertx.deployVerticle(new DeviceVerticle(new DeviceOptions(CUDA).setIsolation(TestDevices.isolation()))).compose(id -> {
      DeviceClient c = DeviceClient.create(vertx);
      return c.alloc(DType.U8, n).compose(h -> c.upload(h, up).compose(x -> c.download(h)).map(down -> {
        assertEquals(n, down.length());
        ByteBuffer got = VertxInternals.byteBuf(down).nioBuffer(0, n);
        assertEquals(-1, data.duplicate().clear().mismatch(got), "first differing byte");
        PinnedMemory.release(down);
        return h;
      })).compose(c::free);
    }).onComplete(ctx.succeedingThenComplete());
  }

  private static Buffer floats(float... values) {
    Buffer b = Buffer.buffer(values.length * 4);
    for (float v : values) {
      b.appendFloatLE(v);
    }
    return b;
  }
}
