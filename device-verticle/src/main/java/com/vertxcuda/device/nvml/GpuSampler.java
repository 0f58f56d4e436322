package com.vertxcuda.device.nvml;

import com.sun.jna.Pointer;
import com.vertxcuda.GpuReadings;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Reads one GPU's meters from NVML every interval on a daemon thread of its own, and counts its XID
 * errors on a second one that waits in the driver for them; {@link #readings()} hands out the last
 * values without touching the driver, so any thread (an event loop answering a stats request) may
 * call it. Loading NVML and finding the GPU also happen on the sampling thread: starting one costs the
 * caller nothing. Without NVML, or where NVML knows no GPU at the bus id, the threads end and
 * {@link #readings()} stays null.
 */
public final class GpuSampler implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger(GpuSampler.class.getName());
  /** How long one wait for an XID error lasts: the most a close waits for the XID thread to notice. */
  private static final int XID_WAIT_MS = 500;

  private final String pciBusId;
  private final long intervalMs;
  private final CountDownLatch closed = new CountDownLatch(1);
  private final AtomicLong xidErrors = new AtomicLong();
  private volatile long lastXid;
  private volatile GpuReadings last;

  private GpuSampler(String pciBusId, long intervalMs) {
    this.pciBusId = pciBusId;
    this.intervalMs = intervalMs;
  }

  /** Starts watching the GPU at {@code pciBusId} (CUDA's form), reading every {@code intervalMs}. */
  public static GpuSampler start(String pciBusId, long intervalMs) {
    GpuSampler sampler = new GpuSampler(pciBusId, intervalMs);
    Thread t = new Thread(sampler::sample, "vertx-cuda-nvml-" + pciBusId);
    t.setDaemon(true);
    t.start();
    return sampler;
  }

  /** The last values read, with the XID errors counted so far; null before the first read or without NVML. */
  public GpuReadings readings() {
    GpuReadings r = last;
    return r == null ? null : new GpuReadings(r).setXidErrors(xidErrors.get()).setLastXid(lastXid);
  }

  /** Stops both threads (each within an interval or an XID wait). */
  @Override
  public void close() {
    closed.countDown();
  }

  private void sample() {
    Nvml nvml = Nvml.get();
    Nvml.Device device = nvml == null ? null : nvml.device(pciBusId);
    if (device == null) {
      if (nvml != null) {
        LOG.log(System.Logger.Level.INFO, "NVML knows no GPU at " + pciBusId + ": no GPU meters for it");
      }
      return;
    }
    // Errors count from now: what the driver counted before this node watched is not this run's.
    long[] base = device.eccCounts();
    Thread xid = new Thread(() -> watchXid(device), "vertx-cuda-xid-" + pciBusId);
    xid.setDaemon(true);
    xid.start();
    try {
      do {
        try {
          last = device.read(Math.max(0, base[0]), Math.max(0, base[1]));
        } catch (RuntimeException | LinkageError e) {
          LOG.log(System.Logger.Level.WARNING, pciBusId + ": reading the GPU meters failed: " + e);
        }
      } while (!closed.await(intervalMs, TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void watchXid(Nvml.Device device) {
    Pointer set = device.xidEvents();
    if (set == null) {
      return; // the GPU cannot report XID errors: the count stays 0
    }
    try {
      while (closed.getCount() > 0) {
        long xid = device.awaitXid(set, XID_WAIT_MS);
        if (xid < 0) {
          return;
        }
        if (xid > 0) {
          lastXid = xid;
          xidErrors.incrementAndGet();
          LOG.log(System.Logger.Level.WARNING, pciBusId + ": the GPU reported XID error " + xid);
        }
      }
    } finally {
      device.free(set);
    }
  }
}
