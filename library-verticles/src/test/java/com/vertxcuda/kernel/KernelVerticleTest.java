package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.codec.impl.KernelWireTypes;
import com.vertxcuda.library.HostDeviceTest;
import com.vertxcuda.rand.RngType;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** The built-in kernels on every backend, the host's answer to user code, and bad requests. */
class KernelVerticleTest extends HostDeviceTest {

  private KernelClient kernels;

  @BeforeEach
  void client() {
    kernels = KernelClient.create(vertx);
  }

  @Test
  void fillScaleAddOnF32AndViews() {
    BufferHandle x = f32(1, 2, 3, 4, 5, 6);
    BufferHandle y = f32(10, 20, 30, 40, 50, 60);
    BufferHandle out = f32(0, 0, 0, 0, 0, 0);
    await(kernels.scale(x, 2.5, out));
    assertArrayEquals(new float[] {2.5f, 5f, 7.5f, 10f, 12.5f, 15f}, readF32(out));
    await(kernels.add(x.view(2, 3), y.view(0, 3), out.view(1, 3)));
    assertArrayEquals(new float[] {2.5f, 13f, 24f, 35f, 12.5f, 15f}, readF32(out));
    await(kernels.fill(out.view(4, 2), -1.25));
    assertArrayEquals(new float[] {2.5f, 13f, 24f, 35f, -1.25f, -1.25f}, readF32(out));
    // In place.
    await(kernels.add(y, y, y));
    assertArrayEquals(new float[] {20, 40, 60, 80, 100, 120}, readF32(y));
  }

  @Test
  void f64Arithmetic() {
    BufferHandle x = f64(0.1, 0.2, 1e300);
    BufferHandle out = f64(0, 0, 0);
    await(kernels.scale(x, 3, out));
    assertArrayEquals(new double[] {0.1 * 3, 0.2 * 3, 3e300}, readF64(out));
    await(kernels.add(x, out, out));
    assertArrayEquals(new double[] {0.1 + 0.1 * 3, 0.2 + 0.2 * 3, 4e300}, readF64(out));
  }

  @Test
  void multiplyTakesRealAndComplexProducts() {
    BufferHandle x = f32(1.5f, -2, 3);
    BufferHandle y = f32(2, 4, -0.5f);
    BufferHandle out = f32(0, 0, 0);
    await(kernels.multiply(x, y, out));
    assertArrayEquals(new float[] {3, -8, -1.5f}, readF32(out));
    assertArrayEquals(new double[] {0.5 * 4, 1e300 * 1e-300}, readF64(await(kernels.multiply(f64(0.5, 1e300),
      f64(4, 1e-300), f64(0, 0)))));
    // (1 + 2i)(3 - i) = 5 + 5i, (-2 + 0.5i)(4i) = -2 - 8i; in place, over x.
    BufferHandle c = complex(DType.C64, 1, 2, -2, 0.5);
    await(kernels.multiply(c, complex(DType.C64, 3, -1, 0, 4), c));
    assertArrayEquals(new float[] {5, 5, -2, -8}, readF32(c));
    BufferHandle z = complex(DType.C128, 0.5, 0.25, 1, -1);
    BufferHandle zz = complex(DType.C128, 0, 0, 0, 0);
    await(kernels.multiply(z, z, zz));
    // (0.5 + 0.25i)^2 = 0.1875 + 0.25i, (1 - i)^2 = -2i (exact, whether or not the device fuses the products).
    assertArrayEquals(new double[] {0.1875, 0.25, 0, -2}, readF64(zz));
    assertBadRequest(kernels.multiply(c, f32(1, 2), c), "y");
    assertBadRequest(kernels.multiply(x, y, complex(DType.C64, 0, 0, 0, 0, 0, 0)), "output");
  }

  // A complex buffer of (real, imaginary) pairs.
  private BufferHandle complex(DType dtype, double... parts) {
    BufferHandle h = await(device.alloc(dtype, parts.length / 2));
    io.vertx.core.buffer.Buffer b = io.vertx.core.buffer.Buffer.buffer();
    for (double v : parts) {
      if (dtype == DType.C64) {
        b.appendFloatLE((float) v);
      } else {
        b.appendDoubleLE(v);
      }
    }
    return await(device.upload(h, b));
  }

  @Test
  void conversionsRoundToNearestEven() {
    float[] values = {1f, -2.5f, 65504f, 1e-8f, 3.14159265f, 1.0009765625f, 70000f};
    BufferHandle x = f32(values);
    BufferHandle half = await(device.alloc(DType.F16, values.length));
    BufferHandle bf = await(device.alloc(DType.BF16, values.length));
    BufferHandle back = await(device.alloc(DType.F32, values.length));
    await(kernels.convert(x, half));
    await(kernels.convert(half, bf));
    await(kernels.convert(x, bf));
    Buffer hb = await(device.download(half));
    Buffer bb = await(device.download(bf));
    for (int i = 0; i < values.length; i++) {
      assertEquals(DType.F16.round(values[i]), hb.getShortLE(i * 2) & 0xFFFF, "f16 of " + values[i]);
      assertEquals(DType.BF16.round(values[i]), bb.getShortLE(i * 2) & 0xFFFF, "bf16 of " + values[i]);
    }
    await(kernels.convert(half, back));
    float[] widened = readF32(back);
    assertEquals(65504f, widened[2]);
    assertEquals(Float.POSITIVE_INFINITY, widened[6]);
    assertEquals(3.140625f, widened[4]);
  }

  @Test
  void builtinsOrderAfterOtherLibraries() {
    // RAND writes on its stream, the kernel verticle scales on its own, download on the copy stream.
    BufferHandle x = await(device.alloc(DType.F32, 4096));
    BufferHandle out = await(device.alloc(DType.F32, 4096));
    var generated = rand.uniform(RngType.PHILOX4_32_10, 42, x);
    var scaled = kernels.scale(x, 2, out);
    float[] twice = readF32(await(scaled.compose(h -> kernels.scale(out, 0.5, out))));
    await(generated);
    assertArrayEquals(readF32(x), twice);
    for (float v : twice) {
      assertTrue(v > 0 && v <= 1, "uniform in (0, 1]: " + v);
    }
  }

  @Test
  void hostAnswersUserCodeWithUnsupported() {
    assumeTrue(TestDevices.backend() == com.vertxcuda.device.BackendKind.HOST);
    CudaException e = failure(kernels.loadPtx(".version 7.0\n.target sm_80\n.address_size 64\n"));
    assertEquals(FailureCode.UNSUPPORTED, e.code());
    assertTrue(e.getMessage().contains("built-in kernels"), e.getMessage());
    e = failure(kernels.compile("extern \"C\" __global__ void k() {}", null, List.of()));
    assertEquals(FailureCode.UNSUPPORTED, e.code());
    e = failure(kernels.execute(new KernelRequest(KernelOp.LOAD_IMAGE).setImage(Buffer.buffer(new byte[] {1}))));
    assertEquals(FailureCode.UNSUPPORTED, e.code());
    // And the device still serves.
    assertArrayEquals(new float[] {7, 7}, readF32(await(kernels.fill(f32(0, 0), 7))));
  }

  @Test
  void badRequestsNameTheField() {
    BufferHandle x = f32(1, 2, 3);
    BufferHandle i32 = await(device.alloc(DType.I32, 3));
    BufferHandle two = f32(1, 2);
    assertBadRequest(kernels.fill(i32, 1), "output");
    assertBadRequest(kernels.scale(x, 2, two), "output");
    assertBadRequest(kernels.add(x, f64(1, 2, 3), f32(0, 0, 0)), "y");
    assertBadRequest(kernels.add(x.view(0, 2), x.view(1, 2), x.view(0, 2)), "output overlaps y");
    assertBadRequest(kernels.convert(x, f32(0, 0)), "output");
    assertBadRequest(kernels.convert(i32, x), "x");
    assertBadRequest(kernels.execute(new KernelRequest()), "op");
    assertBadRequest(kernels.execute(new KernelRequest(KernelOp.LOAD_PTX)), "ptx");
    assertBadRequest(kernels.execute(new KernelRequest(KernelOp.COMPILE)), "source");
    ModuleHandle forged = ModuleHandle.issue(x.node(), 0, x.generation(), 99);
    // Launch shapes and arguments are checked before the module is looked up.
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {2048, 1, 1}, 0), "block[0]");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {64, 64, 1}, 0), "4096 threads");
    assertBadRequest(kernels.launch(forged, "k", new int[] {0, 1, 1}, new int[] {1, 1, 1}, 0), "grid[0]");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 1 << 20),
      "sharedMemoryBytes");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1}, new int[] {1, 1, 1}, 0), "grid must have 3");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
      new KernelArg().setBuffer(x).setAccess(Access.READ).setDtype(DType.F32)), "args[0] must be either");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
      new KernelArg().setBuffer(x)), "args[0].access");
    assertBadRequest(kernels.launch(forged, "k", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
      new KernelArg().setDtype(DType.U8).setBits(0x1FF)), "args[0].bits");
    assertEquals(FailureCode.NOT_FOUND, failure(kernels.launch(forged, "k", new int[] {1, 1, 1},
      new int[] {1, 1, 1}, 0)).code());
    ModuleHandle stale = ModuleHandle.issue(x.node(), 0, x.generation() + 1, 1);
    assertEquals(FailureCode.STALE_HANDLE, failure(kernels.unload(stale)).code());
  }

  @Test
  void scalarsAreRangeCheckedLikeFills() {
    // Client side: the same rule as a fill (DType.encode), naming the dtype's range.
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> KernelArg.scalar(DType.I64, 1e30));
    assertTrue(e.getMessage().contains("[-9223372036854775808, 9223372036854775807]"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> KernelArg.scalar(DType.U64, -1.0));
    assertTrue(e.getMessage().contains("[0, 18446744073709551615]"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> KernelArg.scalar(DType.I32, Double.NaN));
    assertTrue(e.getMessage().contains("not NaN"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> KernelArg.integer(DType.U64, -1L));
    assertEquals(Long.MAX_VALUE, KernelArg.integer(DType.U64, Long.MAX_VALUE).getBits());
    // Device side: the built-ins' scalar must fit the output's dtype; nothing is written.
    BufferHandle out = f32(1, 2);
    assertBadRequest(kernels.fill(out, 1e39), "[-3.4028235E38, 3.4028235E38]");
    assertBadRequest(kernels.scale(out, -1e39, out), "scalar");
    assertArrayEquals(new float[] {1, 2}, readF32(out));
    await(kernels.fill(out, Float.MAX_VALUE));
    assertArrayEquals(new float[] {Float.MAX_VALUE, Float.MAX_VALUE}, readF32(out));
    await(kernels.fill(f64(0), 1e300));
  }

  @Test
  void kernelMessagesCrossTheWire() {
    WireType<KernelRequest> type = KernelWireTypes.KERNEL_REQUEST;
    assertTrue(CudaCodecs.wireTypes().contains(type));
    BufferHandle x = f32(1);
    KernelRequest r = new KernelRequest(KernelOp.LAUNCH).setModule(ModuleHandle.issue("n", 0, 3, 4))
      .setFunction("saxpy").setGrid(List.of(4, 1, 1)).setBlock(List.of(128, 1, 1)).setSharedMemoryBytes(64)
      .setArgs(List.of(KernelArg.in(x), KernelArg.out(x.view(0, 1)), KernelArg.scalar(DType.F32, 2.5),
        KernelArg.integer(DType.U64, Long.MAX_VALUE)))
      .setCompileOptions(List.of("-DN=4"));
    Buffer wire = Buffer.buffer();
    CudaCodecs.codec(type).encodeToWire(wire, r);
    KernelRequest back = CudaCodecs.codec(type).decodeFromWire(0, wire);
    assertEquals(r.toJson(), back.toJson());
  }
}
