package com.vertxcuda.library.blas;

import com.vertxcuda.CudaException;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.library.impl.Operand;

import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * Requests queued as one device call: one request, or same-shaped GEMMs of which none writes what
 * another touches (so they may run concurrently, as one batched call).
 */
final class GemmGroup {

  /** Where outcomes go: a request's own answer, or the slots of a batch's one reply. */
  interface Answer {
    void reply(int slot, BlasReply reply);

    void fail(int slot, CudaException failure);
  }

  /** A validated request and where its outcome goes ({@code slot} of {@code answer}). */
  record Pending(BlasCall call, Answer answer, int slot) {
    void reply(BlasReply reply) {
      answer.reply(slot, reply);
    }

    void fail(CudaException failure) {
      answer.fail(slot, failure);
    }
  }

  /** The members; a new list for each group ({@link #take} hands the last one over). */
  private List<Pending> members = new ArrayList<>();
  // What the members write and read, each buffer once. One group is held at a time on the
  // submission thread, so the sets are kept and cleared rather than made per group (a batch of
  // small GEMMs passes here a few hundred thousand times a second).
  private final Set<DeviceBuffer> written = Collections.newSetFromMap(new IdentityHashMap<>());
  private final Set<DeviceBuffer> read = Collections.newSetFromMap(new IdentityHashMap<>());
  private final List<DeviceBuffer> writes = new ArrayList<>();
  private final List<DeviceBuffer> reads = new ArrayList<>();
  /** The first member: every other has its shape. */
  private BlasCall first;

  boolean isEmpty() {
    return members.isEmpty();
  }

  int size() {
    return members.size();
  }

  /** The members held now. */
  List<Pending> members() {
    return members;
  }

  /**
   * Whether {@code call} may join this group: it has the members' shape (dtypes, transposes, sizes,
   * leading dimensions, alpha, beta, TF32 — what one batched call shares), writes nothing they touch
   * and reads nothing they write.
   */
  boolean admits(BlasCall call) {
    if (isEmpty()) {
      return true;
    }
    DeviceBuffer c = call.c().buffer();
    return sameShape(first, call) && !written.contains(c) && !read.contains(c)
      && !written.contains(call.a().buffer()) && !written.contains(call.b().buffer());
  }

  void add(Pending p) {
    if (members.isEmpty()) {
      first = p.call();
    }
    members.add(p);
    for (Operand o : p.call().writes()) {
      if (written.add(o.buffer())) {
        writes.add(o.buffer());
      }
    }
    for (Operand o : p.call().reads()) {
      if (read.add(o.buffer())) {
        reads.add(o.buffer());
      }
    }
  }

  // Field by field, for every GEMM of a batch (no shape object made per request).
  private static boolean sameShape(BlasCall x, BlasCall y) {
    BlasRequest p = x.request();
    BlasRequest q = y.request();
    return p.getM() == q.getM() && p.getN() == q.getN() && p.getK() == q.getK() && p.getLda() == q.getLda()
      && p.getLdb() == q.getLdb() && p.getLdc() == q.getLdc() && p.isTf32() == q.isTf32()
      && x.a().dtype() == y.a().dtype() && x.c().dtype() == y.c().dtype()
      && p.getTransA() == q.getTransA() && p.getTransB() == q.getTransB()
      && Double.doubleToLongBits(p.getAlpha()) == Double.doubleToLongBits(q.getAlpha())
      && Double.doubleToLongBits(p.getBeta()) == Double.doubleToLongBits(q.getBeta());
  }

  /**
   * What the members read, each buffer once (a batch of GEMMs on shared inputs names them once, not
   * once per GEMM, for the stream's order to sort through). Valid until {@link #take}.
   */
  List<DeviceBuffer> reads() {
    return reads;
  }

  /** What the members write, each buffer once. Valid until {@link #take}. */
  List<DeviceBuffer> writes() {
    return writes;
  }

  /** Hands the members over and empties the group for the next one. */
  List<Pending> take() {
    List<Pending> taken = members;
    members = new ArrayList<>(Math.max(4, taken.size()));
    written.clear();
    read.clear();
    writes.clear();
    reads.clear();
    first = null;
    return taken;
  }
}
