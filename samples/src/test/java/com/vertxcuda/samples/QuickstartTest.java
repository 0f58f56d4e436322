package com.vertxcuda.samples;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The quickstart as a user runs it (a JVM of its own, on the host backend here): every step is OK,
 * it exits 0, and its output carries no log chatter (netlib's fallback warning, INFO lines).
 */
class QuickstartTest {

  @Test
  void everyStepIsOkAndTheOutputIsQuiet() throws Exception {
    Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
      "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"), Quickstart.class.getName())
      .redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), output);
    assertEquals(0, p.exitValue(), output);
    List<String> steps = output.lines().filter(l -> l.matches("\\[\\d/7\\] .*")).toList();
    assertEquals(List.of("deploy", "upload", "gemm", "fft", "rand", "kernel", "free"),
      steps.stream().map(l -> l.split("\\s+")[1]).toList(), output);
    for (String line : steps) {
      assertTrue(line.endsWith(" OK") && line.contains("vertx-cuda.local.0 (host, in-process)"), line);
    }
    for (String line : output.lines().toList()) {
      assertFalse(line.contains("WARNING") || line.contains("netlib") || line.contains("INFO") || line.contains("SLF4J"), line);
    }
    assertTrue(output.contains("quickstart: all 7 steps OK"), output);
  }
}
