package com.vertxcuda.blas;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** How one request of a {@link BlasBatch} ended: its reply, or its failure code and message. */
@DataObject
@JsonGen(publicConverter = false)
public class BlasOutcome {

  private BlasReply reply;
  private FailureCode failureCode;
  private String failure;

  public BlasOutcome() {
  }

  public BlasOutcome(JsonObject json) {
    BlasOutcomeConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasOutcomeConverter.toJson(this, json);
    return json;
  }

  public static BlasOutcome of(BlasReply reply) {
    return new BlasOutcome().setReply(reply);
  }

  public static BlasOutcome of(CudaException failure) {
    return new BlasOutcome().setFailureCode(failure.code()).setFailure(Failures.text(failure));
  }

  /** True when the request succeeded. */
  public boolean succeeded() {
    return failureCode == null;
  }

  /** The failure as the exception a request sent alone would have failed with. */
  public CudaException cause() {
    return failureCode == null ? null : new CudaException(failureCode, failure);
  }

  /** The reply; null when the request failed. */
  public BlasReply getReply() { return reply; }
  public BlasOutcome setReply(BlasReply reply) { this.reply = reply; return this; }

  /** Why the request failed; null when it succeeded. */
  public FailureCode getFailureCode() { return failureCode; }
  public BlasOutcome setFailureCode(FailureCode failureCode) { this.failureCode = failureCode; return this; }

  /** The failure's message; null when the request succeeded. */
  public String getFailure() { return failure; }
  public BlasOutcome setFailure(String failure) { this.failure = failure; return this; }
}
