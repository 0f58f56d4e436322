package com.vertxcuda.library.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.kernel.Access;
import com.vertxcuda.kernel.KernelArg;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.library.impl.Operand;
import com.vertxcuda.library.impl.RequestChecks;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;

import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * A validated kernel request: every handle resolved, every shape and dimension checked before
 * anything is queued. BAD_REQUEST names the offending field.
 */
public final class KernelCall {

  static final int MAX_ARGS = 64;
  static final int MAX_THREADS_PER_BLOCK = 1024;
  static final int MAX_SHARED_BYTES = 48 * 1024;

  /** One resolved launch argument: a buffer operand or a scalar. */
  public static final class Arg {
    public final Operand buffer;
    public final Access access;
    public final DType dtype;
    public final long bits;

    Arg(Operand buffer, Access access, DType dtype, long bits) {
      this.buffer = buffer;
      this.access = access;
      this.dtype = dtype;
      this.bits = bits;
    }
  }

  public final KernelOp op;
  public final Operand x;
  public final Operand y;
  public final Operand output;
  public final double scalar;
  public final int[] grid;
  public final int[] block;
  public final int sharedBytes;
  public final List<Arg> args;

  private KernelCall(KernelOp op, Operand x, Operand y, Operand output, double scalar, int[] grid, int[] block,
                     int sharedBytes, List<Arg> args) {
    this.op = op;
    this.x = x;
    this.y = y;
    this.output = output;
    this.scalar = scalar;
    this.grid = grid;
    this.block = block;
    this.sharedBytes = sharedBytes;
    this.args = args;
  }

  /** Buffers the call reads. */
  List<DeviceBuffer> reads() {
    List<DeviceBuffer> r = new ArrayList<>();
    if (x != null) {
      r.add(x.buffer());
    }
    if (y != null) {
      r.add(y.buffer());
    }
    for (Arg a : args) {
      if (a.buffer != null && a.access != Access.WRITE) {
        r.add(a.buffer.buffer());
      }
    }
    return r;
  }

  /** Buffers the call writes. */
  List<DeviceBuffer> writes() {
    List<DeviceBuffer> w = new ArrayList<>();
    if (output != null) {
      w.add(output.buffer());
    }
    for (Arg a : args) {
      if (a.buffer != null && a.access != Access.READ) {
        w.add(a.buffer.buffer());
      }
    }
    return w;
  }

  /** A built-in elementwise call (FILL, SCALE, ADD, CONVERT, MULTIPLY). */
  static KernelCall builtin(KernelRequest r, LibraryContext table) {
    KernelOp op = r.getOp();
    Operand out;
    Operand x = null;
    Operand y = null;
    switch (op) {
      case FILL:
        out = whole(table, r.getOutput(), "output", DType.F32, DType.F64);
        DType filled = out.dtype();
        scalar(() -> filled.encode(r.getScalar()), "scalar");
        break;
      case SCALE:
      case ADD:
        x = whole(table, r.getX(), "x", DType.F32, DType.F64);
        if (op == KernelOp.ADD) {
          y = whole(table, r.getY(), "y", DType.F32, DType.F64);
          sameShape(x, y, "y");
        }
        out = whole(table, r.getOutput(), "output", DType.F32, DType.F64);
        if (op == KernelOp.SCALE) {
          DType scaled = out.dtype();
          scalar(() -> scaled.encode(r.getScalar()), "scalar");
        }
        sameShape(x, out, "output");
        sameOrApart(x, out, "x");
        if (y != null) {
          sameOrApart(y, out, "y");
        }
        break;
      case MULTIPLY:
        x = whole(table, r.getX(), "x", DType.F32, DType.F64, DType.C64, DType.C128);
        y = whole(table, r.getY(), "y", DType.F32, DType.F64, DType.C64, DType.C128);
        out = whole(table, r.getOutput(), "output", DType.F32, DType.F64, DType.C64, DType.C128);
        sameShape(x, y, "y");
        sameShape(x, out, "output");
        sameOrApart(x, out, "x");
        sameOrApart(y, out, "y");
        break;
      case CONVERT:
        x = whole(table, r.getX(), "x", DType.F32, DType.F16, DType.BF16);
        out = whole(table, r.getOutput(), "output", DType.F32, DType.F16, DType.BF16);
        require(x.handle().length() == out.handle().length(), "output has " + out.handle().length()
          + " elements; x has " + x.handle().length());
        require(!x.overlaps(out), "output overlaps x");
        break;
      default:
        throw new IllegalArgumentException(op + " is not a built-in");
    }
    return new KernelCall(op, x, y, out, r.getScalar(), null, null, 0, List.of());
  }

  /** A launch of a user kernel: dimensions and arguments checked, buffers resolved. */
  static KernelCall launch(KernelRequest r, LibraryContext table) {
    require(r.getFunction() != null && !r.getFunction().isEmpty(), "function is missing");
    int[] grid = dims(r.getGrid(), "grid", new long[] {Integer.MAX_VALUE, 65535, 65535});
    int[] block = dims(r.getBlock(), "block", new long[] {1024, 1024, 64});
    long threads = (long) block[0] * block[1] * block[2];
    require(threads <= MAX_THREADS_PER_BLOCK, () -> "block has " + threads + " threads; at most " + MAX_THREADS_PER_BLOCK);
    require(r.getSharedMemoryBytes() >= 0 && r.getSharedMemoryBytes() <= MAX_SHARED_BYTES,
      () -> "sharedMemoryBytes must be 0.." + MAX_SHARED_BYTES + ", got " + r.getSharedMemoryBytes());
    List<KernelArg> given = r.getArgs() == null ? List.of() : r.getArgs();
    require(given.size() <= MAX_ARGS, () -> "args has " + given.size() + " entries; at most " + MAX_ARGS);
    List<Arg> args = new ArrayList<>();
    for (int i = 0; i < given.size(); i++) {
      KernelArg a = given.get(i);
      String field = "args[" + i + "]";
      require(a != null, () -> field + " is missing");
      require((a.getBuffer() == null) != (a.getDtype() == null), () -> field + " must be either a buffer or a scalar");
      if (a.getBuffer() != null) {
        require(a.getAccess() != null, () -> field + ".access is missing");
        DeviceBuffer al = table.resolve(a.getBuffer(), field);
        args.add(new Arg(new Operand(al, a.getBuffer(), a.getBuffer().length()), a.getAccess(), null, 0));
      } else {
        scalar(() -> a.getDtype().checkBits(a.getBits()), field + ".bits");
        args.add(new Arg(null, null, a.getDtype(), a.getBits()));
      }
    }
    return new KernelCall(KernelOp.LAUNCH, null, null, null, 0, grid, block, r.getSharedMemoryBytes(), args);
  }

  // A scalar is checked where every value is: DType decides what a dtype takes.
  private static void scalar(LongSupplier check, String field) {
    try {
      check.getAsLong();
    } catch (IllegalArgumentException e) {
      throw RequestChecks.bad(field + ": " + e.getMessage());
    }
  }

  private static int[] dims(List<Integer> d, String field, long[] max) {
    require(d != null && d.size() == 3, () -> field + " must have 3 dimensions (x, y, z)");
    int[] out = new int[3];
    for (int i = 0; i < 3; i++) {
      Integer v = d.get(i);
      int at = i;
      require(v != null && v >= 1 && v <= max[at], () -> field + "[" + at + "] must be 1.." + max[at] + ", got " + v);
      out[i] = v;
    }
    return out;
  }

  private static Operand whole(LibraryContext table, BufferHandle h, String field, DType... dtypes) {
    DeviceBuffer a = table.resolve(h, field, dtypes);
    return new Operand(a, h, h.length());
  }

  private static void sameShape(Operand a, Operand b, String field) {
    require(a.dtype() == b.dtype(), () -> field + " is " + b.dtype() + "; x is " + a.dtype());
    require(a.handle().length() == b.handle().length(), () -> field + " has " + b.handle().length()
      + " elements; x has " + a.handle().length());
  }

  // Elementwise work may run in place, but not on ranges that overlap in part.
  private static void sameOrApart(Operand in, Operand out, String field) {
    boolean same = in.buffer() == out.buffer() && in.handle().offset() == out.handle().offset();
    require(same || !in.overlaps(out), () -> "output overlaps " + field + " in part");
  }
}
