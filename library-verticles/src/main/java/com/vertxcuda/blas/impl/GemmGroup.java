package com.vertxcuda.blas.impl;

import com.vertxcuda.CudaException;
import com.vertxcuda.blas.BlasReply;
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

  /** Where one request's outcome goes: its own answer, or its slot in a batch's reply. */
  interface Answer {
    void reply(BlasReply reply);

    void fail(CudaException failure);
  }

  /** A validated request and where its outcome goes. */
  record Pending(BlasCall call, Answer answer) {
  }

  final List<Pending> members = new ArrayList<>();
  private final Set<DeviceBuffer> written = Collections.newSetFromMap(new IdentityHashMap<>());
  private final Set<DeviceBuffer> read = Collections.newSetFromMap(new IdentityHashMap<>());
  private GemmShape shape;

  boolean isEmpty() {
    return members.isEmpty();
  }

  int size() {
    return members.size();
  }

  /** Whether a GEMM of {@code shape} may join this group. */
  boolean admits(BlasCall call, GemmShape shape) {
    DeviceBuffer c = call.c().buffer();
    return isEmpty() || shape.equals(this.shape) && !written.contains(c) && !read.contains(c)
      && !written.contains(call.a().buffer()) && !written.contains(call.b().buffer());
  }

  void add(Pending p, GemmShape shape) {
    this.shape = shape;
    members.add(p);
    written.addAll(Operand.buffers(p.call().writes()));
    read.addAll(Operand.buffers(p.call().reads()));
  }

  /**
   * What the members read, each buffer once (a batch of GEMMs on shared inputs names them once, not
   * once per GEMM, for the stream's order to sort through).
   */
  List<DeviceBuffer> reads() {
    return new ArrayList<>(read);
  }

  /** What the members write, each buffer once. */
  List<DeviceBuffer> writes() {
    return new ArrayList<>(written);
  }
}
