package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/** The outcome of a {@link BlasRequest}, sent once the device has finished it. */
@DataObject
@JsonGen(publicConverter = false)
public class BlasReply {

  private BufferHandle output;
  private double value;
  private double valueImag;
  private int index;
  private int batchSize = 1;

  public BlasReply() {
  }

  public BlasReply(JsonObject json) {
    BlasReplyConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    BlasReplyConverter.toJson(this, json);
    return json;
  }

  /** The buffer written (C, y, x or A as the routine defines); null for scalar results. */
  public BufferHandle getOutput() { return output; }
  public BlasReply setOutput(BufferHandle output) { this.output = output; return this; }

  /** The scalar result of DOT, DOTC, NRM2 and ASUM (the real part of a complex dot). */
  public double getValue() { return value; }
  public BlasReply setValue(double value) { this.value = value; return this; }

  /** The imaginary part of a complex DOT or DOTC; 0 otherwise. */
  public double getValueImag() { return valueImag; }
  public BlasReply setValueImag(double valueImag) { this.valueImag = valueImag; return this; }

  /** The 1-based index result of IAMAX and IAMIN (0 when n is 0). */
  public int getIndex() { return index; }
  public BlasReply setIndex(int index) { this.index = index; return this; }

  /** How many requests ran in the device call that served this one (more than 1 when batched). */
  public int getBatchSize() { return batchSize; }
  public BlasReply setBatchSize(int batchSize) { this.batchSize = batchSize; return this; }
}
