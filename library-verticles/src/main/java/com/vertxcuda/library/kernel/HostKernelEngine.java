package com.vertxcuda.library.kernel;

import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.host.HostAccess;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.HostResult;
import com.vertxcuda.library.impl.Operand;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * The built-in kernels in Java, run on the host backend's stream like a launch; user modules and
 * NVRTC need a GPU and answer UNSUPPORTED.
 */
final class HostKernelEngine implements KernelEngine {

  private static final String NO_GPU = "the host backend runs only the built-in kernels (fill, scale, add, "
    + "convert, multiply); user PTX, cubin and NVRTC need the cuda backend";

  private final DeviceContext device;

  HostKernelEngine(DeviceContext device) {
    this.device = device;
  }

  @Override
  public Object load(byte[] image) throws BackendException {
    throw BackendException.of(FailureCode.UNSUPPORTED, NO_GPU);
  }

  @Override
  public String compile(String source, String name, String arch, List<String> options, StringBuilder log)
    throws BackendException {
    throw BackendException.of(FailureCode.UNSUPPORTED, NO_GPU);
  }

  @Override
  public String deviceArch() {
    return "host";
  }

  @Override
  public void launch(GpuStream stream, Object module, String function, KernelCall call) throws BackendException {
    throw BackendException.of(FailureCode.UNSUPPORTED, NO_GPU);
  }

  @Override
  public void unload(Object module) throws BackendException {
    throw BackendException.of(FailureCode.UNSUPPORTED, NO_GPU);
  }

  @Override
  public EngineResult builtin(GpuStream stream, KernelCall call) throws BackendException {
    HostResult result = new HostResult();
    HostAccess.enqueue(device, stream, result.capture(() -> {
      run(call);
      return 0;
    }));
    return result;
  }

  private static void run(KernelCall call) {
    Operand out = call.output;
    int n = Math.toIntExact(out.handle().length());
    ByteBuffer o = bytes(out);
    ByteBuffer x = call.x == null ? null : bytes(call.x);
    ByteBuffer y = call.y == null ? null : bytes(call.y);
    DType t = out.dtype();
    if (t.isComplex()) {
      multiplyComplex(x, y, o, t, n); // the one built-in on complex elements
      return;
    }
    for (int i = 0; i < n; i++) {
      double v;
      switch (call.op) {
        case FILL:
          v = call.scalar;
          break;
        case SCALE:
          // An F32 kernel takes its factor as a float.
          v = (t == DType.F32 ? (float) call.scalar : call.scalar) * get(x, t, i);
          break;
        case ADD:
          v = get(x, t, i) + get(y, t, i);
          break;
        case MULTIPLY:
          v = get(x, t, i) * get(y, t, i);
          break;
        default:
          v = get(x, call.x.dtype(), i);
      }
      put(o, t, i, v);
    }
  }

  // (a + bi)(c + di) = (ac - bd) + (ad + bc)i, each part rounded once to the dtype; each pair is
  // read before it is written, so the output may be x or y.
  private static void multiplyComplex(ByteBuffer x, ByteBuffer y, ByteBuffer o, DType t, int n) {
    boolean d = t == DType.C128;
    int part = d ? 8 : 4;
    for (int i = 0; i < n; i++) {
      int re = 2 * i * part;
      int im = re + part;
      double a = d ? x.getDouble(re) : x.getFloat(re);
      double b = d ? x.getDouble(im) : x.getFloat(im);
      double c = d ? y.getDouble(re) : y.getFloat(re);
      double e = d ? y.getDouble(im) : y.getFloat(im);
      double real = a * c - b * e;
      double imag = a * e + b * c;
      if (d) {
        o.putDouble(re, real);
        o.putDouble(im, imag);
      } else {
        o.putFloat(re, (float) real);
        o.putFloat(im, (float) imag);
      }
    }
  }

  private static ByteBuffer bytes(Operand o) {
    return HostAccess.bytes(o.memory(), o.byteOffset(), o.byteExtent());
  }

  private static double get(ByteBuffer b, DType t, int i) {
    switch (t) {
      case F64: return b.getDouble(i * 8);
      case F32: return b.getFloat(i * 4);
      default: return t.decode(b.getShort(i * 2));
    }
  }

  // F32 arithmetic rounds once to F32, as the device's float kernels do.
  private static void put(ByteBuffer b, DType t, int i, double v) {
    switch (t) {
      case F64: b.putDouble(i * 8, v); break;
      case F32: b.putFloat(i * 4, (float) v); break;
      default: b.putShort(i * 2, (short) t.round((float) v));
    }
  }

  @Override
  public void close(boolean poisoned) {
    // nothing held
  }
}
