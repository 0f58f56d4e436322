package com.vertxcuda.samples.web;

import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The server's options as JSON (a config file, a deployment's config): read, written, checked. */
class GemmServerOptionsTest {

  @Test
  void readFromJsonAndWrittenBack() {
    GemmServerOptions o = new GemmServerOptions(new JsonObject().put("port", 9090).put("maxN", 2048)
      .put("maxInFlight", 4).put("bodyIdleTimeout", 500).put("bodyTimeout", 9_000).put("echo", true).put("keepBuffers", false));
    assertEquals(9090, o.getPort());
    assertEquals(2048, o.getMaxN());
    assertEquals(4, o.getMaxInFlight());
    assertEquals(500, o.getBodyIdleTimeout());
    assertEquals(9_000, o.getBodyTimeout());
    assertEquals(true, o.isEcho());
    assertEquals(false, o.isKeepBuffers());
    GemmServerOptions copy = new GemmServerOptions(o);
    assertEquals(o.toJson(), copy.toJson());
    assertEquals(GemmServerOptions.DEFAULT_BODY_IDLE_TIMEOUT, new GemmServerOptions().toJson().getLong("bodyIdleTimeout"));
    assertEquals(GemmServerOptions.DEFAULT_BODY_TIMEOUT, new GemmServerOptions().toJson().getLong("bodyTimeout"));
  }

  @Test
  void jsonThatBreaksAnOptionsRuleIsRefused() {
    assertThrows(IllegalArgumentException.class, () -> new GemmServerOptions(new JsonObject().put("maxN", 16_384)));
    assertThrows(IllegalArgumentException.class, () -> new GemmServerOptions(new JsonObject().put("bodyIdleTimeout", 0)));
    assertThrows(IllegalArgumentException.class, () -> new GemmServerOptions(new JsonObject().put("bodyTimeout", -5)));
    assertThrows(IllegalArgumentException.class, () -> new GemmServerOptions(new JsonObject().put("maxInFlight", 0)));
  }
}
