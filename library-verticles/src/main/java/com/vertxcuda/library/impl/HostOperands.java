package com.vertxcuda.library.impl;

import com.vertxcuda.DType;
import com.vertxcuda.device.host.HostAccess;

import java.nio.ByteBuffer;

/** Reads and writes the touched elements of an operand in host-backend memory, as doubles. */
public final class HostOperands {

  private HostOperands() {
  }

  /** The touched elements of an operand, widened to double (F16 and BF16 decoded exactly). */
  public static double[] read(Operand o) {
    int n = Math.toIntExact(o.extent());
    double[] out = new double[n];
    ByteBuffer b = HostAccess.bytes(o.memory(), o.byteOffset(), o.byteExtent());
    switch (o.dtype()) {
      case F64:
        b.asDoubleBuffer().get(out, 0, n);
        break;
      case F32:
        for (int i = 0; i < n; i++) {
          out[i] = b.getFloat(i * 4);
        }
        break;
      default:
        for (int i = 0; i < n; i++) {
          out[i] = o.dtype().decode(b.getShort(i * 2));
        }
    }
    return out;
  }

  /** Writes an operand's touched elements back, rounding once to F32 where it holds F32. */
  public static void write(Operand o, double[] v) {
    ByteBuffer b = HostAccess.bytes(o.memory(), o.byteOffset(), o.byteExtent());
    int n = Math.toIntExact(o.extent());
    if (o.dtype() == DType.F64) {
      b.asDoubleBuffer().put(v, 0, n);
    } else {
      for (int i = 0; i < n; i++) {
        b.putFloat(i * 4, (float) v[i]);
      }
    }
  }
}
