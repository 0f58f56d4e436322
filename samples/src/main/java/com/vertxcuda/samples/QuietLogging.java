package com.vertxcuda.samples;

import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.logging.LogManager;

/**
 * Logging for a command a person reads: warnings and errors only, and none of netlib's notes that
 * it fell back to its Java BLAS (they are expected on every host without a native one), nor
 * Hazelcast's start-up warnings. Everything
 * logs through java.util.logging here (Vert.x, Netty, Hazelcast with {@code hazelcast.logging.type=jdk},
 * the device verticle, netlib), so one configuration covers them; a device host, a JVM of its own,
 * gets the same configuration through {@link #deviceHostJvmOptions()}.
 */
public final class QuietLogging {

  /** The configuration, in {@code logging.properties} form. */
  static final String PROPERTIES = String.join("\n",
    "handlers=java.util.logging.ConsoleHandler",
    ".level=WARNING",
    "java.util.logging.ConsoleHandler.level=ALL",
    "dev.ludovic.netlib.level=OFF",
    "com.github.fommil.level=OFF",
    // Hazelcast warns of its modular-access and CP-subsystem defaults on every start: chatter here.
    "com.hazelcast.level=SEVERE",
    // Infinispan warns on every start that its internal caches are not persisted (no global state, by design).
    "org.infinispan.registry.level=SEVERE",
    "");

  private static Path file;

  private QuietLogging() {
  }

  /**
   * Applies the configuration to this JVM; call before Vert.x is first used. Vert.x and Netty are
   * pointed at java.util.logging, so SLF4J (present without a provider) does not announce itself.
   */
  public static synchronized void apply() {
    System.setProperty("vertx.logger-delegate-factory-class-name", "io.vertx.core.logging.JULLogDelegateFactory");
    System.setProperty("hazelcast.logging.type", "jdk");
    InternalLoggerFactory.setDefaultFactory(
      JdkLoggerFactory.INSTANCE);
    try {
      LogManager.getLogManager().readConfiguration(new ByteArrayInputStream(PROPERTIES.getBytes(StandardCharsets.UTF_8)));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** JVM options that give a device host process the same configuration. */
  public static synchronized List<String> deviceHostJvmOptions() {
    try {
      if (file == null) {
        file = Files.createTempFile("vertx-cuda-logging", ".properties");
        file.toFile().deleteOnExit();
        Files.writeString(file, PROPERTIES, StandardCharsets.UTF_8);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return List.of("-Djava.util.logging.config.file=" + file);
  }
}
