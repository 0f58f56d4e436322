package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * Where one request's time went on the device, in nanoseconds: waiting to be served (admission and
 * the context's queue), waiting on its stream behind earlier work, executing (a library's kernel, or a
 * copy or fill for the device's own memory requests) and in all, from admission to the answer. What a
 * phase could not measure reads -1. Measured by the process that runs the context: on cuda execution
 * is timed by CUDA events on the stream, on the host backend by the executing thread's clock.
 */
@DataObject
@JsonGen(publicConverter = false)
public class RequestPhases {

  private long queueNanos = -1;
  private long streamWaitNanos = -1;
  private long gpuNanos = -1;
  private long copyNanos = -1;
  private long totalNanos = -1;

  public RequestPhases() {
  }

  public RequestPhases(RequestPhases other) {
    this.queueNanos = other.queueNanos;
    this.streamWaitNanos = other.streamWaitNanos;
    this.gpuNanos = other.gpuNanos;
    this.copyNanos = other.copyNanos;
    this.totalNanos = other.totalNanos;
  }

  public RequestPhases(JsonObject json) {
    this();
    RequestPhasesConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    RequestPhasesConverter.toJson(this, json);
    return json;
  }

  /** From admission until the context's submission thread took the request up, in ns. */
  public long getQueueNanos() { return queueNanos; }
  public RequestPhases setQueueNanos(long v) { this.queueNanos = v; return this; }

  /** From queueing the work on its stream until the stream began it (behind earlier work and other streams' events), in ns. */
  public long getStreamWaitNanos() { return streamWaitNanos; }
  public RequestPhases setStreamWaitNanos(long v) { this.streamWaitNanos = v; return this; }

  /** A library's work on the device (BLAS, FFT, RNG, kernels), in ns; -1 for memory requests. */
  public long getGpuNanos() { return gpuNanos; }
  public RequestPhases setGpuNanos(long v) { this.gpuNanos = v; return this; }

  /** A memory request's copy or fill on the device (uploads, downloads, copies, fills), in ns; -1 for library requests. */
  public long getCopyNanos() { return copyNanos; }
  public RequestPhases setCopyNanos(long v) { this.copyNanos = v; return this; }

  /** From admission to the answer, in ns (on a device host, as its parent saw it). */
  public long getTotalNanos() { return totalNanos; }
  public RequestPhases setTotalNanos(long v) { this.totalNanos = v; return this; }

  @Override
  public String toString() {
    return toJson().encode();
  }
}
