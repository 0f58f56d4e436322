package com.vertxcuda.library.impl;

import com.vertxcuda.DType;
import com.vertxcuda.device.host.HostAccess;

import java.nio.ByteBuffer;

/** Reads and writes the touched elements of an operand in host-backend memory, as doubles. */
public final class HostOperands {

  private HostOperands() {
  }

  /**
   * The touched elements of an operand, widened to double (F16 and BF16 decoded exactly); a complex
   * operand's elements as (real, imaginary) pairs.
   */
  public static double[] read(Operand o) {
    int n = values(o);
    double[] out = new double[n];
    ByteBuffer b = HostAccess.bytes(o.memory(), o.byteOffset(), o.byteExtent());
    switch (o.dtype()) {
      case F64:
      case C128:
        b.asDoubleBuffer().get(out, 0, n);
        break;
      case F32:
      case C64:
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

  // Doubles per operand: two per complex element.
  private static int values(Operand o) {
    return Math.toIntExact(o.dtype().isComplex() ? Math.multiplyExact(o.extent(), 2) : o.extent());
  }

  /**
   * Writes an operand's touched elements back (as {@link #read} gives them), rounding once to F32
   * where it holds F32 parts, to F16 or BF16 (nearest even) where it holds those.
   */
  public static void write(Operand o, double[] v) {
    ByteBuffer b = HostAccess.bytes(o.memory(), o.byteOffset(), o.byteExtent());
    int n = values(o);
    if (o.dtype().component() == DType.F64) {
      b.asDoubleBuffer().put(v, 0, n);
    } else if (o.dtype().size() == 2) {
      for (int i = 0; i < n; i++) {
        b.putShort(i * 2, (short) o.dtype().round(v[i]));
      }
    } else {
      for (int i = 0; i < n; i++) {
        b.putFloat(i * 4, (float) v[i]);
      }
    }
  }
}
