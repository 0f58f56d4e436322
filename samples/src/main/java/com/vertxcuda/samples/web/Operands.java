package com.vertxcuda.samples.web;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;

/**
 * A request's two n x n row-major matrices, checked: {@code bytes} holds A then B as little-endian
 * float32, as they go to the device. An octet-stream body is that already (kept as it came, not
 * copied); a JSON one is encoded into it.
 */
final class Operands {

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

  /** The request's operands; an IllegalArgumentException (or a JSON one) says what is wrong. */
  static Operands read(RoutingContext rc, int maxN) {
    String type = rc.request().getHeader("content-type");
    Buffer body = rc.body().buffer();
    if (type != null && type.startsWith("application/octet-stream")) {
      return raw(rc.request().getParam("n"), body, maxN);
    }
    return json(body, maxN);
  }

  static Operands raw(String n, Buffer body, int maxN) {
    if (n == null) {
      throw new IllegalArgumentException("an octet-stream body needs ?n=N");
    }
    int size;
    try {
      size = size(Integer.parseInt(n), maxN);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("n must be an integer, not " + n);
    }
    long expected = 2L * size * size * 4;
    if (body == null || body.length() != expected) {
      throw new IllegalArgumentException("an octet-stream body of n=" + size + " holds " + expected
        + " bytes (A then B, row-major little-endian float32), not " + (body == null ? 0 : body.length()));
    }
    return new Operands(size, body, false);
  }

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

  /** The JSON answer for a product's bytes. */
  static String json(int n, Buffer product) {
    JsonArray c = new JsonArray();
    for (int i = 0; i < product.length(); i += 4) {
      c.add(product.getFloatLE(i));
    }
    return new JsonObject().put("n", n).put("c", c).encode();
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
