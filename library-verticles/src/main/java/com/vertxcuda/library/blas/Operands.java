package com.vertxcuda.library.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.Operand;
import com.vertxcuda.library.impl.RequestChecks;

import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToIntFunction;
import java.util.function.ToLongFunction;

import static com.vertxcuda.library.impl.RequestChecks.noOverlap;
import static com.vertxcuda.library.impl.RequestChecks.nonNegative;
import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * The operand recipe of one BLAS routine, written once for all of them: a routine declares each
 * buffer operand once, with its {@link Slot}, whether it is read or written, and its {@link Shape};
 * {@link #call()} then runs the same checks in the same order for every routine and builds the
 * {@link BlasCall}.
 *
 * <p>The checks, in order: every handle resolves (declaration order, each against the recipe's
 * dtypes or its own), every operand without dtypes of its own has the reference operand's dtype
 * (the first declared, or the one {@link #like} names), the routine's own checks on the resolved
 * operands ({@link #call(Runnable)}), every shape fits its buffer (declaration order), and no
 * written operand overlaps another operand. A failure is BAD_REQUEST and names the field.
 *
 * <p>A written operand may also be read (GEMM's C, TRSM's B, SWAP's vectors): its footprint is
 * exclusive either way, so reading it too needs no role of its own.
 */
final class Operands {

  /** A buffer field of {@link BlasRequest}, with the fields that lay it out in its buffer. */
  enum Slot {
    A("a", BlasRequest::getA, "lda", BlasRequest::getLda, "strideA", BlasRequest::getStrideA),
    B("b", BlasRequest::getB, "ldb", BlasRequest::getLdb, "strideB", BlasRequest::getStrideB),
    C("c", BlasRequest::getC, "ldc", BlasRequest::getLdc, "strideC", BlasRequest::getStrideC),
    X("x", BlasRequest::getX, "incx", BlasRequest::getIncx, null, null),
    Y("y", BlasRequest::getY, "incy", BlasRequest::getIncy, null, null);

    final String field;
    private final Function<BlasRequest, BufferHandle> handle;
    /** The leading dimension of a matrix, the increment of a vector. */
    final String stepField;
    private final ToIntFunction<BlasRequest> step;
    /** The elements between the matrices of a strided batch; null where the request has none. */
    final String strideField;
    private final ToLongFunction<BlasRequest> stride;

    Slot(String field, Function<BlasRequest, BufferHandle> handle, String stepField, ToIntFunction<BlasRequest> step,
         String strideField, ToLongFunction<BlasRequest> stride) {
      this.field = field;
      this.handle = handle;
      this.stepField = stepField;
      this.step = step;
      this.strideField = strideField;
      this.stride = stride;
    }
  }

  /** How an operand lies in its buffer: checks the layout and returns the elements it touches. */
  @FunctionalInterface
  interface Shape {
    long extent(BlasRequest r, Slot slot, BufferHandle h, boolean written);
  }

  /** A column-major {@code rows x cols} matrix (as stored) with the slot's leading dimension. */
  static Shape matrix(int rows, int cols) {
    return (r, s, h, written) -> RequestChecks.matrix(h, s.field, rows, cols, s.step.applyAsInt(r), s.stepField);
  }

  /** {@code n} elements with the slot's increment. */
  static Shape vector(int n) {
    return (r, s, h, written) -> RequestChecks.vector(h, s.field, n, s.step.applyAsInt(r), s.stepField);
  }

  /**
   * {@code batchCount} matrices of {@code rows x cols}, the slot's stride apart. The batch writes its
   * matrices concurrently, so a written batch must not overlap itself either.
   */
  static Shape stridedMatrices(int rows, int cols) {
    return (r, s, h, written) -> {
      int batch = nonNegative(r.getBatchCount(), "batchCount");
      int ld = s.step.applyAsInt(r);
      long stride = s.stride.applyAsLong(r);
      long extent = RequestChecks.stridedMatrices(h, s.field, rows, cols, ld, s.stepField, stride, s.strideField,
        batch);
      require(!written || batch <= 1 || stride >= (long) ld * Math.max(cols - 1, 0) + rows,
        () -> s.strideField + " " + stride + " makes the " + batch + " " + s.name() + " matrices overlap");
      return extent;
    };
  }

  /** A routine declares each slot at most once. */
  private static final int SLOTS = Slot.values().length;
  private static final Runnable NO_CHECKS = () -> { };

  private final BlasRequest request;
  private final LibraryContext table;
  private final DType[] dtypes;
  private final Slot[] slots = new Slot[SLOTS];
  private final Shape[] shapes = new Shape[SLOTS];
  private final boolean[] written = new boolean[SLOTS];
  /** The operand's own accepted dtypes; null where it must have the reference's dtype. */
  private final DType[][] own = new DType[SLOTS][];
  /** Whether a written operand may be this (read) operand element for element. */
  private final boolean[] inPlace = new boolean[SLOTS];
  private int count;
  private int reference;

  private Operands(BlasRequest request, LibraryContext table, DType[] dtypes) {
    this.request = request;
    this.table = table;
    this.dtypes = dtypes;
  }

  /** A recipe for {@code r} whose operands are of one of {@code dtypes}, all the same one. */
  static Operands of(BlasRequest r, LibraryContext table, DType... dtypes) {
    return new Operands(r, table, dtypes);
  }

  Operands read(Slot slot, Shape shape) {
    return add(slot, shape, false, null, false);
  }

  /**
   * A read operand that the written one may also be, when {@code allowed} and the two views start at
   * the same element of one buffer (cuBLAS GEAM computes in place then); otherwise as {@link #read}.
   */
  Operands readOrInPlace(Slot slot, Shape shape, boolean allowed) {
    return add(slot, shape, false, null, allowed);
  }

  Operands written(Slot slot, Shape shape) {
    return add(slot, shape, true, null, false);
  }

  /** A written operand of one of {@code dtypes}, whatever the reference's dtype (GEMM_EX's F32 output). */
  Operands written(Slot slot, Shape shape, DType... dtypes) {
    return add(slot, shape, true, dtypes, false);
  }

  /** Makes {@code slot} (declared before) the operand whose dtype the others must have. */
  Operands like(Slot slot) {
    reference = Arrays.asList(slots).indexOf(slot);
    return this;
  }

  private Operands add(Slot slot, Shape shape, boolean isWritten, DType[] ownDtypes, boolean inPlaceAllowed) {
    slots[count] = slot;
    shapes[count] = shape;
    written[count] = isWritten;
    own[count] = ownDtypes;
    inPlace[count] = inPlaceAllowed;
    count++;
    return this;
  }

  BlasCall call() {
    return call(NO_CHECKS);
  }

  /** Runs the checks, with the routine's {@code checks} after the handles and dtypes and before the shapes. */
  BlasCall call(Runnable checks) {
    BufferHandle[] handles = new BufferHandle[count];
    DeviceBuffer[] buffers = new DeviceBuffer[count];
    for (int i = 0; i < count; i++) {
      handles[i] = slots[i].handle.apply(request);
      buffers[i] = table.resolve(handles[i], slots[i].field, own[i] == null ? dtypes : own[i]);
    }
    DType t = handles[reference].dtype();
    for (int i = 0; i < count; i++) {
      if (i != reference && own[i] == null) {
        DType found = handles[i].dtype();
        String field = slots[i].field;
        String ref = slots[reference].field;
        require(found == t, () -> field + " has dtype " + found + " but " + ref + " is " + t);
      }
    }
    checks.run();
    Operand[] operands = new Operand[count];
    for (int i = 0; i < count; i++) {
      operands[i] = new Operand(buffers[i], handles[i], shapes[i].extent(request, slots[i], handles[i], written[i]));
    }
    // Each pair once, the written one named first (the later one where both are written).
    for (int j = 1; j < count; j++) {
      for (int i = 0; i < j; i++) {
        int w = written[j] ? j : i;
        int o = w == j ? i : j;
        if (written[w] && !sameView(operands[w], operands[o], inPlace[w] || inPlace[o])) {
          noOverlap(operands[w], slots[w].field, operands[o], slots[o].field);
        }
      }
    }
    return build(operands, t);
  }

  private static boolean sameView(Operand w, Operand o, boolean allowed) {
    return allowed && w.buffer() == o.buffer() && w.handle().offset() == o.handle().offset();
  }

  private BlasCall build(Operand[] operands, DType referenceDtype) {
    Operand[] bySlot = new Operand[SLOTS];
    int writes = 0;
    for (int i = 0; i < count; i++) {
      bySlot[slots[i].ordinal()] = operands[i];
      writes += written[i] ? 1 : 0;
    }
    Operand[] read = new Operand[count - writes];
    Operand[] write = new Operand[writes];
    for (int i = 0, ri = 0, wi = 0; i < count; i++) {
      if (written[i]) {
        write[wi++] = operands[i];
      } else {
        read[ri++] = operands[i];
      }
    }
    // The reply names the one buffer written; a routine writing several (SWAP, ROT) names none.
    Operand output = writes == 1 ? write[0] : null;
    DType dtype = output == null ? referenceDtype : output.dtype();
    return new BlasCall(request, dtype, bySlot, List.of(read), List.of(write), output);
  }
}
