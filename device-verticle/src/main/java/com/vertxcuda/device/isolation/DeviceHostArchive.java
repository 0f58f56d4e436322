package com.vertxcuda.device.isolation;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.message.DescribeRequest;

import java.io.File;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The device hosts' class-data archive (AppCDS: a JDK dynamic archive stacked on the JDK's default
 * one), decided here and nowhere else. Most of a device host's start is loading and linking classes
 * (Vert.x, Jackson, Netty, the toolkit: about 1,700 beyond the JDK's default archive); mapped from an
 * archive they take about a quarter off a start.
 *
 * <p>Never on a start's critical path: a start uses the archive if one is there, and nothing else. It
 * is made by a training run once a first device host is ready: a device host of its own, under
 * {@code nice}, that starts, serves a describe and exits when its link closes, its JVM dumping what
 * it loaded ({@code -XX:ArchiveClassesAtExit}); one training at a time per folder (a file lock,
 * across JVMs), one attempt per archive per JVM.
 *
 * <p>Keyed by the Java runtime (java.home, its version) and the exact class path with each entry's
 * size and time, so a stale archive is never named. Dumped under a temporary name and renamed
 * atomically once the training JVM has exited cleanly, with its CRC-32C in its name, which is checked
 * once per JVM before the first use: the JVM maps an archive's contents unchecked (a corrupt one
 * crashed it), so a corrupt file is deleted instead and costs only the speed. What the JVM itself
 * refuses (a header of other flags or jars) it ignores and loads from the jars ({@code -Xshare:auto}).
 *
 * <p>No archive where a dynamic one cannot work: a JVM without the JDK's default archive (dumping then
 * fails to start the JVM), a class path with a non-empty folder (the JVM refuses to dump one: Maven's
 * target/classes), device-host JVM options that set class-data sharing themselves.
 */
public final class DeviceHostArchive {

  /** What a device host's command gets from here: a wrapper before the JVM, JVM options after it. */
  record Launch(List<String> wrapper, List<String> jvmOptions) {
    static final Launch PLAIN = new Launch(List.of(), List.of());
  }

  private static final System.Logger LOG = System.getLogger(DeviceHostArchive.class.getName());
  /** Archives kept in the folder after a training, the newest ones. */
  private static final int KEPT = 4;
  /** How long a training run may take, from its start to its JVM's exit (it runs at low priority). */
  private static final long TRAINING_TIMEOUT_MS = 120_000;
  /** The key of each class path this JVM has started device hosts on; empty where none can have an archive. */
  private static final Map<String, String> KEYS = new ConcurrentHashMap<>();
  /** Archives (folder and key) this JVM has trained or tried to: one attempt each. */
  private static final Set<String> TRIED = ConcurrentHashMap.newKeySet();
  /** Archives whose CRC this JVM has checked, with the file, size and time they had then. */
  private static final Map<Path, String> CHECKED = new ConcurrentHashMap<>();

  private final Path directory;
  private final String key;
  private final String classPath;

  private DeviceHostArchive(Path directory, String key, String classPath) {
    this.directory = directory;
    this.key = key;
    this.classPath = classPath;
  }

  /**
   * The archive of device hosts started with {@code options} and {@code classPath}; null where there
   * is none to have. On every start: the key is worked out once per class path and JVM (a jar
   * rebuilt under a running application makes the JVM refuse the archive; only speed is lost).
   */
  static DeviceHostArchive of(DeviceOptions options, String classPath) {
    if (!options.isDeviceHostClassArchive() || !System.getProperty("java.vm.info", "").contains("sharing")
      || options.getDeviceHostJvmOptions().stream().anyMatch(o -> o.startsWith("-Xshare")
      || o.contains("SharedArchiveFile") || o.contains("ArchiveClassesAtExit") || o.contains("UseSharedSpaces"))) {
      return null;
    }
    String key = KEYS.computeIfAbsent(classPath, DeviceHostArchive::keyOf);
    if (key.isEmpty()) {
      return null;
    }
    try {
      String folder = options.getDeviceHostClassArchiveDirectory();
      Path directory = folder != null ? Path.of(folder)
        : Path.of(System.getProperty("java.io.tmpdir"), "vertx-cuda-cds-" + uid(Path.of("/proc/self")));
      return new DeviceHostArchive(directory.toAbsolutePath(), key, classPath);
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  // The key of a class path on this JVM; empty where it can have no archive.
  private static String keyOf(String classPath) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      for (String part : List.of(System.getProperty("java.home"), System.getProperty("java.vm.version"), classPath)) {
        digest.update((part + "\n").getBytes(StandardCharsets.UTF_8));
      }
      for (String entry : classPath.split(File.pathSeparator)) {
        String seen = "-";
        if (!entry.isEmpty()) {
          try {
            BasicFileAttributes a = Files.readAttributes(Path.of(entry), BasicFileAttributes.class);
            if (a.isDirectory() && nonEmpty(Path.of(entry))) {
              return "";
            }
            seen = a.size() + "@" + a.lastModifiedTime().toMillis();
          } catch (NoSuchFileException e) {
            // a missing entry is part of the class path as it is
          }
        }
        digest.update((seen + "\n").getBytes(StandardCharsets.UTF_8));
      }
      return "device-host-" + HexFormat.of().formatHex(digest.digest(), 0, 12);
    } catch (IOException | GeneralSecurityException | RuntimeException e) {
      return "";
    }
  }

  /** What the names of this key's archives start with: {@code <key>-<CRC-32C>.jsa}. */
  String key() {
    return key;
  }

  /**
   * The wrapper and JVM options of a device host's start: the archive if there is an intact one. A
   * folder listing; the first time this JVM sees an archive, its CRC too (milliseconds: small against
   * a process start), as the rest of a start, on the starting thread.
   */
  Launch serving() {
    Path archive = intact();
    return archive == null ? Launch.PLAIN : new Launch(List.of(), List.of("-XX:SharedArchiveFile=" + archive));
  }

  /**
   * Makes the archive in the background unless there is one: on a daemon thread of the lowest
   * priority, so the caller (an event loop, a link's reader) never waits for a file. Completes with
   * the archive, or null where none was made or this JVM has tried already.
   */
  CompletableFuture<Path> trainInBackground(DeviceOptions options, String node) {
    CompletableFuture<Path> done = new CompletableFuture<>();
    if (!TRIED.add(directory.resolve(key).toString())) {
      done.complete(null);
      return done;
    }
    Thread t = new Thread(() -> {
      try {
        done.complete(train(options, node));
      } catch (IOException | RuntimeException | ExecutionException | TimeoutException e) {
        LOG.log(System.Logger.Level.INFO, "no class-data archive for device hosts: " + e);
        done.complete(null);
      } catch (InterruptedException e) {
        done.complete(null);
      }
    }, "vertx-cuda-class-archive-training");
    t.setDaemon(true);
    t.setPriority(Thread.MIN_PRIORITY);
    t.start();
    return done;
  }

  /** Makes the archive now, blocking, unless it is there or another JVM is making it; returns it or null. */
  Path train(DeviceOptions options, String node)
    throws IOException, InterruptedException, ExecutionException, TimeoutException {
    Path archive = intact();
    if (archive != null) {
      return archive;
    }
    try {
      Files.createDirectories(directory.getParent());
      Files.createDirectory(directory, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
    } catch (FileAlreadyExistsException e) {
      // made before: checked next
    }
    if (!privateDirectory()) {
      return null;
    }
    try (FileChannel lock = FileChannel.open(directory.resolve("training.lock"), StandardOpenOption.CREATE,
      StandardOpenOption.WRITE); FileLock held = lock.tryLock()) {
      if (held == null || (archive = intact()) != null) {
        return archive;
      }
      Path dump = directory.resolve(key + "." + ProcessHandle.current().pid() + "-" + DeviceHostProcess.randomHex(8)
        + ".tmp");
      try {
        if (!trainingRun(options, node, dump)) {
          return null;
        }
        archive = directory.resolve(key + "-" + crc(dump) + ".jsa");
        Files.move(dump, archive, StandardCopyOption.ATOMIC_MOVE);
        prune();
        return archive;
      } finally {
        Files.deleteIfExists(dump);
      }
    }
  }

  /**
   * A training run's options: the host backend, whatever the device's (the classes a start loads
   * are the same but for the backend's few, and a training run must never take GPU memory — a second
   * context, beside a device host just started, could fail its first allocations), and one pinned
   * segment's region, all a start touches.
   */
  static DeviceOptions trainingOptions(DeviceOptions options) {
    return new DeviceOptions(options).setBackend(BackendKind.HOST)
      .setSharedMemorySize(Math.min(options.getSharedMemorySize(), DeviceHostMain.PINNED_SEGMENT));
  }

  // A device host that starts, serves a describe and exits when its link closes, dumping into `dump`.
  private boolean trainingRun(DeviceOptions options, String node, Path dump)
    throws IOException, InterruptedException, ExecutionException, TimeoutException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TRAINING_TIMEOUT_MS);
    DeviceOptions training = trainingOptions(options);
    // Its JVM's notes on classes it leaves out of the archive (JFR's, for one) would only alarm a reader.
    DeviceHostProcess host = DeviceHostProcess.start(training, node, 0, why -> { }, true, classPath, null,
      new Launch(nice(), List.of("-XX:ArchiveClassesAtExit=" + dump, "-Xlog:cds=off")));
    try {
      BlockingQueue<LinkFrame> frames = new LinkedBlockingQueue<>();
      Link link = host.accept(TRAINING_TIMEOUT_MS, f -> frames.add(LinkFrame.decode(f)), (why, byPeer) -> { }, 0);
      try {
        LinkFrame hello = frames.poll(left(deadline), TimeUnit.NANOSECONDS);
        if (hello == null || hello.kind != LinkFrame.Kind.HELLO) {
          return false;
        }
        link.send(LinkFrame.request(1, null, new DescribeRequest(), TimeUnit.SECONDS.toNanos(30), null, false).encode());
        LinkFrame reply = frames.poll(left(deadline), TimeUnit.NANOSECONDS);
        if (reply == null || reply.kind != LinkFrame.Kind.REPLY) {
          return false;
        }
      } finally {
        // The device host exits when its link closes; its JVM dumps the classes it loaded as it goes.
        link.close();
      }
      Process p = host.onExit().get(left(deadline), TimeUnit.NANOSECONDS);
      return p.exitValue() == 0 && Files.isRegularFile(dump, LinkOption.NOFOLLOW_LINKS) && Files.size(dump) > 0;
    } finally {
      host.stop();
    }
  }

  private static long left(long deadline) {
    return Math.max(0, deadline - System.nanoTime());
  }

  // The archive of this key, if there is one whose contents match the CRC in its name; deletes one that does not.
  private Path intact() {
    try {
      if (!privateDirectory()) {
        return null;
      }
      try (DirectoryStream<Path> archives = Files.newDirectoryStream(directory, key + "-*.jsa")) {
        for (Path archive : archives) {
          BasicFileAttributes a = Files.readAttributes(archive, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
          String seen = a.fileKey() + "/" + a.size() + "/" + a.lastModifiedTime();
          if (a.isRegularFile() && (seen.equals(CHECKED.get(archive)) || matchesItsName(archive))) {
            CHECKED.put(archive, seen);
            return archive;
          }
          LOG.log(System.Logger.Level.WARNING, "deleting a corrupt class-data archive: " + archive);
          Files.deleteIfExists(archive);
        }
      }
    } catch (IOException | RuntimeException e) {
      // no archive to use: the device host loads its classes from the jars
    }
    return null;
  }

  private static boolean matchesItsName(Path archive) throws IOException {
    String name = archive.getFileName().toString();
    return name.substring(name.lastIndexOf('-') + 1, name.length() - ".jsa".length()).equals(crc(archive));
  }

  private static String crc(Path file) throws IOException {
    CRC32C crc = new CRC32C();
    ByteBuffer b = ByteBuffer.allocateDirect(1 << 20);
    try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
      while (in.read(b.clear()) >= 0) {
        crc.update(b.flip());
      }
    }
    return String.format("%08x", crc.getValue());
  }

  // The folder is used only if it is a real folder of this user's that no one else can enter: an
  // archive is code the device host runs.
  private boolean privateDirectory() throws IOException {
    if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    PosixFileAttributes a = Files.readAttributes(directory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    return a.permissions().equals(PosixFilePermissions.fromString("rwx------"))
      && uid(directory) == uid(Path.of("/proc/self"));
  }

  private static int uid(Path path) throws IOException {
    return (Integer) Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
  }

  // Keeps the newest archives; removes dumps left by training runs whose JVM ended with them.
  private void prune() throws IOException {
    List<Path> archives = new ArrayList<>();
    long hourAgo = System.currentTimeMillis() - TimeUnit.HOURS.toMillis(1);
    try (DirectoryStream<Path> files = Files.newDirectoryStream(directory, "device-host-*")) {
      for (Path f : files) {
        if (f.toString().endsWith(".jsa")) {
          archives.add(f);
        } else if (f.toString().endsWith(".tmp") && Files.getLastModifiedTime(f).toMillis() < hourAgo) {
          Files.deleteIfExists(f);
        }
      }
    }
    archives.sort(Comparator.comparing((Path f) -> f.toFile().lastModified()).reversed());
    for (Path old : archives.subList(Math.min(KEPT, archives.size()), archives.size())) {
      Files.deleteIfExists(old);
      CHECKED.remove(old);
    }
  }

  private static boolean nonEmpty(Path folder) throws IOException {
    try (Stream<Path> entries = Files.list(folder)) {
      return entries.findAny().isPresent();
    }
  }

  // The training run at low CPU priority where there is a nice to start it with.
  private static List<String> nice() {
    for (String nice : List.of("/usr/bin/nice", "/bin/nice")) {
      if (Files.isExecutable(Path.of(nice))) {
        return List.of(nice, "-n", "19");
      }
    }
    return List.of();
  }

  /**
   * Makes the archive of the device hosts that {@code options} start, now and blocking (a device
   * host's start and exit: seconds), unless it is there already or another JVM is making it; returns
   * it, or null where there is none. A device makes it by itself, in the background, once its first
   * device host is ready; a process that wants no training run beside its own work (a benchmark, a
   * test suite) or its first recoveries fast makes it ahead.
   */
  public static Path make(DeviceOptions options) throws IOException, InterruptedException {
    DeviceHostArchive archive = of(options, DeviceHostClassPath.of(options));
    try {
      return archive == null ? null : archive.train(options, "local");
    } catch (ExecutionException | TimeoutException e) {
      LOG.log(System.Logger.Level.INFO, "no class-data archive for device hosts: " + e);
      return null;
    }
  }

  /**
   * Makes the archive of this JVM's class path now, with default options (the GPU bundle's run.sh
   * does before its suites, so no training runs beside them), and prints where it is.
   */
  public static void main(String[] args) throws Exception {
    Path made = make(new DeviceOptions().setIsolation(Isolation.PROCESS));
    System.out.println(made != null ? "device-host class-data archive: " + made
      : "no device-host class-data archive for this JVM and class path");
  }
}
