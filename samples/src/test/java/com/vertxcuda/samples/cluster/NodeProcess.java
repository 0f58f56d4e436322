package com.vertxcuda.samples.cluster;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.TimeUnit;

/** A node in a JVM of its own (the test's class path), and the line it prints when it is ready. */
final class NodeProcess implements AutoCloseable {

  private final Process process;
  private final CompletableFuture<String> ready = new CompletableFuture<>();
  private final ConcurrentLinkedDeque<String> output = new ConcurrentLinkedDeque<>();
  private final Thread reader;

  private NodeProcess(Process process, String readyPrefix) {
    this.process = process;
    reader = new Thread(() -> {
      try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line; (line = in.readLine()) != null; ) {
          output.add(line);
          if (output.size() > 200) {
            output.pollFirst();
          }
          if (line.startsWith(readyPrefix)) {
            ready.complete(line.substring(readyPrefix.length()).trim());
          }
        }
      } catch (IOException ignored) {
        // the process is gone
      }
      ready.completeExceptionally(new IllegalStateException("the node exited before it was ready:\n" + String.join("\n", output)));
    }, "node-output");
    reader.setDaemon(true);
    reader.start();
  }

  /** Starts {@code main} with {@code args}; {@link #ready} completes with what follows {@code readyPrefix} on its output. */
  static NodeProcess start(Class<?> main, List<String> args, String readyPrefix) throws IOException {
    return start(System.getProperty("java.class.path"), main, args, readyPrefix);
  }

  /**
   * Starts a sending node as {@link #start} does, on the test's class path without the device and
   * library modules, JCuda, netlib and JTransforms ({@link #senderClassPath}).
   */
  static NodeProcess startSender(Class<?> main, List<String> args, String readyPrefix) throws IOException {
    return start(senderClassPath(), main, args, readyPrefix);
  }

  private static NodeProcess start(String classPath, Class<?> main, List<String> args, String readyPrefix)
    throws IOException {
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx2g", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true", "-cp", classPath, main.getName()));
    command.addAll(args);
    return new NodeProcess(new ProcessBuilder(command).redirectErrorStream(true).start(), readyPrefix);
  }

  /** Packages of what a sending node must do without. */
  static final List<String> ENGINE_PACKAGES = List.of("com/vertxcuda/device/", "com/vertxcuda/library/",
    "jcuda/", "dev/ludovic/netlib/", "org/jtransforms/", "pl/edu/icm/jlargearrays/", "org/apache/commons/math3/");

  /** The test's class path less every entry that holds one of the {@link #ENGINE_PACKAGES}. */
  static String senderClassPath() throws IOException {
    List<String> kept = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      if (!entry.isEmpty() && !holdsEnginePackage(Path.of(entry))) {
        kept.add(entry);
      }
    }
    return String.join(java.io.File.pathSeparator, kept);
  }

  private static boolean holdsEnginePackage(Path entry) throws IOException {
    if (java.nio.file.Files.isDirectory(entry)) {
      return ENGINE_PACKAGES.stream().anyMatch(p -> java.nio.file.Files.isDirectory(entry.resolve(p)));
    }
    if (!java.nio.file.Files.isRegularFile(entry)) {
      return false;
    }
    try (java.util.jar.JarFile jar = new java.util.jar.JarFile(entry.toFile())) {
      return jar.stream().anyMatch(e -> ENGINE_PACKAGES.stream().anyMatch(e.getName()::startsWith));
    }
  }

  /** The exit status, waiting at most {@code seconds}. */
  int exitValue(long seconds) throws Exception {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      throw new AssertionError("still running after " + seconds + " s:\n" + String.join("\n", output));
    }
    reader.join(10_000);
    return process.exitValue();
  }

  /** What followed the ready prefix (a node id), waiting at most {@code seconds}. */
  String ready(long seconds) throws Exception {
    try {
      return ready.get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("not ready after " + seconds + " s:\n" + String.join("\n", output));
    }
  }

  /** SIGTERM (the node's shutdown hooks run); whether it ended within {@code seconds}. */
  boolean stop(long seconds) throws InterruptedException {
    process.destroy();
    return process.waitFor(seconds, TimeUnit.SECONDS);
  }

  /** kill -9. */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(30, TimeUnit.SECONDS);
  }

  boolean alive() {
    return process.isAlive();
  }

  String output() {
    return String.join("\n", output);
  }

  @Override
  public void close() throws InterruptedException {
    kill();
  }
}
