package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelClient;
import com.vertxcuda.DeviceStats;
import com.vertxcuda.rand.RngType;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Bad handles against every request type that takes a buffer — the device's own operations, BLAS,
 * FFT, RAND and kernels: a forged token, a freed buffer, another node's handle, the wrong dtype, a
 * count the buffer does not have. Each request gets one typed failure with the code its fault
 * calls for and a message naming it; the device's failure counters move by exactly the matrix's
 * size; no good buffer changes; everything serves afterwards. Both isolation modes.
 */
class BadInputMatrixTest extends HostDeviceTest {

  enum Bad { FORGED_TOKEN, FREED, OTHER_NODE, WRONG_DTYPE, COUNT_IT_DOES_NOT_HAVE }

  /** The device's own operations that move or set bytes of a buffer of any dtype. */
  private static final java.util.Set<String> ANY_DTYPE = java.util.Set.of("upload", "download", "fill", "free");

  private static FailureCode expected(Bad bad) {
    switch (bad) {
      case FORGED_TOKEN: return FailureCode.FORBIDDEN;
      case FREED: return FailureCode.NOT_FOUND;
      default: return FailureCode.BAD_REQUEST;
    }
  }

  private BufferHandle bad(Bad kind, BufferHandle real, BufferHandle freed, BufferHandle i32) {
    switch (kind) {
      case FORGED_TOKEN:
        return new BufferHandle(real.node(), real.device(), real.generation(), real.id(), real.dtype(), real.count(),
          real.tokenHigh() ^ 1, real.tokenLow(), 0, real.count());
      case FREED:
        return freed;
      case OTHER_NODE:
        return new BufferHandle("elsewhere", real.device(), real.generation(), real.id(), real.dtype(), real.count(),
          real.tokenHigh(), real.tokenLow(), 0, real.count());
      case WRONG_DTYPE:
        return i32;
      default:
        return new BufferHandle(real.node(), real.device(), real.generation(), real.id(), real.dtype(), 1 << 20,
          real.tokenHigh(), real.tokenLow(), 0, 1 << 20);
    }
  }

  @Test
  void everyRequestTypeRefusesEveryBadHandleAndNothingChanges() {
    KernelClient kernels = KernelClient.create(vertx);
    float[] sixteen = new float[16];
    for (int i = 0; i < 16; i++) {
      sixteen[i] = i + 1;
    }
    BufferHandle real = f32(sixteen);
    BufferHandle other = f32(sixteen);
    BufferHandle third = f32(sixteen);
    BufferHandle freed = f32(sixteen);
    await(device.free(freed));
    BufferHandle i32 = await(device.alloc(DType.I32, 16));
    Buffer bytes = Buffer.buffer();
    for (float v : sixteen) {
      bytes.appendFloatLE(v);
    }

    // Each operation uses the bad handle in one place and good ones elsewhere.
    Map<String, Function<BufferHandle, Future<?>>> ops = new LinkedHashMap<>();
    ops.put("upload", x -> device.upload(x, bytes));
    ops.put("download", x -> device.download(x));
    ops.put("copy from", x -> device.copy(x, other));
    ops.put("copy to", x -> device.copy(other, x));
    ops.put("fill", x -> device.fill(x, 3));
    ops.put("free", x -> device.free(x));
    ops.put("blas asum", x -> blas.asum(16, x, 1));
    ops.put("blas axpy y", x -> blas.axpy(16, 2, other, 1, x, 1));
    ops.put("blas scal", x -> blas.scal(16, 2, x, 1));
    ops.put("blas dot", x -> blas.dot(16, other, 1, x, 1));
    ops.put("blas gemm a", x -> blas.gemm(Transpose.N, Transpose.N, 4, 4, 4, 1, x, 4, other, 4, 0, third, 4));
    ops.put("blas gemm c", x -> blas.gemm(Transpose.N, Transpose.N, 4, 4, 4, 1, other, 4, third, 4, 0, x, 4));
    ops.put("fft input", x -> fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, x, other));
    ops.put("fft output", x -> fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, other, x));
    ops.put("rand uniform", x -> rand.uniform(RngType.PHILOX4_32_10, 7, x));
    ops.put("kernel fill", x -> kernels.fill(x, 3));
    ops.put("kernel scale", x -> kernels.scale(other, 2, x));
    ops.put("kernel add", x -> kernels.add(x, other, third));

    DeviceStats before = await(device.stats());
    int refused = 0;
    for (Bad kind : Bad.values()) {
      BufferHandle x = bad(kind, real, freed, i32);
      for (Map.Entry<String, Function<BufferHandle, Future<?>>> op : ops.entrySet()) {
        String what = op.getKey() + " with " + kind;
        if (kind == Bad.WRONG_DTYPE && ANY_DTYPE.contains(op.getKey())) {
          continue; // these take a buffer of any dtype: an I32 buffer is not wrong for them
        }
        Future<?> answer = op.getValue().apply(x);
        try {
          await(answer);
        } catch (CudaException e) {
          assertEquals(expected(kind), e.code(), what + ": " + e.getMessage());
          assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), what);
          refused++;
          continue;
        }
        fail(what + " was served");
      }
    }

    // Nothing changed: the good buffers hold what they held, and everything serves.
    assertArrayEquals(sixteen, readF32(real));
    assertArrayEquals(sixteen, readF32(other));
    assertArrayEquals(sixteen, readF32(third));
    assertEquals(136.0, await(blas.asum(16, real, 1)), 1e-6);
    assertArrayEquals(new float[] {2, 2}, readF32(await(kernels.fill(f32(0, 0), 2))));
    DeviceStats after = await(device.stats());
    long failedBefore = before.getFailuresByCode().values().stream().mapToLong(Long::longValue).sum();
    long failedAfter = after.getFailuresByCode().values().stream().mapToLong(Long::longValue).sum();
    assertTrue(failedAfter - failedBefore >= refused, "the device counted " + (failedAfter - failedBefore)
      + " failures for " + refused + " refused requests");
    System.out.printf("[figure] bad-input matrix: %d request types x %d bad handles, every one refused with its code%n",
      ops.size(), Bad.values().length);
  }
}
