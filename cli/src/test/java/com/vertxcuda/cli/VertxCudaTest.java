package com.vertxcuda.cli;

import com.vertxcuda.GpuReadings;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Each subcommand as a user runs it, on the host backend, with its exit code and what it prints. */
class VertxCudaTest {

  /** A command's exit code and what it printed. */
  record Run(int code, String out, String err) {
  }

  /** Runs the command line as a user does (one at a time: standard output is the JVM's). */
  static synchronized Run run(String... args) {
    PrintStream stdout = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    StringWriter err = new StringWriter();
    try {
      System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
      int code = VertxCuda.commandLine().setErr(new PrintWriter(err, true)).execute(args);
      return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
    } finally {
      System.setOut(stdout);
    }
  }

  @Test
  void doctorNamesTheBackendAndWhy() {
    Run r = run("doctor");
    assertEquals(0, r.code, r.err);
    assertTrue(r.out.lines().anyMatch(l -> l.startsWith("backend     host: no NVIDIA driver")
      || l.startsWith("backend     cuda")), r.out);
    assertTrue(r.out.lines().anyMatch(l -> l.startsWith("cublas ")), r.out);
  }

  @Test
  void devicesListsTheLocalDeviceWithoutDeploying() {
    Run r = run("devices");
    assertEquals(0, r.code, r.err);
    assertTrue(r.out.startsWith("device 0  "), r.out);
    // The host backend has no GPU meters: the column says so.
    assertTrue(r.out.lines().findFirst().orElseThrow().endsWith("  gpu n/a"), r.out);
  }

  @Test
  void devicesShowsTheGpuMetersItIsGiven() {
    GpuReadings r = new GpuReadings().setUtilizationPercent(97).setMemoryUsedBytes(3L << 30).setPowerWatts(612.4)
      .setTemperatureCelsius(61).setSmClockHz(1_980_000_000L).setMemoryClockHz(2_619_000_000L).setThrottleReasons(0x4)
      .setXidErrors(1).setEccUncorrectedErrors(-1);
    assertEquals("gpu 97 %  3072 MiB used  612 W  61 C  SM 1980 MHz  mem 2619 MHz  throttle 0x4  xid 1  ecc n/a", Devices.gpu(r));
    assertEquals("gpu n/a", Devices.gpu(null));
  }

  @Test
  void quickstartRunsEveryStep() {
    Run r = run("quickstart", "--n", "32");
    assertEquals(0, r.code, r.out + r.err);
    assertEquals(7, r.out.lines().filter(l -> l.matches("\\[\\d/7\\] .* OK")).count(), r.out);
  }

  @Test
  void benchWritesJsonAndMarkdown() throws Exception {
    Path out = Files.createTempDirectory("cli-bench");
    Run r = run("bench", "--backend", "host", "--mode", "in_process", "--size", "small", "--only", "gemm",
      "--budget", "5", "--out", out.toString());
    assertEquals(0, r.code, r.out + r.err);
    assertTrue(Files.size(out.resolve("bench-in_process.json")) > 0);
    assertTrue(Files.readString(out.resolve("report/report.md")).contains("|"), "a Markdown table");
    assertTrue(r.out.contains("markdown: "), r.out);
  }

  @Test
  void badArgumentsExit2WithOneLineAndAHint() {
    for (List<String> args : List.of(List.of("frob"), List.of("devices", "--bogus"), List.of("quickstart", "sideways"),
      List.of("bench", "--size", "huge"), List.of("node", "--devices", "many"),
      List.of("client", "--cluster-manager", "zookeeper"))) {
      Run r = run(args.toArray(String[]::new));
      assertEquals(2, r.code, args + ": " + r.err);
      List<String> lines = r.err.lines().toList();
      assertEquals(2, lines.size(), args + ": " + r.err);
      assertTrue(lines.get(0).startsWith("vertx-cuda"), r.err);
      assertTrue(lines.get(1).startsWith("Try 'vertx-cuda"), r.err);
    }
  }

  @Test
  void nodeClientAndClusterDevices() throws Exception {
    String cluster = "cli-test-" + UUID.randomUUID();
    Process node = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx1g",
      "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Djava.net.preferIPv4Stack=true", "-cp", System.getProperty("java.class.path"), VertxCuda.class.getName(),
      "node", "--devices", "1", "--backend", "host", "--cluster", cluster).redirectErrorStream(true).start();
    try {
      BufferedReader lines = new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8));
      StringBuilder seen = new StringBuilder();
      for (String line = lines.readLine(); line != null && !line.startsWith("READY"); line = lines.readLine()) {
        seen.append(line).append('\n');
      }
      assertTrue(node.isAlive(), "the node ended:\n" + seen);
      Run devices = run("devices", "--cluster", cluster, "--wait", "30");
      assertEquals(0, devices.code, devices.out + devices.err);
      assertTrue(devices.out.contains(" host, in-process  READY  load "), devices.out);
      assertTrue(devices.out.lines().findFirst().orElseThrow().endsWith("  gpu n/a"), devices.out);
      Run client = run("client", "--cluster", cluster, "--n", "64");
      assertEquals(0, client.code, client.out + client.err);
      assertTrue(client.out.contains("SGEMM") && client.out.contains("OK"), client.out);
    } finally {
      node.destroy();
      node.waitFor(30, TimeUnit.SECONDS);
    }
  }
}
