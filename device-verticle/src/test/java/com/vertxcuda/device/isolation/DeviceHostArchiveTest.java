package com.vertxcuda.device.isolation;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceInfo;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device hosts' class-data archive: made by a training run once a device host is ready, then
 * started from; a corrupt archive, or one the JVM refuses, costs only the speed; the switch turns it
 * off. The device hosts run on a class path of jars, as in the GPU bundle (the JVM archives no class
 * from a folder, and Maven's class path has target/classes).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("runs-once")
class DeviceHostArchiveTest {

  /** This JVM's class path, each folder in it made a jar. */
  private static String jars;
  /** An archive of {@link #jars}, made once for the tests that start from one. */
  private static Path trained;

  @BeforeAll
  static void jarTheClassPathAndTrain(@TempDir Path dir) throws Exception {
    List<String> entries = new ArrayList<>();
    for (String entry : DeviceHostClassPath.of().split(File.pathSeparator)) {
      Path p = Path.of(entry);
      if (Files.isDirectory(p)) {
        Path jar = dir.resolve(entries.size() + ".jar");
        jar(p, jar);
        entries.add(jar.toString());
      } else {
        entries.add(entry);
      }
    }
    jars = String.join(File.pathSeparator, entries);
    DeviceOptions options = options(dir.resolve("cds"), dir);
    trained = DeviceHostArchive.of(options, jars).train(options, "local");
    assertNotNull(trained, "no archive made");
  }

  // A copy of the trained archive in a fresh owner-only folder, as a training there would leave it.
  private static Path archiveIn(Path archives) throws IOException {
    Files.createDirectory(archives, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    return Files.copy(trained, archives.resolve(trained.getFileName()));
  }

  private static DeviceOptions options(Path archives, Path logs) {
    return DeviceHostLinkTest.options().setDeviceHostClassArchiveDirectory(archives.toString())
      // Where each device host's classes came from, per process: the archive's "(top)" layer or a jar.
      .setDeviceHostJvmOptions(List.of("-Xlog:class+load=info:file=" + logs.resolve("load-%p.log")));
  }

  @Test
  void madeOnceAHostIsReadyThenLaterHostsStartFromIt(@TempDir Path dir) throws Exception {
    Path archives = dir.resolve("cds");
    DeviceOptions options = options(archives, dir);
    DeviceHostProcess first = DeviceHostProcess.start(options, "local", 1, why -> { }, true, jars);
    Path made;
    try {
      assertFalse(arguments(first).stream().anyMatch(a -> a.contains("SharedArchiveFile")), "no archive yet");
      assertEquals(first.pid(), serve(first).getPid());
      made = first.trainArchive().get(100, TimeUnit.SECONDS);
    } finally {
      first.stop().get(10, TimeUnit.SECONDS);
    }
    assertNotNull(made, "no archive made");
    assertTrue(Files.size(made) > 1 << 20, "archive of " + Files.size(made) + " bytes");
    assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(archives,
      LinkOption.NOFOLLOW_LINKS)), "the archives' folder");
    try (Stream<Path> files = Files.list(archives)) {
      assertFalse(files.anyMatch(f -> f.toString().endsWith(".tmp")), "a dump left behind");
    }

    DeviceHostProcess second = DeviceHostProcess.start(options, "local", 2, why -> { }, true, jars);
    try {
      assertTrue(arguments(second).contains("-XX:SharedArchiveFile=" + made), String.valueOf(arguments(second)));
      assertEquals(second.pid(), serve(second).getPid());
    } finally {
      second.stop().get(10, TimeUnit.SECONDS);
    }
    assertTrue(loadedFromTheArchive(dir, second.pid()), "DeviceHostMain not loaded from the archive");
  }

  @Test
  void aCorruptArchiveIsDeletedAndTheHostStillServes(@TempDir Path dir) throws Exception {
    DeviceOptions options = options(dir.resolve("cds"), dir);
    Path made = archiveIn(dir.resolve("cds"));
    // Random bytes over its middle, where the classes are: the JVM would map them unchecked and crash.
    made.toFile().setWritable(true, true);
    try (FileChannel f = FileChannel.open(made, StandardOpenOption.WRITE)) {
      byte[] junk = new byte[64 << 10];
      ThreadLocalRandom.current().nextBytes(junk);
      f.write(ByteBuffer.wrap(junk), Files.size(made) / 2);
    }
    DeviceHostProcess host = DeviceHostProcess.start(options, "local", 1, why -> { }, true, jars);
    try {
      assertFalse(arguments(host).stream().anyMatch(a -> a.contains("SharedArchiveFile")), String.valueOf(arguments(host)));
      assertEquals(host.pid(), serve(host).getPid());
    } finally {
      host.stop().get(10, TimeUnit.SECONDS);
    }
    assertFalse(Files.exists(made), "the corrupt archive is still there");
    assertFalse(loadedFromTheArchive(dir, host.pid()));
  }

  @Test
  void anArchiveTheJvmRefusesOnlyCostsSpeed(@TempDir Path dir) throws Exception {
    DeviceOptions options = options(dir.resolve("cds"), dir);
    Path made = archiveIn(dir.resolve("cds"));
    // The same jars in another order: another key, whose archive this one is made to look like. It
    // is intact, so it is handed to the JVM, which finds a class path other than the one it was made on.
    List<String> entries = new ArrayList<>(List.of(jars.split(File.pathSeparator)));
    Collections.reverse(entries);
    String reordered = String.join(File.pathSeparator, entries);
    DeviceHostArchive other = DeviceHostArchive.of(options, reordered);
    String name = made.getFileName().toString();
    Files.copy(made, made.resolveSibling(other.key() + name.substring(name.lastIndexOf('-'))));
    DeviceHostProcess host = DeviceHostProcess.start(options, "local", 1, why -> { }, true, reordered);
    try {
      assertTrue(arguments(host).stream().anyMatch(a -> a.contains("SharedArchiveFile")), String.valueOf(arguments(host)));
      assertEquals(host.pid(), serve(host).getPid());
    } finally {
      host.stop().get(10, TimeUnit.SECONDS);
    }
    assertFalse(loadedFromTheArchive(dir, host.pid()), "a class path other than the archive's, yet loaded from it");
  }

  /** A training run never touches the GPU, and maps only one pinned segment, whatever the device's options. */
  @Test
  void aTrainingRunTakesTheHostBackendAndOneSegment() {
    DeviceOptions device = new DeviceOptions().setBackend(com.vertxcuda.device.BackendKind.CUDA)
      .setSharedMemorySize(2047L << 20).setSpareDeviceHost(true);
    DeviceOptions training = DeviceHostArchive.trainingOptions(device);
    assertEquals(com.vertxcuda.device.BackendKind.HOST, training.getBackend());
    assertEquals(DeviceHostMain.PINNED_SEGMENT, training.getSharedMemorySize());
    assertEquals(com.vertxcuda.device.BackendKind.CUDA, device.getBackend(), "the device's own options are left as they were");
  }

  @Test
  void offNoArchiveIsMadeOrUsed(@TempDir Path dir) throws Exception {
    DeviceOptions on = options(dir.resolve("cds"), dir);
    Path made = archiveIn(dir.resolve("cds"));
    DeviceOptions off = new DeviceOptions(on).setDeviceHostClassArchive(false);
    assertNull(DeviceHostArchive.of(off, jars));
    // Device-host JVM options that set class-data sharing themselves keep the archive out too.
    assertNull(DeviceHostArchive.of(new DeviceOptions(on).setDeviceHostJvmOptions(List.of("-Xshare:off")), jars));
    DeviceHostProcess host = DeviceHostProcess.start(off, "local", 1, why -> { }, true, jars);
    try {
      assertFalse(arguments(host).stream().anyMatch(a -> a.contains("SharedArchiveFile")), String.valueOf(arguments(host)));
      assertEquals(host.pid(), serve(host).getPid());
      assertNull(host.trainArchive().get(10, TimeUnit.SECONDS));
    } finally {
      host.stop().get(10, TimeUnit.SECONDS);
    }
    assertFalse(loadedFromTheArchive(dir, host.pid()));
    try (Stream<Path> files = Files.list(dir.resolve("cds"))) {
      assertEquals(List.of(made), files.collect(Collectors.toList()), "the archives' folder");
    }
  }

  /** Waits for the device host's HELLO, sends a describe and returns its answer. */
  private static DeviceInfo serve(DeviceHostProcess host) throws Exception {
    BlockingQueue<LinkFrame> frames = new LinkedBlockingQueue<>();
    Link link = host.accept(60_000, f -> frames.add(LinkFrame.decode(f)), (why, byPeer) -> { }, 0);
    try {
      LinkFrame hello = frames.poll(60, TimeUnit.SECONDS);
      assertNotNull(hello, "no HELLO from the device host");
      assertEquals(LinkFrame.Kind.HELLO, hello.kind, String.valueOf(hello.text));
      link.send(LinkFrame.request(7, null, new DescribeRequest(), TimeUnit.SECONDS.toNanos(30), null, false).encode());
      LinkFrame reply = frames.poll(60, TimeUnit.SECONDS);
      assertNotNull(reply, "the device host did not answer");
      assertEquals(LinkFrame.Kind.REPLY, reply.kind, String.valueOf(reply.text));
      return (DeviceInfo) reply.body;
    } finally {
      link.close();
    }
  }

  private static List<String> arguments(DeviceHostProcess host) {
    return List.of(ProcessHandle.of(host.pid()).orElseThrow().info().arguments().orElseThrow());
  }

  // Read once the device host has exited (stop waited for it): the log is complete.
  private static boolean loadedFromTheArchive(Path logs, long pid) throws IOException {
    String log = Files.readString(logs.resolve("load-" + pid + ".log"), StandardCharsets.UTF_8);
    String main = log.lines().filter(l -> l.contains(" " + DeviceHostMain.class.getName() + " source:"))
      .findFirst().orElseThrow(() -> new AssertionError("DeviceHostMain never loaded"));
    return main.contains("shared objects file (top)");
  }

  private static void jar(Path folder, Path jar) throws IOException {
    try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out);
         Stream<Path> files = Files.walk(folder)) {
      for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
        j.putNextEntry(new JarEntry(folder.relativize(f).toString().replace(File.separatorChar, '/')));
        Files.copy(f, j);
        j.closeEntry();
      }
    }
  }
}
