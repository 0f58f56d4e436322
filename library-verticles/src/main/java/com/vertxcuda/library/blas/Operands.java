package com.vertxcuda.library.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.library.impl.Operand;
import com.vertxcuda.library.impl.RequestChecks;

import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.function.Function;
import java.util.function.ToLongFunction;
import java.util.stream.IntStream;

import static com.vertxcuda.library.impl.RequestChecks.bad;
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

  /**
   * A buffer field of {@link BlasRequest}, with the fields that lay it out in its buffer; a listed
   * slot (GEMM_BATCHED_EX's batchA, batchB, batchC) holds batchCount handles, each an operand of the
   * slot's shape.
   */
  enum Slot {
    A("a", null, "lda", "strideA", BlasRequest::getStrideA),
    B("b", null, "ldb", "strideB", BlasRequest::getStrideB),
    C("c", null, "ldc", "strideC", BlasRequest::getStrideC),
    X("x", null, "incx", null, null),
    Y("y", null, "incy", null, null),
    BATCH_A("batchA", BlasRequest::getBatchA, "lda", null, null),
    BATCH_B("batchB", BlasRequest::getBatchB, "ldb", null, null),
    BATCH_C("batchC", BlasRequest::getBatchC, "ldc", null, null);

    final String field;
    /** The handles of a listed slot; null for a slot of one handle. */
    private final Function<BlasRequest, List<BufferHandle>> list;
    /** The leading dimension of a matrix, the increment of a vector. */
    final String stepField;
    /** The elements between the matrices of a strided batch; null where the request has none. */
    final String strideField;
    private final ToLongFunction<BlasRequest> stride;

    Slot(String field, Function<BlasRequest, List<BufferHandle>> list, String stepField, String strideField,
         ToLongFunction<BlasRequest> stride) {
      this.field = field;
      this.list = list;
      this.stepField = stepField;
      this.strideField = strideField;
      this.stride = stride;
    }

    // The fields every request reads, by a switch, which the JIT inlines where a call through one of
    // several functions per slot is not.

    /** The slot's handle in {@code r}; a listed slot has none. */
    BufferHandle handle(BlasRequest r) {
      switch (this) {
        case A: return r.getA();
        case B: return r.getB();
        case C: return r.getC();
        case X: return r.getX();
        case Y: return r.getY();
        default: throw new IllegalStateException(this + " holds a list of handles");
      }
    }

    /** The slot's leading dimension (a matrix) or increment (a vector) in {@code r}. */
    int step(BlasRequest r) {
      switch (this) {
        case A: case BATCH_A: return r.getLda();
        case B: case BATCH_B: return r.getLdb();
        case C: case BATCH_C: return r.getLdc();
        case X: return r.getIncx();
        default: return r.getIncy();
      }
    }
  }

  /**
   * How an operand lies in its buffer: checks the layout and returns the elements it touches;
   * {@code field} names the operand (the slot's field, or a listed slot's member: "batchA[2]").
   */
  @FunctionalInterface
  interface Shape {
    long extent(BlasRequest r, Slot slot, String field, BufferHandle h, boolean written);
  }

  /** A column-major {@code rows x cols} matrix (as stored) with the slot's leading dimension. */
  static Shape matrix(int rows, int cols) {
    return (r, s, field, h, written) -> RequestChecks.matrix(h, field, rows, cols, s.step(r), s.stepField);
  }

  /** A packed {@code n x n} triangle: {@code n (n + 1) / 2} contiguous elements (the slot's step unused). */
  static Shape packed(int n) {
    return (r, s, field, h, written) -> RequestChecks.fits(h, field, (long) n * (n + 1) / 2,
      () -> "a packed " + n + "x" + n + " triangle");
  }

  /** {@code n} elements with the slot's increment. */
  static Shape vector(int n) {
    return (r, s, field, h, written) -> RequestChecks.vector(h, field, n, s.step(r), s.stepField);
  }

  /**
   * {@code batchCount} matrices of {@code rows x cols}, the slot's stride apart. The batch writes its
   * matrices concurrently, so a written batch must not overlap itself either.
   */
  static Shape stridedMatrices(int rows, int cols) {
    return (r, s, field, h, written) -> {
      int batch = nonNegative(r.getBatchCount(), "batchCount");
      int ld = s.step(r);
      long stride = s.stride.applyAsLong(r);
      long extent = RequestChecks.stridedMatrices(h, field, rows, cols, ld, s.stepField, stride, s.strideField,
        batch);
      require(!written || batch <= 1 || stride >= (long) ld * Math.max(cols - 1, 0) + rows,
        () -> s.strideField + " " + stride + " makes the " + batch + " " + s.name() + " matrices overlap");
      return extent;
    };
  }

  /** A routine declares each slot at most once. */
  private static final int SLOTS = Slot.values().length;
  private static final Runnable NO_CHECKS = () -> { };
  /** Entry e is declaration e, each the first of its own (no listed slot); read only. */
  private static final int[] IDENTITY = IntStream.range(0, SLOTS).toArray();
  private static final int[] NO_MEMBER = new int[SLOTS];
  /** Operands up to which every pair is compared; past it (a pointer-array batch) one sweep per buffer. */
  private static final int PAIRWISE = 8;
  /** A call's members by slot where no slot is listed (all null); read only. */
  private static final Operand[][] UNLISTED = new Operand[SLOTS][];

  /** The request and context a per-request recipe ({@link #of}) checks; null in a constant one ({@link #recipe}). */
  private final BlasRequest bound;
  private final LibraryContext boundTable;
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
    this.bound = request;
    this.boundTable = table;
    this.dtypes = dtypes;
  }

  /** A recipe for {@code r} whose operands are of one of {@code dtypes}, all the same one. */
  static Operands of(BlasRequest r, LibraryContext table, DType... dtypes) {
    return new Operands(r, table, dtypes);
  }

  /**
   * A recipe declared once, as a constant, for a routine whose shapes read their sizes from the
   * request itself (a GEMM, which coalesced batches bring in thousands): {@link #call(BlasRequest,
   * LibraryContext)} checks each request against it, and nothing of the recipe is made per request.
   * Its declarations do not change once it is made, so threads may share it.
   */
  static Operands recipe(DType... dtypes) {
    return new Operands(null, null, dtypes);
  }

  /** Runs a constant recipe's checks on {@code request} against {@code table}'s buffers. */
  BlasCall call(BlasRequest request, LibraryContext table) {
    return run(request, table, NO_CHECKS);
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
    return run(bound, boundTable, checks);
  }

  private BlasCall run(BlasRequest request, LibraryContext table, Runnable checks) {
    // A listed slot's members are operands of their own: entry e is member[e] of declaration decl[e].
    int total = 0;
    List<BufferHandle>[] lists = null;
    for (int i = 0; i < count; i++) {
      Slot s = slots[i];
      if (s.list == null) {
        total++;
        continue;
      }
      if (lists == null) {
        @SuppressWarnings("unchecked")
        List<BufferHandle>[] made = new List[count];
        lists = made;
      }
      int batch = nonNegative(request.getBatchCount(), "batchCount");
      List<BufferHandle> l = s.list.apply(request);
      require(l != null, () -> s.field + " is missing");
      require(l.size() == batch, () -> s.field + " has " + l.size() + " handles but batchCount is " + batch);
      lists[i] = l;
      total += batch;
    }
    // Without a listed slot every declaration is one entry (the common case, checked per request):
    // the shared identity tables stand in for the entry arrays.
    int[] decl = lists == null ? IDENTITY : new int[total];
    int[] member = lists == null ? NO_MEMBER : new int[total];
    int[] first = lists == null ? IDENTITY : new int[count];
    String[] fields = lists == null ? null : new String[total];
    BufferHandle[] handles = new BufferHandle[total];
    DeviceBuffer[] buffers = new DeviceBuffer[total];
    for (int i = 0, e = 0; i < count; i++) {
      boolean listed = lists != null && lists[i] != null;
      if (lists != null) {
        first[i] = e;
      }
      int members = listed ? lists[i].size() : 1;
      for (int j = 0; j < members; j++, e++) {
        if (lists != null) {
          decl[e] = i;
          member[e] = j;
          fields[e] = listed ? slots[i].field + "[" + j + "]" : slots[i].field;
        }
        handles[e] = listed ? lists[i].get(j) : slots[i].handle(request);
        buffers[e] = table.resolve(handles[e], field(fields, decl, e), own[i] == null ? dtypes : own[i]);
      }
    }
    // The reference's dtype binds every operand without dtypes of its own; an own-dtype list's
    // members share its first member's.
    int ref = first[reference];
    DType t = total > ref ? handles[ref].dtype() : null;
    for (int e = 0; e < total; e++) {
      int bound = own[decl[e]] == null ? ref : first[decl[e]];
      if (e != bound && bound < total && (own[decl[e]] == null || member[e] > 0)) {
        DType found = handles[e].dtype();
        DType want = handles[bound].dtype();
        if (found != want) {
          throw bad(field(fields, decl, e) + " has dtype " + found + " but " + field(fields, decl, bound) + " is " + want);
        }
      }
    }
    checks.run();
    Operand[] operands = new Operand[total];
    for (int e = 0; e < total; e++) {
      int i = decl[e];
      long extent = shapes[i].extent(request, slots[i], field(fields, decl, e), handles[e], written[i]);
      operands[e] = new Operand(buffers[e], handles[e], extent);
    }
    checkOverlaps(operands, fields, decl);
    return build(request, operands, decl, first, t);
  }

  /**
   * No written operand overlaps another: BAD_REQUEST names the written one first (the later one
   * where both are written). A few operands are compared pair by pair; a batch's thousands are
   * sorted by buffer and first element, where an operand overlaps an earlier one exactly when it
   * starts before the furthest end so far (of a written one, or of any one if it is written itself).
   */
  private void checkOverlaps(Operand[] operands, String[] fields, int[] decl) {
    int total = operands.length;
    if (total <= PAIRWISE) {
      for (int j = 1; j < total; j++) {
        for (int i = 0; i < j; i++) {
          int w = written[decl[j]] ? j : i;
          int o = w == j ? i : j;
          if (written[decl[w]] && !sameView(operands[w], operands[o], inPlace[decl[w]] || inPlace[decl[o]])) {
            noOverlap(operands[w], field(fields, decl, w), operands[o], field(fields, decl, o));
          }
        }
      }
      return;
    }
    IdentityHashMap<DeviceBuffer, Integer> groups = new IdentityHashMap<>();
    int[] group = new int[total];
    long[] start = new long[total];
    Integer[] order = new Integer[total];
    for (int e = 0; e < total; e++) {
      order[e] = e;
      Integer g = groups.putIfAbsent(operands[e].buffer(), groups.size());
      group[e] = g == null ? groups.size() - 1 : g;
      start[e] = operands[e].handle().offset();
    }
    Arrays.sort(order, (x, y) -> group[x] != group[y] ? Integer.compare(group[x], group[y])
      : start[x] != start[y] ? Long.compare(start[x], start[y]) : Integer.compare(x, y));
    int furthest = -1;
    int furthestWritten = -1;
    for (int k = 0; k < total; k++) {
      int e = order[k];
      Operand op = operands[e];
      if (op.extent() <= 0) {
        continue;
      }
      if (furthest >= 0 && operands[furthest].buffer() != op.buffer()) {
        furthest = -1;
        furthestWritten = -1;
      }
      if (written[decl[e]] && furthest >= 0) {
        noOverlap(op, field(fields, decl, e), operands[furthest], field(fields, decl, furthest));
      }
      if (furthestWritten >= 0) {
        noOverlap(operands[furthestWritten], field(fields, decl, furthestWritten), op, field(fields, decl, e));
      }
      if (furthest < 0 || end(op) > end(operands[furthest])) {
        furthest = e;
      }
      if (written[decl[e]] && (furthestWritten < 0 || end(op) > end(operands[furthestWritten]))) {
        furthestWritten = e;
      }
    }
  }

  private static long end(Operand o) {
    return o.handle().offset() + o.extent();
  }

  /** The field entry {@code e} names: its slot's, or a listed member's ("batchA[2]"). */
  private String field(String[] fields, int[] decl, int e) {
    return fields == null ? slots[decl[e]].field : fields[e];
  }

  private static boolean sameView(Operand w, Operand o, boolean allowed) {
    return allowed && w.buffer() == o.buffer() && w.handle().offset() == o.handle().offset();
  }

  /**
   * The {@code size} entries that are written (or read), in order: one or two (nearly every routine's
   * reads and writes) in a list of their own, with no array made between.
   */
  private List<Operand> part(Operand[] operands, int[] decl, int size, boolean writtenOnes) {
    Operand x = null;
    Operand y = null;
    Operand[] all = size > 2 ? new Operand[size] : null;
    for (int e = 0, k = 0; k < size; e++) {
      if (written[decl[e]] == writtenOnes) {
        if (all != null) {
          all[k] = operands[e];
        } else if (k == 0) {
          x = operands[e];
        } else {
          y = operands[e];
        }
        k++;
      }
    }
    return all != null ? List.of(all) : size == 2 ? List.of(x, y) : size == 1 ? List.of(x) : List.of();
  }

  private BlasCall build(BlasRequest request, Operand[] operands, int[] decl, int[] first, DType referenceDtype) {
    Operand[] bySlot = new Operand[SLOTS];
    Operand[][] members = decl == IDENTITY ? UNLISTED : new Operand[SLOTS][];
    int writes = 0;
    for (int i = 0; i < count; i++) {
      int end = i + 1 < count ? first[i + 1] : operands.length;
      Slot s = slots[i];
      bySlot[s.ordinal()] = first[i] < end ? operands[first[i]] : null;
      if (s.list != null) {
        members[s.ordinal()] = Arrays.copyOfRange(operands, first[i], end);
      }
    }
    for (int e = 0; e < operands.length; e++) {
      writes += written[decl[e]] ? 1 : 0;
    }
    // The reply names the one buffer written; a routine writing several (SWAP, ROT, a pointer-array
    // batch) names none.
    Operand output = null;
    for (int e = 0; e < operands.length && writes == 1; e++) {
      if (written[decl[e]] && slots[decl[e]].list == null) {
        output = operands[e];
      }
    }
    List<Operand> read = part(operands, decl, operands.length - writes, false);
    List<Operand> write = part(operands, decl, writes, true);
    DType dtype = output != null ? output.dtype() : writes > 0 && referenceDtype != null
      ? write.get(0).dtype() : referenceDtype;
    return new BlasCall(request, dtype, bySlot, members, read, write, output);
  }
}
