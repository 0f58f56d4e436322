package com.vertxcuda.internal;

import io.netty.handler.ssl.OpenSsl;
import io.vertx.core.net.JdkSSLEngineOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import io.vertx.core.net.SSLEngineOptions;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one place that decides which TLS engine the toolkit's own TLS runs on where the application
 * named none: OpenSSL (Vert.x's {@link OpenSSLEngineOptions}, through netty-tcnative; the
 * {@code io.netty:netty-tcnative-boringssl-static} jar of the platform on the class path) where it
 * loads, else the JDK's engine. OpenSSL encrypts a bulk stream at a fraction of the JDK engine's CPU
 * per byte. An engine the application names on its {@code EventBusOptions} is always kept, by the
 * samples' cluster settings and by the bulk side channel alike ({@link #of}).
 *
 * <p>The first use of each engine is logged once per JVM, saying whether the application named it
 * or it was chosen here (and, where OpenSSL is not there, why).
 */
public final class TlsEngines {

  private static final System.Logger LOG = System.getLogger(TlsEngines.class.getName());
  private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

  private TlsEngines() {
  }

  /** The engine the toolkit chooses where none is named: OpenSSL where it loads, else the JDK's (a new copy each call). */
  public static SSLEngineOptions preferred() {
    SSLEngineOptions engine = OpenSSLEngineOptions.isAvailable() ? new OpenSSLEngineOptions() : new JdkSSLEngineOptions();
    logOnce(engine, false);
    return engine;
  }

  /**
   * The engine of TLS settings that name {@code named}: a copy of it where it is not null (the
   * application's choice, kept), else {@link #preferred()}.
   */
  public static SSLEngineOptions of(SSLEngineOptions named) {
    if (named == null) {
      return preferred();
    }
    logOnce(named, true);
    return named.copy();
  }

  /** {@code "OpenSSL"} or {@code "JDK"} (another engine: its class's simple name). */
  public static String name(SSLEngineOptions engine) {
    return engine instanceof OpenSSLEngineOptions ? "OpenSSL" : engine instanceof JdkSSLEngineOptions ? "JDK"
      : engine.getClass().getSimpleName();
  }

  private static void logOnce(SSLEngineOptions engine, boolean named) {
    String name = name(engine);
    if (!LOGGED.add(name + named)) {
      return;
    }
    String what = engine instanceof OpenSSLEngineOptions ? "OpenSSL (" + OpenSsl.versionString() + ", through netty-tcnative)"
      : engine instanceof JdkSSLEngineOptions ? "the JDK's engine" : name;
    Throwable cause = OpenSsl.unavailabilityCause();
    String why = named ? "named by the application's TLS options"
      : engine instanceof OpenSSLEngineOptions ? "the toolkit's choice where OpenSSL loads"
      : "the toolkit's choice: OpenSSL does not load (" + (cause == null ? "no cause given" : cause.getMessage()) + ")";
    LOG.log(System.Logger.Level.INFO, "TLS runs on " + what + ": " + why);
  }
}
