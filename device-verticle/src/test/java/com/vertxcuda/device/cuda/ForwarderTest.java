package com.vertxcuda.device.cuda;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The built cuFFT forwarder against a stand-in "libcufft.so.12" that has only cufftCreate: a call
 * to it arrives with its arguments and result intact; a call to cufftDestroy, which the stand-in
 * lacks, prints the name and aborts instead of jumping to null.
 */
@Tag("runs-once")
class ForwarderTest {

  @Test
  void forwardsPresentFunctionsAndAbortsLoudlyOnMissingOnes(@TempDir Path dir) throws Exception {
    assumeTrue(System.getProperty("os.name").toLowerCase().contains("linux"), "linux only");
    URL forwarder = NativeLoading.class.getResource("/native/linux-x86_64/libcufft.so.10");
    assertNotNull(forwarder, "the build puts the forwarders under native/linux-x86_64");
    assumeTrue("file".equals(forwarder.getProtocol()), "forwarder inside a jar");
    Files.writeString(dir.resolve("standin.c"), "int cufftCreate(int *plan) { *plan = 42; return 7; }\n");
    Files.writeString(dir.resolve("call.c"), String.join("\n",
      "#include <dlfcn.h>",
      "#include <stdio.h>",
      "int main(int argc, char **argv) {",
      "  void *h = dlopen(argv[1], RTLD_NOW);",
      "  if (!h) { printf(\"dlopen: %s\\n\", dlerror()); return 2; }",
      "  int plan = 0;",
      "  int r = ((int (*)(int *)) dlsym(h, \"cufftCreate\"))(&plan);",
      "  printf(\"cufftCreate returned %d, plan %d\\n\", r, plan);",
      "  fflush(stdout);",
      "  ((int (*)(int)) dlsym(h, \"cufftDestroy\"))(plan);",
      "  printf(\"cufftDestroy returned\\n\");",
      "  return 0;",
      "}", ""));
    assumeTrue(run(dir, null, "gcc", "-shared", "-fPIC", "-o", "libcufft.so.12", "standin.c",
      "-Wl,-soname,libcufft.so.12").exit == 0, "no gcc");
    assertEquals(0, run(dir, null, "gcc", "-o", "call", "call.c", "-ldl").exit);

    Result r = run(dir, dir.toString(), dir.resolve("call").toString(), Path.of(forwarder.toURI()).toString());
    assertTrue(r.out.contains("cufftCreate returned 7, plan 42"), r.out);
    assertTrue(r.out.contains("cufftDestroy is not in libcufft.so.12; aborting"), r.out);
    assertFalse(r.out.contains("cufftDestroy returned"), r.out);
    assertEquals(134, r.exit, "SIGABRT");
  }

  private static final class Result {
    final int exit;
    final String out;

    Result(int exit, String out) {
      this.exit = exit;
      this.out = out;
    }
  }

  private static Result run(Path dir, String libraryPath, String... command) throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(List.of(command)).directory(dir.toFile()).redirectErrorStream(true);
    if (libraryPath != null) {
      pb.environment().put("LD_LIBRARY_PATH", libraryPath);
    }
    Process p;
    try {
      p = pb.start();
    } catch (IOException e) {
      return new Result(-1, e.toString());
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    // Java reports a process killed by a signal as 128 + the signal, as a shell does.
    return new Result(p.exitValue(), out);
  }
}
