package com.vertxcuda.samples.web;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** What {@link GemmServer} serves and how much it takes on; one set for all its instances. */
@DataObject
@JsonGen(publicConverter = false)
public class GemmServerOptions {

  /** Default port: 8080. */
  public static final int DEFAULT_PORT = 8080;
  /** Default largest n: 1024 (a 4 MiB matrix). */
  public static final int DEFAULT_MAX_N = 1024;
  /** Default requests one instance works on at once: 32. */
  public static final int DEFAULT_MAX_IN_FLIGHT = 32;
  /** Default: device buffers are kept between requests. */
  public static final boolean DEFAULT_KEEP_BUFFERS = true;
  /** Default Retry-After of a refusal: 1 s. */
  public static final int DEFAULT_RETRY_AFTER = 1;
  /** Default longest wait for the next byte of a request body: 30 s. */
  public static final long DEFAULT_BODY_IDLE_TIMEOUT = 30_000;
  /** Default longest time a request body may take, from when its reading begins to its last byte: 120 s. */
  public static final long DEFAULT_BODY_TIMEOUT = 120_000;

  private int port = DEFAULT_PORT;
  private int maxN = DEFAULT_MAX_N;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private int retryAfter = DEFAULT_RETRY_AFTER;
  private boolean echo;
  private boolean keepBuffers = DEFAULT_KEEP_BUFFERS;
  private long bodyIdleTimeout = DEFAULT_BODY_IDLE_TIMEOUT;
  private long bodyTimeout = DEFAULT_BODY_TIMEOUT;

  public GemmServerOptions() {
  }

  public GemmServerOptions(GemmServerOptions other) {
    this(other.toJson());
  }

  public GemmServerOptions(JsonObject json) {
    this();
    GemmServerOptionsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    GemmServerOptionsConverter.toJson(this, json);
    return json;
  }

  /** The port every instance listens on (0: a free one per server; negative: a free one the instances share). */
  public int getPort() { return port; }
  public GemmServerOptions setPort(int port) { this.port = port; return this; }

  /** The largest n accepted; a larger one is a 400. Device memory per held request is 3 n² floats. */
  public int getMaxN() { return maxN; }
  public GemmServerOptions setMaxN(int maxN) {
    // A body holds A and B, 8 n² bytes, in one Buffer: n = 16384 would not fit an int.
    if (maxN < 1 || maxN > 16_383) {
      throw new IllegalArgumentException("maxN must be between 1 and 16383, not " + maxN);
    }
    this.maxN = maxN;
    return this;
  }

  /**
   * Requests one instance (one event loop) works on at once, each holding one device buffer of 3 n²
   * floats; past it a request is answered 503 with Retry-After at once.
   */
  public int getMaxInFlight() { return maxInFlight; }
  public GemmServerOptions setMaxInFlight(int maxInFlight) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight must be at least 1, not " + maxInFlight);
    }
    this.maxInFlight = maxInFlight;
    return this;
  }

  /** The Retry-After of a 429 or 503, in seconds. */
  public int getRetryAfter() { return retryAfter; }
  public GemmServerOptions setRetryAfter(int retryAfter) { this.retryAfter = Math.max(0, retryAfter); return this; }

  /**
   * Whether {@code POST /echo} is served too: the same request and checks, answered with A's bytes
   * and no GPU work (the HTTP ceiling the load test measures against).
   */
  public boolean isEcho() { return echo; }
  public GemmServerOptions setEcho(boolean echo) { this.echo = echo; return this; }

  /**
   * Whether an instance keeps its device buffers for the next request of the same n (at most
   * {@code maxInFlight} of them), or allocates and frees one per request (an allocation more before
   * the upload, and a free, which on cuda waits for the device).
   */
  public boolean isKeepBuffers() { return keepBuffers; }
  public GemmServerOptions setKeepBuffers(boolean keepBuffers) { this.keepBuffers = keepBuffers; return this; }

  /**
   * How long, in milliseconds, a request body may send nothing before it is answered 408 and its
   * connection closed, giving back what it held (its place among {@code maxInFlight}, the memory it
   * was read into).
   */
  public long getBodyIdleTimeout() { return bodyIdleTimeout; }
  public GemmServerOptions setBodyIdleTimeout(long bodyIdleTimeout) {
    if (bodyIdleTimeout < 1) {
      throw new IllegalArgumentException("bodyIdleTimeout must be at least 1 ms, not " + bodyIdleTimeout);
    }
    this.bodyIdleTimeout = bodyIdleTimeout;
    return this;
  }

  /**
   * How long, in milliseconds, a request body may take from the time its reading began to its last
   * byte before it is answered 408 as for {@link #getBodyIdleTimeout bodyIdleTimeout}: a sender that
   * trickles a byte every little while would otherwise hold its place and memory for as long as it likes.
   */
  public long getBodyTimeout() { return bodyTimeout; }
  public GemmServerOptions setBodyTimeout(long bodyTimeout) {
    if (bodyTimeout < 1) {
      throw new IllegalArgumentException("bodyTimeout must be at least 1 ms, not " + bodyTimeout);
    }
    this.bodyTimeout = bodyTimeout;
    return this;
  }
}
