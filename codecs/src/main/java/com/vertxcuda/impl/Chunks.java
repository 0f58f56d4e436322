package com.vertxcuda.impl;

import io.vertx.core.Future;
import io.vertx.core.Promise;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The parts of one large transfer to a device on another node, sent in order with at most
 * {@link #WINDOW} of them on their way at a time (so no part waits out its timeout behind the
 * others). It holds the rest ({@link RequestSender#hold}): a request made later on the same context
 * or thread first sends every part still held, so it still arrives after all of them.
 */
final class Chunks implements RequestSender.Held {

  /** Parts on their way at once. */
  static final int WINDOW = 4;

  private final RequestSender sender;
  private final List<Object> parts;
  private final Object[] replies;
  private final Promise<List<Object>> done = Promise.promise();
  private final Object lock = new Object();
  private int next;
  private int onTheirWay;
  private int answered;
  private boolean unlimited;
  private Object holders;

  Chunks(RequestSender sender, List<Object> parts) {
    this.sender = sender;
    this.parts = parts;
    this.replies = new Object[parts.size()];
  }

  /** Sends the first parts and holds the rest; completes with every part's reply, in order. */
  Future<List<Object>> start() {
    RequestSender.hold(this);
    holders = RequestSender.holdersKey();
    pump();
    return done.future();
  }

  @Override
  public void sendHeld() {
    synchronized (lock) {
      unlimited = true;
    }
    pump();
  }

  private void pump() {
    synchronized (lock) {
      while (next < parts.size() && (unlimited || onTheirWay < WINDOW) && !done.future().isComplete()) {
        int i = next++;
        onTheirWay++;
        sender.dispatch(parts.get(i)).onComplete(ar -> answered(i, ar.succeeded() ? ar.result() : null, ar.cause()));
      }
      if (next == parts.size()) {
        RequestSender.released(holders, this);
      }
    }
  }

  private void answered(int i, Object reply, Throwable failure) {
    boolean all;
    synchronized (lock) {
      onTheirWay--;
      replies[i] = reply;
      answered++;
      all = answered == parts.size();
    }
    if (failure != null) {
      done.tryFail(failure);
      RequestSender.released(holders, this);
      return;
    }
    if (all) {
      List<Object> list = new ArrayList<>(parts.size());
      Collections.addAll(list, replies);
      done.tryComplete(list);
    } else {
      pump();
    }
  }
}
