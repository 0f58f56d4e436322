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

  private NodeProcess(Process process, String readyPrefix) {
    this.process = process;
    Thread reader = new Thread(() -> {
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
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
      "-Xmx2g", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true", "-cp", System.getProperty("java.class.path"),
      main.getName()));
    command.addAll(args);
    return new NodeProcess(new ProcessBuilder(command).redirectErrorStream(true).start(), readyPrefix);
  }

  /** What followed the ready prefix (a node id), waiting at most {@code seconds}. */
  String ready(long seconds) throws Exception {
    try {
      return ready.get(seconds, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("not ready after " + seconds + " s:\n" + String.join("\n", output));
    }
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
