package com.vertxcuda.samples.web;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * A request's two n x n row-major matrices, checked: {@code bytes} holds A then B as little-endian
 * float32, as they go to the device. An octet-stream body is that already ({@link BodyReader} reads
 * it where the upload reads from); a JSON one is encoded into it.
 */
final class Operands {

  static final String OCTETS = "application/octet-stream";

  final int n;
  final Buffer bytes;
  /** Whether the request was JSON (and so is its answer). */
  final boolean json;

  private Operands(int n, Buffer bytes, boolean json) {
    this.n = n;
    this.bytes = bytes;
    this.json = json;
  }

  /** One matrix's bytes: 4 n². */
  int matrixBytes() {
    return n * n * 4;
  }

  Operands(int n, Buffer bytes) {
    this(n, bytes, false);
  }

  /** The n of an octet-stream request's {@code ?n=N}, checked. */
  static int size(String n, int maxN) {
    if (n == null) {
      throw new IllegalArgumentException("an octet-stream body needs ?n=N");
    }
    try {
      return size(Integer.parseInt(n), maxN);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("n must be an integer, not " + n);
    }
  }

  /** What a length other than the body's should say. */
  static String wrongLength(int n, String received) {
    return "an octet-stream body of n=" + n + " holds " + 8L * n * n
      + " bytes (A then B, row-major little-endian float32), not " + received;
  }

  /** The operands of a JSON body, checked; on a worker, as a body can be hundreds of MB. */
  static Operands json(Buffer body, int maxN) {
    if (body == null || body.length() == 0) {
      throw new IllegalArgumentException("the body is empty: send {\"n\": N, \"a\": [N*N numbers], \"b\": [N*N numbers]}"
        + " or application/octet-stream with ?n=N");
    }
    JsonObject json = new JsonObject(body);
    Object n = json.getValue("n");
    if (!(n instanceof Integer)) {
      throw new IllegalArgumentException("\"n\" must be an integer, not " + n);
    }
    int size = size((Integer) n, maxN);
    Buffer bytes = Buffer.buffer(2 * size * size * 4);
    append(json.getValue("a"), "a", size, bytes);
    append(json.getValue("b"), "b", size, bytes);
    return new Operands(size, bytes, true);
  }

  /** The JSON answer for a product's bytes, as UTF-8; on a worker, as {@link #json(Buffer, int)}. */
  static Buffer json(int n, Buffer product) {
    JsonArray c = new JsonArray();
    for (int i = 0; i < product.length(); i += 4) {
      c.add(product.getFloatLE(i));
    }
    return new JsonObject().put("n", n).put("c", c).toBuffer();
  }

  private static int size(int n, int maxN) {
    if (n < 1 || n > maxN) {
      throw new IllegalArgumentException("n must be between 1 and " + maxN + ", not " + n);
    }
    return n;
  }

  private static void append(Object value, String name, int n, Buffer into) {
    if (!(value instanceof JsonArray) || ((JsonArray) value).size() != n * n) {
      throw new IllegalArgumentException("\"" + name + "\" must be an array of n*n = " + n * n + " numbers");
    }
    JsonArray array = (JsonArray) value;
    for (int i = 0; i < n * n; i++) {
      if (!(array.getValue(i) instanceof Number)) {
        throw new IllegalArgumentException("\"" + name + "\"[" + i + "] is not a number: " + array.getValue(i));
      }
      into.appendFloatLE(((Number) array.getValue(i)).floatValue());
    }
  }
}
