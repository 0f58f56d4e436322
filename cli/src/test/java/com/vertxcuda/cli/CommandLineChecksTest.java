package com.vertxcuda.cli;

import com.vertxcuda.cli.VertxCudaTest.Run;
import org.junit.jupiter.api.Test;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Numbers and device options the commands cannot use are refused at once, exit code 2, with the
 * command's own hint — before a cluster is joined or a device started.
 */
class CommandLineChecksTest {

  @Test
  void quickstartRefusesABadNWithTheCommandsHint() {
    Run r = VertxCudaTest.run("quickstart", "--n", "1");
    assertEquals(2, r.code(), r.err());
    assertTrue(r.err().contains("--n must be in 2..2048, not 1"), r.err());
    assertTrue(r.err().contains("vertx-cuda quickstart --help"), r.err());
  }

  @Test
  void nodeRefusesUnknownOrMistypedDeviceOptions() {
    for (String option : new String[] {"maxInFlite=10", "maxInFlight=lots", "requestTimeout=2.5"}) {
      Run r = VertxCudaTest.run("node", "--cluster", "checks-" + UUID.randomUUID(), "--backend", "host", "--device-option", option);
      assertEquals(2, r.code(), option + ": " + r.err());
      assertTrue(r.err().contains("--device-option " + option), r.err());
    }
  }

  @Test
  void clientRefusesBadNumbers() {
    for (String[] args : new String[][] {{"--n", "0"}, {"--n", "50000"}, {"--wait", "-1"}, {"--hold", "-5"}}) {
      Run r = VertxCudaTest.run("client", "--cluster", "checks-" + UUID.randomUUID(), args[0], args[1]);
      assertEquals(2, r.code(), String.join(" ", args) + ": " + r.err());
      assertTrue(r.err().contains(args[0] + " must"), r.err());
    }
  }
}
