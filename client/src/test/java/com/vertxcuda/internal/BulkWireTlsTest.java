package com.vertxcuda.internal;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.KeyStoreOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.TCPSSLOptions;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side channel's server and client take the event bus's TLS settings as they are, key and trust
 * given as {@code KeyStoreOptions} included (which a JSON copy of the bus's options loses), and say
 * why a TLS bus's settings would make it less protected than the bus.
 */
class BulkWireTlsTest {

  private static EventBusOptions tlsBus() {
    return new EventBusOptions().setHost("127.0.0.1").setSsl(true)
      .setKeyCertOptions(new KeyStoreOptions().setType("PKCS12").setPath("node.p12").setPassword("k"))
      .setTrustOptions(new KeyStoreOptions().setType("JKS").setPath("trust.jks").setPassword("t"))
      .setClientAuth(ClientAuth.REQUIRED).addCrlPath("revoked.crl").addCrlValue(Buffer.buffer("crl"))
      .setEnabledSecureTransportProtocols(Set.of("TLSv1.3")).addEnabledCipherSuite("TLS_AES_128_GCM_SHA256");
  }

  @Test
  void theServerAndClientCarryTheBusTlsSettings() {
    Vertx vertx = Vertx.vertx();
    try {
      EventBusOptions bus = tlsBus();
      NetServerOptions server = BulkWire.serverOptions(vertx, bus);
      NetClientOptions client = BulkWire.clientOptions(bus);
      for (TCPSSLOptions o : List.of(server, client)) {
        assertTrue(o.isSsl());
        assertEquals(bus.getKeyCertOptions(), o.getKeyCertOptions());
        assertEquals(bus.getTrustOptions(), o.getTrustOptions());
        assertEquals(List.of("revoked.crl"), o.getCrlPaths());
        assertEquals(List.of(Buffer.buffer("crl")), o.getCrlValues());
        assertEquals(Set.of("TLSv1.3"), o.getEnabledSecureTransportProtocols());
        assertEquals(Set.of("TLS_AES_128_GCM_SHA256"), o.getEnabledCipherSuites());
      }
      assertEquals(ClientAuth.REQUIRED, server.getClientAuth());
      assertEquals("127.0.0.1", server.getHost());
      assertEquals(0, server.getPort());
      assertFalse(client.isTrustAll(), "the client trusts the trust store alone");
      assertNull(BulkWire.tlsMismatch(bus));
    } finally {
      vertx.close();
    }
  }

  /**
   * The engine the bus names goes to both ends of the side channel, whichever it is (the JDK's kept
   * although OpenSSL loads here: netty-tcnative is on this module's test class path); a bus that
   * names none gets OpenSSL; a plain bus none.
   */
  @Test
  void theServerAndClientRunTheEngineTheBusNamesElseOpenSsl() {
    assertTrue(OpenSSLEngineOptions.isAvailable(), "netty-tcnative loads here: " + OpenSsl.unavailabilityCause());
    Vertx vertx = Vertx.vertx();
    try {
      for (SSLEngineOptions named : List.of(new JdkSSLEngineOptions(), new OpenSSLEngineOptions().setSessionCacheEnabled(false))) {
        EventBusOptions bus = tlsBus().setSslEngineOptions(named);
        for (TCPSSLOptions o : List.of(BulkWire.serverOptions(vertx, bus), BulkWire.clientOptions(bus))) {
          assertEquals(named.getClass(), o.getSslEngineOptions().getClass());
        }
        assertEquals(named.getClass(), BulkWire.engine(bus).getClass());
      }
      assertFalse(((OpenSSLEngineOptions) BulkWire.clientOptions(tlsBus().setSslEngineOptions(
        new OpenSSLEngineOptions().setSessionCacheEnabled(false))).getSslEngineOptions()).isSessionCacheEnabled(),
        "the named engine's own settings come along");
      EventBusOptions unnamed = tlsBus();
      assertNull(unnamed.getSslEngineOptions());
      assertTrue(BulkWire.serverOptions(vertx, unnamed).getSslEngineOptions() instanceof OpenSSLEngineOptions);
      assertTrue(BulkWire.clientOptions(unnamed).getSslEngineOptions() instanceof OpenSSLEngineOptions);
      assertNull(BulkWire.engine(new EventBusOptions()), "a plain bus's side channel runs no TLS engine");
    } finally {
      vertx.close();
    }
  }

  @Test
  void aTlsBusWithoutTrustOrKeyIsNamedAsSuch() {
    String noTrust = BulkWire.tlsMismatch(tlsBus().setTrustOptions(null));
    assertTrue(noTrust != null && noTrust.contains("trust"), noTrust);
    String noKey = BulkWire.tlsMismatch(tlsBus().setKeyCertOptions(null));
    assertTrue(noKey != null && noKey.contains("key"), noKey);
    assertNull(BulkWire.tlsMismatch(new EventBusOptions()), "a plain bus is as protected as its side channel");
  }
}
