package com.vertxcuda.device.isolation;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.abort;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A device host's exit status read from Linux as its exit begins ({@link DeviceHostProcess#exitingCode}),
 * so that its loss is reported when its link closes rather than once the driver has torn its CUDA
 * context down and Java has reaped it.
 */
@Tag("runs-once")
class DeviceHostExitTest {

  /** A {@code /proc/<pid>/stat} line of this form: fields 3 to 52 after the command name. */
  private static String stat(String comm, long flags, int exitCode) {
    StringBuilder s = new StringBuilder("4242 (").append(comm).append(") Z 1 4242 4242 0 -1 ").append(flags);
    // fields 10 to 51: 42 numbers
    for (int field = 10; field <= 51; field++) {
      s.append(' ').append(field);
    }
    return s.append(' ').append(exitCode).append('\n').toString();
  }

  @Test
  void theCodeAProcessExitsWithIsReadAsJavaWouldReportIt() {
    // waitpid's form: a signal in the low seven bits, an exit code in the next byte.
    assertEquals(137, DeviceHostProcess.exitingCode(stat("java", 0x4 | 0x400000, 9)), "SIGKILL");
    assertEquals(139, DeviceHostProcess.exitingCode(stat("java", 0x4, 11 | 0x80)), "SIGSEGV with a core");
    assertEquals(3, DeviceHostProcess.exitingCode(stat("java", 0x4, 3 << 8)), "exit(3)");
    // A command name with spaces and parentheses does not shift the fields.
    assertEquals(137, DeviceHostProcess.exitingCode(stat("a (b) c", 0x4, 9)));
    assertEquals("the device host was killed by SIGKILL (exit code 137)", DeviceHostProcess.reason(137));
  }

  @Test
  void nothingIsReadOfAProcessThatIsNotExiting() {
    assertEquals(-1, DeviceHostProcess.exitingCode(stat("java", 0x400000, 9)), "no PF_EXITING");
    assertEquals(-1, DeviceHostProcess.exitingCode(stat("java", 0x4, 0)), "exiting with 0: not told apart");
    assertEquals(-1, DeviceHostProcess.exitingCode("4242 (java) R 1 2 3"), "too few fields");
    assertEquals(-1, DeviceHostProcess.exitingCode("garbage"));
    assertEquals(-1, DeviceHostProcess.exitingCode(ProcessHandle.current().pid()), "this JVM runs");
    assertEquals(-1, DeviceHostProcess.exitingCode(Long.MAX_VALUE), "no such process");
  }

  @Test
  void aKilledProcessIsSeenKilledBeforeItsParentReapsIt() throws Exception {
    String own = DeviceHostProcess.procStat(ProcessHandle.current().pid());
    assumeTrue(own != null,
      "/proc here is not this JVM's PID namespace's: nothing is read of it, the tier waits for Java's exit status");
    // Linux reports a task's flags: a running JVM's carry PF_RANDOMIZE at least (address space layout
    // randomisation, on by default). A /proc that shows none (gVisor's shows zeros for the flags and
    // the exit code) may not tell an exit.
    String[] ownFields = DeviceHostProcess.statFields(own);
    boolean reportsExits = ownFields != null && ownFields.length >= 50 && Long.parseLong(ownFields[9 - 3]) != 0;
    // A grandchild whose parent never waits: once killed it stays a zombie, in its exit, as a device
    // host does while the driver tears its context down.
    Process parent = new ProcessBuilder("sh", "-c", "sleep 60 & echo $!; exec sleep 60").start();
    try {
      long child;
      try (BufferedReader out = new BufferedReader(new InputStreamReader(parent.getInputStream(), StandardCharsets.US_ASCII))) {
        child = Long.parseLong(out.readLine().trim());
        assertEquals(-1, DeviceHostProcess.exitingCode(child), "running");
        assertTrue(ProcessHandle.of(child).orElseThrow().destroyForcibly());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int code = -1;
        String stat = null;
        while (code < 0 && System.nanoTime() < deadline) {
          stat = DeviceHostProcess.procStat(child);
          if (stat == null) {
            // Reaped at once, though its parent never waits (a parent that ignores SIGCHLD, inherited
            // from whatever started this JVM, has its children reaped by the kernel): no zombie to read.
            abort("the killed child " + child + " was reaped at once: its exit cannot be seen here");
          }
          code = DeviceHostProcess.exitingCode(stat);
          String[] fields = DeviceHostProcess.statFields(stat);
          if (code < 0 && !reportsExits && fields != null && (fields[0].equals("Z") || fields[0].equals("X"))) {
            // Killed (a zombie, or dead) and no exit code shown: the tier waits for Java's exit status
            // instead. (Where one is shown, it must be the right one, below.)
            abort("this /proc does not report a task's flags and exit code: " + own.strip() + " / " + stat);
          }
          Thread.sleep(1);
        }
        assertEquals(137, code, "killed by SIGKILL, seen before it was reaped; /proc/" + child + "/stat: " + stat);
        assertEquals(-1, DeviceHostProcess.exitingCode(parent.pid()), "its parent still runs");
      }
    } finally {
      parent.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
  }
}
