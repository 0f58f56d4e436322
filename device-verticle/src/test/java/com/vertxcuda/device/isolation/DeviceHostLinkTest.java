package com.vertxcuda.device.isolation;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceInfo;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link between a device verticle and its device host: only a peer that proves the secret is
 * ever sent a frame, over the Unix domain socket (owner-only, in an owner-only directory) as over
 * the loopback TCP fallback; peers that connect first without it do not hold the device host out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("runs-once")
class DeviceHostLinkTest {

  static DeviceOptions options() {
    return TestDevices.options().setIsolation(Isolation.PROCESS).setSharedMemorySize(1 << 20);
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void peersWithoutTheSecretGetNothingAndTheDeviceHostStillServes(boolean unixSocket) throws Exception {
    DeviceHostProcess host = DeviceHostProcess.start(options(), "local", 1, why -> { }, unixSocket);
    try {
      String address = host.address();
      if (unixSocket) {
        assertTrue(address.startsWith("unix:"), address);
        Path socket = Path.of(address.substring(5));
        assertEquals("rw-------", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(socket, LinkOption.NOFOLLOW_LINKS)), "the socket");
        assertEquals("rwx------", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(socket.getParent(), LinkOption.NOFOLLOW_LINKS)), "the socket's directory");
      } else {
        assertTrue(address.startsWith("tcp:"), address);
      }
      // Both connect before the device host can (a JVM takes longer to start): one says nothing,
      // one sends an AUTH frame with a wrong secret and then what would be a request.
      SocketChannel silent = connect(address);
      SocketChannel wrong = connect(address);
      wrong.write(LinkFrame.notice(LinkFrame.Kind.AUTH, 1, 0, "00".repeat(32)).encode());
      wrong.write(LinkFrame.request(2, null, new DescribeRequest(), TimeUnit.SECONDS.toNanos(10), null, false).encode());

      BlockingQueue<LinkFrame> frames = new LinkedBlockingQueue<>();
      Link link = host.accept(30_000, f -> frames.add(LinkFrame.decode(f)), (why, byPeer) -> { }, 0);
      try {
        LinkFrame hello = frames.poll(30, TimeUnit.SECONDS);
        assertNotNull(hello, "no HELLO from the device host");
        assertEquals(LinkFrame.Kind.HELLO, hello.kind, String.valueOf(hello.text));
        link.send(LinkFrame.request(7, null, new DescribeRequest(), TimeUnit.SECONDS.toNanos(10), null, false).encode());
        LinkFrame reply = frames.poll(30, TimeUnit.SECONDS);
        assertNotNull(reply, "the device host did not answer");
        assertEquals(LinkFrame.Kind.REPLY, reply.kind, String.valueOf(reply.text));
        assertEquals(7, reply.id);
        assertEquals(host.pid(), ((DeviceInfo) reply.body).getPid());

        assertEquals(0, bytesUntilClosed(silent), "bytes sent to a peer that said nothing");
        assertEquals(0, bytesUntilClosed(wrong), "bytes sent to a peer with a wrong secret");
      } finally {
        link.close();
      }
    } finally {
      host.stop().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Thirty connections that never send the secret come before the device host (on the TCP fallback
   * any local user can connect): each is cut off on its own, side by side with the rest, and the
   * device host is served as soon as it proves itself, not after thirty proof timeouts one after
   * another.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  @Tag("alone") // bounds the start's delay in wall-clock time
  void connectionsThatNeverProveTheSecretDoNotStallTheStart(boolean unixSocket) throws Exception {
    DeviceHostProcess host = DeviceHostProcess.start(options(), "local", 1, why -> { }, unixSocket);
    List<SocketChannel> silent = new java.util.ArrayList<>();
    try {
      int n = 30;
      for (int i = 0; i < n; i++) {
        silent.add(connect(host.address()));
      }
      long start = System.nanoTime();
      BlockingQueue<LinkFrame> frames = new LinkedBlockingQueue<>();
      Link link = host.accept(30_000, f -> frames.add(LinkFrame.decode(f)), (why, byPeer) -> { }, 0);
      try {
        LinkFrame hello = frames.poll(30, TimeUnit.SECONDS);
        assertNotNull(hello, "no HELLO from the device host");
        assertEquals(LinkFrame.Kind.HELLO, hello.kind, String.valueOf(hello.text));
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // Served one after another, the silent ones alone would have held it n proof timeouts.
        assertTrue(millis < n * DeviceHostProcess.PROOF_TIMEOUT_MS / 4, "the device host was served after "
          + millis + " ms");
        for (SocketChannel c : silent) {
          assertEquals(0, bytesUntilClosed(c), "bytes sent to a peer that said nothing");
        }
      } finally {
        link.close();
      }
    } finally {
      for (SocketChannel c : silent) {
        c.close();
      }
      host.stop().get(10, TimeUnit.SECONDS);
    }
  }

  /**
   * Nothing another local user could read about the device host (its command line, its
   * environment) gives away the secret, the link's address, the region's path or the options: all
   * of it goes through its standard input.
   */
  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void nothingSensitiveOnTheDeviceHostsCommandLineOrInItsEnvironment(boolean unixSocket) throws Exception {
    DeviceOptions options = options().setDeviceHostStartTimeout(29_876);
    DeviceHostProcess host = DeviceHostProcess.start(options, "local", 1, why -> { }, unixSocket);
    List<String> secrets = List.of(host.secret(), host.address(), host.address().substring(5),
      host.directory().toString(), host.region().path().toString(), host.region().path().getFileName().toString(),
      "29876", options.toJson().encode(),
      Base64.getEncoder().encodeToString(options.toJson().put("node", "local").put("generation", 1).encode()
        .getBytes(StandardCharsets.UTF_8)).substring(0, 16));
    try {
      // Once it has connected and proved the secret, the device host's JVM surely runs.
      BlockingQueue<LinkFrame> frames = new LinkedBlockingQueue<>();
      Link link = host.accept(30_000, f -> frames.add(LinkFrame.decode(f)), (why, byPeer) -> { }, 0);
      try {
        ProcessHandle.Info info = ProcessHandle.of(host.pid()).orElseThrow().info();
        List<String> arguments = List.of(info.arguments().orElseThrow());
        assertEquals(DeviceHostMain.class.getName(), arguments.get(arguments.size() - 1),
          "arguments after the main class: " + arguments);
        // Short whatever the class path: past a page the JDK reports no command line at all.
        assertFalse(arguments.contains("-cp") || arguments.contains("-classpath"), "class path on the command line: " + arguments);
        String commandLine = info.commandLine().orElseThrow();
        String cmdline = read(Path.of("/proc/" + host.pid() + "/cmdline"));
        String environ = read(Path.of("/proc/" + host.pid() + "/environ"));
        for (String secret : secrets) {
          assertFalse(commandLine.contains(secret), "the command line shows " + secret);
          assertFalse(cmdline.contains(secret), "/proc/<pid>/cmdline shows " + secret);
          assertFalse(environ.contains(secret), "the environment shows " + secret);
        }
        assertTrue(cmdline.contains(DeviceHostMain.class.getName()), cmdline);
      } finally {
        link.close();
      }
    } finally {
      host.stop().get(10, TimeUnit.SECONDS);
    }
  }

  static String read(Path proc) throws IOException {
    return Files.isReadable(proc) ? new String(Files.readAllBytes(proc), StandardCharsets.UTF_8).replace('\0', ' ') : "";
  }

  static SocketChannel connect(String address) throws IOException {
    if (address.startsWith("unix:")) {
      SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX);
      c.connect(UnixDomainSocketAddress.of(address.substring(5)));
      return c;
    }
    return SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(),
      Integer.parseInt(address.substring(4))));
  }

  // Reads until the device verticle's side closes the connection; counts what it was sent.
  static long bytesUntilClosed(SocketChannel c) throws IOException {
    long total = 0;
    ByteBuffer b = ByteBuffer.allocate(1 << 16);
    try (c) {
      for (int n = c.read(b); n >= 0; n = c.read(b)) {
        total += n;
        b.clear();
      }
    } catch (IOException e) {
      // reset by the peer: closed as well
    }
    return total;
  }
}
