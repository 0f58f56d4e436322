package com.vertxcuda.device.isolation;

import com.vertxcuda.device.DeviceOptions;
import io.vertx.core.json.JsonObject;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One device-host process and what it shares with its parent: the shared region, the listening
 * socket (a Unix domain socket in a directory only this user can enter, 127.0.0.1 TCP only where
 * Unix sockets are missing), and a secret the child proves on connecting, so no other local process
 * can pose as the device host. The secret, the link's address, the region's path and the options
 * reach the child on its standard input, never on its command line or in its environment.
 */
final class DeviceHostProcess {

  private static final SecureRandom RANDOM = new SecureRandom();

  private final Process process;
  private final SharedRegion region;
  private final ServerSocketChannel server;
  private final Path directory;
  private final Path socket;
  private final String address;
  private final String secret;
  /** The class-data archive this device host's class path and options have, or null. */
  private final DeviceHostArchive archive;
  private final DeviceOptions options;
  private final String node;

  private DeviceHostProcess(Process process, SharedRegion region, ServerSocketChannel server, Path directory,
                            Path socket, String address, String secret, DeviceHostArchive archive,
                            DeviceOptions options, String node) {
    this.archive = archive;
    this.options = options;
    this.node = node;
    this.address = address;
    this.process = process;
    this.region = region;
    this.server = server;
    this.directory = directory;
    this.socket = socket;
    this.secret = secret;
  }

  /** Starts the child; {@code exited} hears (once, on a JDK thread) why it ended. */
  static DeviceHostProcess start(DeviceOptions options, String node, long generation, Consumer<String> exited)
    throws IOException {
    return start(options, node, generation, exited, true);
  }

  /** As {@link #start}; {@code unixSocket} false takes the loopback TCP fallback (for tests). */
  static DeviceHostProcess start(DeviceOptions options, String node, long generation, Consumer<String> exited,
                                 boolean unixSocket) throws IOException {
    return start(options, node, generation, exited, unixSocket, DeviceHostClassPath.of(options));
  }

  /** As {@link #start}, on {@code classPath}, from its class-data archive where there is one. */
  static DeviceHostProcess start(DeviceOptions options, String node, long generation, Consumer<String> exited,
                                 boolean unixSocket, String classPath) throws IOException {
    DeviceHostArchive archive = DeviceHostArchive.of(options, classPath);
    return start(options, node, generation, exited, unixSocket, classPath, archive,
      archive == null ? DeviceHostArchive.Launch.PLAIN : archive.serving());
  }

  /**
   * As {@link #start}, on {@code classPath}, started as {@code launch} says (a training run starts
   * so); {@code archive} (or null) is the class-data archive {@link #trainArchive} makes.
   */
  static DeviceHostProcess start(DeviceOptions options, String node, long generation, Consumer<String> exited,
                                 boolean unixSocket, String classPath, DeviceHostArchive archive,
                                 DeviceHostArchive.Launch launch) throws IOException {
    Path directory = privateDirectory();
    SharedRegion region;
    try {
      region = SharedRegion.create(directory.resolve("region-" + randomHex(16)), options.getSharedMemorySize());
    } catch (RuntimeException e) {
      Files.deleteIfExists(directory);
      throw e;
    }
    Path socket = null;
    ServerSocketChannel server;
    String address;
    try {
      if (!unixSocket) {
        throw new UnsupportedOperationException("loopback TCP asked for");
      }
      socket = directory.resolve("link.sock");
      server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
      server.bind(UnixDomainSocketAddress.of(socket));
      // Already unreachable to others (its directory is rwx------); owner-only itself as well.
      if (posix(socket)) {
        Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
      }
      address = "unix:" + socket;
    } catch (IOException | UnsupportedOperationException e) {
      // No Unix domain sockets here: loopback TCP; the secret still keeps other processes out.
      if (socket != null) {
        Files.deleteIfExists(socket);
      }
      socket = null;
      server = ServerSocketChannel.open();
      server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      address = "tcp:" + ((InetSocketAddress) server.getLocalAddress()).getPort();
    }
    String secret = randomHex(32);
    Process process = null;
    try {
      process = spawn(options, classPath, launch);
      // Everything the device host must know goes through its standard input, a pipe only the two
      // processes hold: nothing of it on its command line or in its environment, where any local
      // user can read it (ps, /proc/<pid>/cmdline).
      JsonObject launchJson = new JsonObject().put("secret", secret).put("link", address)
        .put("region", region.path().toString())
        .put("config", options.toJson().put("node", node).put("generation", generation));
      OutputStream in = process.getOutputStream();
      in.write((launchJson.encode() + "\n").getBytes(StandardCharsets.UTF_8));
      in.flush();
      // While the device host's JVM starts (it writes nothing to the region before it is asked to).
      region.reserve(options.isSharedMemoryReserved());
    } catch (IOException e) {
      if (process != null) {
        process.destroyForcibly();
      }
      server.close();
      region.unlink();
      if (socket != null) {
        Files.deleteIfExists(socket);
      }
      Files.deleteIfExists(directory);
      throw e;
    }
    DeviceHostProcess host = new DeviceHostProcess(process, region, server, directory, socket, address, secret,
      archive, options, node);
    process.onExit().thenAccept(p -> {
      // Here, not on a Vert.x context: the names must not outlive a device host that never mapped them.
      host.unlinkNames();
      exited.accept(host.exitReason());
    });
    return host;
  }

  /**
   * A fresh directory only this user can enter ({@code rwx------} from its creation), under
   * /dev/shm where there is one (java.io.tmpdir otherwise), named with 128 random bits: the region
   * and the socket live in it, so no other user can open, replace or plant anything by their names.
   * Created exclusively: a name taken by anything, a link included, fails instead of being reused.
   */
  static Path privateDirectory() throws IOException {
    String name = "vertx-cuda-" + ProcessHandle.current().pid() + "-" + randomHex(16);
    Path shm = Path.of("/dev/shm");
    if (Files.isDirectory(shm)) {
      try {
        return Files.createDirectory(shm.resolve(name), OWNER_ONLY);
      } catch (IOException e) {
        // /dev/shm refuses us: the temporary directory will do
      }
    }
    return Files.createDirectory(Path.of(System.getProperty("java.io.tmpdir")).resolve(name), OWNER_ONLY);
  }

  private static final FileAttribute<Set<PosixFilePermission>> OWNER_ONLY =
    PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

  private static boolean posix(Path path) {
    return path.getFileSystem().supportedFileAttributeViews().contains("posix");
  }

  static String randomHex(int bytes) {
    byte[] b = new byte[bytes];
    RANDOM.nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  private static Process spawn(DeviceOptions options, String classPath, DeviceHostArchive.Launch launch)
    throws IOException {
    List<String> cmd = new ArrayList<>(launch.wrapper());
    cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(options.getDeviceHostJvmOptions());
    cmd.addAll(launch.jvmOptions());
    for (String p : List.of("java.library.path", "jna.library.path")) {
      if (System.getProperty(p) != null) {
        cmd.add("-D" + p + "=" + System.getProperty(p));
      }
    }
    cmd.add(DeviceHostMain.class.getName());
    // The class path travels in CLASSPATH, not on the command line: a long one (the GPU bundle's
    // dozens of jars) would push the command line past a page, where the JDK stops reporting it
    // (ProcessHandle.Info) and tools like ps cut it off.
    ProcessBuilder builder = new ProcessBuilder(cmd).redirectErrorStream(true);
    builder.environment().put("CLASSPATH", classPath);
    Process p = builder.start();
    // The device host's output joins this process's standard error, line by line, with its pid.
    Thread echo = new Thread(() -> {
      try (java.io.BufferedReader r = new java.io.BufferedReader(
        new java.io.InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = r.readLine(); line != null; line = r.readLine()) {
          System.err.println("[device host " + p.pid() + "] " + line);
        }
      } catch (IOException ignored) {
        // the device host is gone
      }
    }, "vertx-cuda-device-host-output-" + p.pid());
    echo.setDaemon(true);
    echo.start();
    return p;
  }

  /** A connection that has not proved the secret within this many ms of connecting is cut off. */
  static final long PROOF_TIMEOUT_MS = 10_000;
  /** Connections waiting to prove the secret at once; one more closes the one that has waited longest. */
  static final int MAX_UNPROVEN = 64;

  /**
   * Waits (blocking) for the device host to connect and prove the secret, until {@code timeoutMillis};
   * returns the started link. Every connection is read as its bytes come, side by side with the
   * others, so connections that say nothing (each cut off after {@link #PROOF_TIMEOUT_MS}) hold the
   * real device host up not at all, however many come first.
   */
  Link accept(long timeoutMillis, Consumer<ByteBuffer> frames, Link.Closed closed, long spinNanos)
    throws IOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    SocketChannel proven = null;
    // Oldest first: the one cut off when too many wait.
    Map<SocketChannel, Proof> unproven = new LinkedHashMap<>();
    try (Selector selector = Selector.open()) {
      accepting = selector;
      server.configureBlocking(false);
      server.register(selector, SelectionKey.OP_ACCEPT);
      while (proven == null && server.isOpen()) {
        long now = System.nanoTime();
        if (now - deadline >= 0) {
          break;
        }
        long next = deadline;
        for (Iterator<Proof> it = unproven.values().iterator(); it.hasNext(); ) {
          Proof p = it.next();
          if (now - p.until >= 0) {
            p.channel.close();
            it.remove();
          } else if (p.until - next < 0) {
            next = p.until;
          }
        }
        selector.select(Math.max(1, TimeUnit.NANOSECONDS.toMillis(next - now)));
        for (Iterator<SelectionKey> keys = selector.selectedKeys().iterator(); keys.hasNext() && proven == null; ) {
          SelectionKey key = keys.next();
          keys.remove();
          if (!key.isValid()) {
            continue;
          }
          if (key.isAcceptable()) {
            for (SocketChannel c = server.accept(); c != null; c = server.accept()) {
              if (unproven.size() >= MAX_UNPROVEN) {
                Iterator<Proof> oldest = unproven.values().iterator();
                oldest.next().channel.close();
                oldest.remove();
              }
              c.configureBlocking(false);
              c.register(selector, SelectionKey.OP_READ);
              unproven.put(c, new Proof(c, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PROOF_TIMEOUT_MS)));
            }
          } else if (key.isReadable()) {
            Proof p = unproven.get((SocketChannel) key.channel());
            Boolean ok = p == null ? null : p.read(secret);
            if (ok != null) {
              unproven.remove(p.channel);
              if (ok) {
                key.cancel();
                proven = p.channel;
              } else {
                p.channel.close();
              }
            }
          }
        }
      }
    } catch (java.nio.channels.ClosedChannelException e) {
      // a stop closed the socket
    } finally {
      accepting = null;
      for (Proof p : unproven.values()) {
        p.channel.close();
      }
    }
    if (proven == null) {
      throw new IOException(server.isOpen() ? "no connection proved the secret within " + timeoutMillis + " ms"
        : "the device host's socket was closed");
    }
    server.close();
    // The accepting selector is closed: the channel is free to join the link's own.
    Link link = new Link(proven, region.toNode(), region.toDeviceHost(), "vertx-cuda-link-" + process.pid(),
      spinNanos, frames, closed);
    link.start();
    return link;
  }

  /** The selector {@link #accept} waits in, while it does (a stop wakes it). */
  private volatile Selector accepting;

  /** One connection's first frame as it comes: it must be AUTH carrying the secret. */
  private static final class Proof {
    final SocketChannel channel;
    final long until;
    final ByteBuffer length = ByteBuffer.allocate(4);
    ByteBuffer body;

    Proof(SocketChannel channel, long until) {
      this.channel = channel;
      this.until = until;
    }

    /**
     * Reads what has come (never past the frame: what follows it is the link's); null while the
     * frame is not whole, then whether it proves {@code secret}.
     */
    Boolean read(String secret) {
      try {
        if (body == null) {
          if (channel.read(length) < 0) {
            return false;
          }
          if (length.hasRemaining()) {
            return null;
          }
          int n = length.flip().getInt();
          if (n <= 0 || n > 4096) {
            return false;
          }
          body = ByteBuffer.allocate(n);
        }
        if (channel.read(body) < 0) {
          return false;
        }
        if (body.hasRemaining()) {
          return null;
        }
        LinkFrame frame = LinkFrame.decode(body.flip());
        return frame.kind == LinkFrame.Kind.AUTH && java.security.MessageDigest.isEqual(
          secret.getBytes(StandardCharsets.US_ASCII), String.valueOf(frame.text).getBytes(StandardCharsets.US_ASCII));
      } catch (IOException | RuntimeException e) {
        return false;
      }
    }
  }

  /**
   * Once this device host is ready: makes its class-data archive in the background if there is none
   * yet ({@link DeviceHostArchive}), so later starts on this class path are faster. Completes with
   * the archive, or null where there is none.
   */
  CompletableFuture<Path> trainArchive() {
    return archive == null ? CompletableFuture.completedFuture(null) : archive.trainInBackground(options, node);
  }

  /** Where the device host connects: {@code unix:<path>} or {@code tcp:<port>}. */
  String address() {
    return address;
  }

  /** The secret the device host proves (tests check it appears nowhere else). */
  String secret() {
    return secret;
  }

  /** The private directory of the region and the socket. */
  Path directory() {
    return directory;
  }

  SharedRegion region() {
    return region;
  }

  long pid() {
    return process.pid();
  }

  CompletableFuture<Process> onExit() {
    return process.onExit();
  }

  /** Removes the region's and the socket's names; both processes keep what they opened. */
  void unlinkNames() {
    region.unlink();
    try {
      if (socket != null) {
        Files.deleteIfExists(socket);
      }
      if (directory != null) {
        Files.deleteIfExists(directory);
      }
    } catch (IOException ignored) {
      // already gone
    }
  }

  /** Ends the process (politely, then by force) and removes the names. */
  CompletableFuture<Void> stop() {
    try {
      server.close();
    } catch (IOException ignored) {
      // closing anyway
    }
    Selector waiting = accepting;
    if (waiting != null) {
      waiting.wakeup();
    }
    CompletableFuture<Void> done = new CompletableFuture<>();
    if (process.isAlive()) {
      process.destroy();
      // Past 2 s, by force; waited for without blocking a thread (a join here held the JDK's one
      // delay thread, and every timeout in the JVM, until a GPU process was reaped).
      process.onExit().orTimeout(2, TimeUnit.SECONDS)
        .handle((p, t) -> t == null ? CompletableFuture.completedFuture(p) : process.destroyForcibly().onExit())
        .thenCompose(f -> f)
        .whenComplete((p, t) -> {
          unlinkNames();
          done.complete(null);
        });
    } else {
      unlinkNames();
      done.complete(null);
    }
    return done;
  }

  /** The exit code or signal of the ended device host, in words. */
  String exitReason() {
    return reason(process.exitValue());
  }

  /**
   * Why the device host ends, as soon as Linux knows: its exit reason once Java has reaped it, else
   * the exit status the kernel gave it when its exit began ({@link #exitingCode}); null while it is
   * not ending, or where that cannot be read. A device host killed while it holds a CUDA context stays
   * in its exit while the driver tears the context down, and its link closes before Java learns the
   * status; the loss is reported on that close, not after the teardown.
   */
  String endingReason() {
    if (!process.isAlive()) {
      return exitReason();
    }
    int code = exitingCode(process.pid());
    return code < 0 ? null : reason(code);
  }

  /** The PF_EXITING bit of a task's flags (include/linux/sched.h): set as its exit begins. */
  static final long PF_EXITING = 0x4;

  /**
   * Whether {@code /proc} shows this JVM's own PID namespace ({@code /proc/self} names this process's
   * pid): where it is another namespace's (a container that kept its host's {@code /proc}), a pid of
   * ours names some other process there, and nothing is read of it.
   */
  private static final boolean PROC_IS_OURS = procIsOurs();

  private static boolean procIsOurs() {
    try {
      return Path.of("/proc/self").toRealPath().getFileName().toString()
        .equals(Long.toString(ProcessHandle.current().pid()));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /**
   * The exit code of process {@code pid} once it has begun to exit, as {@link Process#exitValue} would
   * give it (128 + the signal that killed it): read from {@code /proc/<pid>/stat}, whose {@code flags}
   * (field 9) carry {@code PF_EXITING} from the first step of the exit and whose {@code exit_code}
   * (field 52, in {@code waitpid}'s form) is set before the process's memory and files are released.
   * -1 while it is not exiting, when it exits with 0 (not told apart from the moment before the code
   * is written), where there is no such file, and where {@code /proc} does not report a task's flags
   * and exit code (gVisor's shows zeros): the tier then waits for Java's exit status.
   */
  static int exitingCode(long pid) {
    String stat = procStat(pid);
    return stat == null ? -1 : exitingCode(stat);
  }

  /** The text of {@code /proc/<pid>/stat}, or null where there is none or {@code /proc} is not ours. */
  static String procStat(long pid) {
    if (!PROC_IS_OURS) {
      return null;
    }
    try {
      return Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** {@link #exitingCode(long)} of the text of a {@code /proc/<pid>/stat}. */
  static int exitingCode(String stat) {
    String[] f = statFields(stat);
    if (f == null || f.length < 50) {
      return -1;
    }
    try {
      long flags = Long.parseLong(f[9 - 3]);
      int status = Integer.parseInt(f[52 - 3]);
      if ((flags & PF_EXITING) == 0 || status == 0) {
        return -1;
      }
      int signal = status & 0x7f;
      return signal != 0 ? 128 + signal : (status >> 8) & 0xff;
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * The fields of a {@code /proc/<pid>/stat} from the third (the state) on, field n at index n - 3; null
   * where the text has no command name. The command name (field 2) is in parentheses and may hold
   * spaces or parentheses: the fields from 3 on follow the last ')'.
   */
  static String[] statFields(String stat) {
    int close = stat.lastIndexOf(')');
    return close < 0 ? null : stat.substring(close + 1).trim().split(" +");
  }

  /** An exit code in words (a code above 128: killed by the signal 128 below it, as a shell reports it). */
  static String reason(int code) {
    if (code == DeviceHostMain.EXIT_POISONED) {
      return "the device host exited after a sticky error (exit code " + code + ")";
    }
    if (code > 128) {
      int signal = code - 128;
      String name = signal == 9 ? "SIGKILL" : signal == 15 ? "SIGTERM" : signal == 11 ? "SIGSEGV"
        : signal == 6 ? "SIGABRT" : "signal " + signal;
      return "the device host was killed by " + name + " (exit code " + code + ")";
    }
    return "the device host exited with code " + code;
  }
}
