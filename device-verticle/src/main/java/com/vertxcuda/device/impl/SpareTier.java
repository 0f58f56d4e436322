package com.vertxcuda.device.impl;

import com.vertxcuda.device.context.ContextTier;
import io.vertx.core.Future;

import java.util.function.LongFunction;

/**
 * A context tier launched ahead for the next generation (process isolation), so that losing the
 * current one costs a switch, not a process start plus {@code cuInit} (which takes seconds).
 * On the device verticle's event loop.
 */
public final class SpareTier {

  private static final System.Logger LOG = System.getLogger(SpareTier.class.getName());

  private final LongFunction<Future<ContextTier>> launch;
  private final String device;
  private Future<ContextTier> spare;
  private long generation;
  /** When the last spare failed to start (ms, 0: none did): another is tried {@link #RETRY_MILLIS} later. */
  private long failedAt;

  /** How long after a spare failed to start another is tried (a device host that cannot start is not launched in a loop). */
  static final long RETRY_MILLIS = 30_000;

  /** {@code launch} starts a tier for a generation; {@code device} names the device in logs. */
  public SpareTier(LongFunction<Future<ContextTier>> launch, String device) {
    this.launch = launch;
    this.device = device;
  }

  /**
   * Launches the spare for {@code gen} unless one is there already, or replaces one that failed to
   * start once {@link #RETRY_MILLIS} have passed (until then, a loss pays a cold start).
   */
  public void start(long gen) {
    if (spare != null && !spare.failed()) {
      return;
    }
    if (spare != null && System.currentTimeMillis() - failedAt < RETRY_MILLIS) {
      return;
    }
    generation = gen;
    Future<ContextTier> s = launch.apply(gen);
    spare = s;
    s.onFailure(t -> {
      failedAt = System.currentTimeMillis();
      LOG.log(System.Logger.Level.WARNING, device + ": the spare device host did not start: " + t);
    });
  }

  /** Whether {@code gen} is the spare's generation (a loss report about it is about the spare). */
  public boolean isFor(long gen) {
    return spare != null && generation == gen;
  }

  /** Whether a spare stands ready. */
  public boolean ready() {
    return spare != null && spare.succeeded();
  }

  /** The spare for {@code gen} if there is one that has not failed, else a new launch. */
  public Future<ContextTier> takeOrLaunch(long gen) {
    Future<ContextTier> s = spare;
    spare = null;
    if (s != null && generation == gen && !s.failed()) {
      return s.recover(t -> launch.apply(gen));
    }
    if (s != null) {
      s.onSuccess(ContextTier::stop);
    }
    return launch.apply(gen);
  }

  /** Stops the spare, if any. */
  public Future<?> drop() {
    Future<ContextTier> s = spare;
    spare = null;
    return s == null ? Future.succeededFuture() : s.compose(ContextTier::stop).otherwiseEmpty();
  }
}
