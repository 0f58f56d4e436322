package com.vertxcuda.samples.web;

/** What {@link GemmServer} serves and how much it takes on; one set for all its instances. */
public final class GemmServerOptions {

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

  private int port = DEFAULT_PORT;
  private int maxN = DEFAULT_MAX_N;
  private int maxInFlight = DEFAULT_MAX_IN_FLIGHT;
  private int retryAfter = DEFAULT_RETRY_AFTER;
  private boolean echo;
  private boolean keepBuffers = DEFAULT_KEEP_BUFFERS;

  public GemmServerOptions() {
  }

  public GemmServerOptions(GemmServerOptions other) {
    port = other.port;
    maxN = other.maxN;
    maxInFlight = other.maxInFlight;
    retryAfter = other.retryAfter;
    echo = other.echo;
    keepBuffers = other.keepBuffers;
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
}
