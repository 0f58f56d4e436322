package com.vertxcuda.device;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What the device-tier tests run against. The backend comes from {@code -Dvertxcuda.test.backend}
 * (host by default; the GPU bundle sets cuda) and the isolation from
 * {@code -Dvertxcuda.test.isolation} (in-process by default), so the same classes run everywhere.
 */
public final class TestDevices {

  private TestDevices() {
  }

  public static BackendKind backend() {
    return BackendKind.valueOf(System.getProperty("vertxcuda.test.backend", "host").toUpperCase());
  }

  public static Isolation isolation() {
    return Isolation.valueOf(System.getProperty("vertxcuda.test.isolation", "in_process").toUpperCase().replace('-', '_'));
  }

  /**
   * Whether a poisoned context can be rebuilt in this JVM: always on the host backend and in process
   * isolation; in-process on cuda a sticky error ends the process's use of CUDA (measured), so the
   * device goes LOST instead, which KernelGpuTest#faultDrillInProcess checks in a JVM of its own.
   */
  public static final String POISON_ENDS_CUDA = "in-process on cuda a sticky error ends the process's CUDA: "
    + "KernelGpuTest#faultDrillInProcess covers that, in a JVM of its own";

  public static boolean poisonRebuilds() {
    return backend() == BackendKind.HOST || isolation() == Isolation.PROCESS;
  }

  /**
   * JVM options of the device hosts the tests start, from {@code -Dvertxcuda.test.deviceHostJvmOptions}
   * (space-separated; none when unset). The build's suite starts a few hundred short-lived device
   * hosts and passes options for a quick start (C1 only, serial GC); the GPU bundle passes none, so
   * its device hosts run as an application's would.
   */
  public static List<String> deviceHostJvmOptions() {
    String set = System.getProperty("vertxcuda.test.deviceHostJvmOptions", "").trim();
    return set.isEmpty() ? List.of() : List.of(set.split("\\s+"));
  }

  private static String deviceHostClassPath;

  /**
   * The device hosts' class path: the test JVM's, with each folder on it (Maven's target/classes
   * and target/test-classes) packed into a jar beside it ({@code classes.device-host.jar}), so that
   * the suite's few hundred device hosts start from a class-data archive, which the JVM makes for a
   * class path of jars only. A jar is made again only when a file of its folder is newer; the test
   * JVMs of one build make it under a lock, so they share one jar and so one archive. Null (this
   * JVM's class path as it is) where it holds no folder, as in the GPU bundle.
   */
  public static synchronized String deviceHostClassPath() {
    if (deviceHostClassPath == null) {
      // Surefire runs the tests from a manifest-only jar and names the real class path here.
      String jvm = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path", ""));
      List<String> entries = new ArrayList<>();
      boolean packed = false;
      for (String entry : jvm.split(java.io.File.pathSeparator)) {
        Path path = Path.of(entry);
        if (!entry.isEmpty() && Files.isDirectory(path)) {
          entries.add(jarOf(path).toString());
          packed = true;
        } else if (!entry.isEmpty()) {
          entries.add(entry);
        }
      }
      deviceHostClassPath = packed ? String.join(java.io.File.pathSeparator, entries) : "";
    }
    return deviceHostClassPath.isEmpty() ? null : deviceHostClassPath;
  }

  // The folder's jar beside it, made (under a lock shared by the build's test JVMs) unless it is newer
  // than everything in the folder.
  private static Path jarOf(Path folder) {
    Path jar = folder.resolveSibling(folder.getFileName() + ".device-host.jar");
    try (FileChannel lockFile = FileChannel.open(folder.resolveSibling("device-host-jars.lock"),
      StandardOpenOption.CREATE, StandardOpenOption.WRITE); FileLock lock = lockFile.lock()) {
      List<Path> files;
      try (Stream<Path> walk = Files.walk(folder)) {
        files = walk.sorted().collect(Collectors.toList());
      }
      long newest = 0;
      for (Path f : files) {
        newest = Math.max(newest, Files.getLastModifiedTime(f).toMillis());
      }
      if (Files.isRegularFile(jar) && Files.getLastModifiedTime(jar).toMillis() > newest) {
        return jar;
      }
      Path made = Files.createTempFile(folder.getParent(), "device-host", ".jar.tmp");
      try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(made))) {
        for (Path f : files) {
          if (Files.isRegularFile(f)) {
            out.putNextEntry(new JarEntry(folder.relativize(f).toString().replace(java.io.File.separatorChar, '/')));
            Files.copy(f, out);
            out.closeEntry();
          }
        }
      }
      Files.move(made, jar, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return jar;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot pack " + folder + " for the device hosts", e);
    }
  }

  private static boolean archiveMade;

  /**
   * Makes the device hosts' class-data archive before this JVM's first device, once: a training run
   * made in the background instead would be a device host beside the tests' own, which tests that
   * count device hosts or their files would see.
   */
  private static synchronized void archiveAhead(DeviceOptions options) {
    if (!archiveMade) {
      archiveMade = true;
      try {
        com.vertxcuda.device.isolation.DeviceHostArchive.make(new DeviceOptions(options).setIsolation(Isolation.PROCESS));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  public static DeviceOptions options() {
    DeviceOptions options = new DeviceOptions().setBackend(backend()).setIsolation(isolation())
      .setDeviceHostJvmOptions(new ArrayList<>(deviceHostJvmOptions()))
      .setDeviceHostClassPath(deviceHostClassPath())
      .setFaultInjection(true).setHeartbeatInterval(500).setHeartbeatTimeout(5_000)
      // One device host per device keeps the suite light; IsolationTest covers the spare.
      .setSpareDeviceHost(false);
    archiveAhead(options);
    return options;
  }

  /**
   * Sends a fault request to {@code address} the way the typed clients send (so it keeps its order
   * among their requests); failures come back typed.
   */
  public static Future<Object> fault(Vertx vertx, String address, com.vertxcuda.message.FaultRequest.Kind kind) {
    return new com.vertxcuda.internal.RequestSender(vertx, address, 30_000)
      .request(new com.vertxcuda.message.FaultRequest(kind));
  }

  public static Future<String> deploy(Vertx vertx, DeviceOptions options) {
    return vertx.deployVerticle(new DeviceVerticle(options));
  }

  /** Little-endian F32 bytes. */
  public static Buffer floats(float... values) {
    Buffer b = Buffer.buffer(values.length * 4);
    for (float v : values) {
      b.appendFloatLE(v);
    }
    return b;
  }

  public static float[] floats(Buffer b) {
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }
}
