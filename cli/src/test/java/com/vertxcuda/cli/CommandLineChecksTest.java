package com.vertxcuda.cli;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Numbers and device options the commands cannot use are refused at once, exit code 2, with the
 * command's own hint — before a cluster is joined or a device started.
 */
class CommandLineChecksTest {

  private record Run(int code, String out, String err) {
  }

  private static synchronized Run run(String... args) {
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
  void quickstartRefusesABadNWithTheCommandsHint() {
    Run r = run("quickstart", "--n", "1");
    assertEquals(2, r.code, r.err);
    assertTrue(r.err.contains("--n must be in 2..2048, not 1"), r.err);
    assertTrue(r.err.contains("vertx-cuda quickstart --help"), r.err);
  }

  @Test
  void nodeRefusesUnknownOrMistypedDeviceOptions() {
    for (String option : new String[] {"maxInFlite=10", "maxInFlight=lots", "requestTimeout=2.5"}) {
      Run r = run("node", "--cluster", "checks-" + UUID.randomUUID(), "--backend", "host", "--device-option", option);
      assertEquals(2, r.code, option + ": " + r.err);
      assertTrue(r.err.contains("--device-option " + option), r.err);
    }
  }

  @Test
  void clientRefusesBadNumbers() {
    for (String[] args : new String[][] {{"--n", "0"}, {"--n", "50000"}, {"--wait", "-1"}, {"--hold", "-5"}}) {
      Run r = run("client", "--cluster", "checks-" + UUID.randomUUID(), args[0], args[1]);
      assertEquals(2, r.code, String.join(" ", args) + ": " + r.err);
      assertTrue(r.err.contains(args[0] + " must"), r.err);
    }
  }
}
