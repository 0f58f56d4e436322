package com.vertxcuda.device.isolation;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.RequestSequencer;
import com.vertxcuda.device.context.Transfers;
import com.vertxcuda.device.isolation.DeviceHostMain;
import com.vertxcuda.device.impl.ContextTier;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.message.DeviceInfo;
import com.vertxcuda.message.DownloadReply;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.internal.buffer.BufferInternal;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServer;
import io.vertx.core.net.SocketAddress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The context tier in a device-host process of its own, seen from the device verticle. It starts
 * the child JVM (same runtime, same class path), links to it over a Unix domain socket (127.0.0.1
 * TCP where the native transport is missing), serves the generation's context and library
 * addresses on this side by relaying messages over the link in their wire form, and moves bulk
 * data through a shared-memory region instead of the socket. When the child exits, crashes or its
 * link closes, it reports the loss once, with the exit code or signal.
 */
public final class ProcessContextTier implements ContextTier {

  private static final System.Logger LOG = System.getLogger(ProcessContextTier.class.getName());
  private static final java.util.concurrent.atomic.AtomicLong SEQUENCE = new java.util.concurrent.atomic.AtomicLong();

  private final Vertx vertx;
  private final Context context;
  private final DeviceOptions options;
  private final String node;
  private final long generation;
  private final Handler<String> lost;
  private final Map<Long, Promise<Object>> pending = new HashMap<>();
  private final List<MessageConsumer<Object>> consumers = new ArrayList<>();
  private NetServer server;
  private Path socketPath;
  private SharedRegion region;
  private Process process;
  private Link link;
  private DeviceInfo info;
  private long nextId;
  private final String baseName;
  private boolean stopping;
  private boolean reported;
  /** The link closed or the process exited: requests fail at once. */
  private boolean gone;
  /** The last sequence number a request frame carried (the first relay of a request is synchronous). */
  private long relayedSequence;

  private ProcessContextTier(Vertx vertx, DeviceOptions options, String node, long generation, Handler<String> lost) {
    this.vertx = vertx;
    this.context = vertx.getOrCreateContext();
    this.options = options;
    this.node = node;
    this.generation = generation;
    this.lost = lost;
    // Unique per launch: a stopping predecessor must never delete a successor's files.
    this.baseName = "vertx-cuda-" + ProcessHandle.current().pid() + "-" + options.getDevice() + "-g" + generation
      + "-" + SEQUENCE.incrementAndGet();
  }

  /**
   * Starts a device host for {@code generation} and completes once its context serves. {@code lost}
   * hears (once, on the caller's context) why the device host is gone if it goes on its own.
   */
  public static Future<ContextTier> launch(Vertx vertx, DeviceOptions options, String node, long generation,
                                           Handler<String> lost) {
    ProcessContextTier tier = new ProcessContextTier(vertx, options, node, generation, lost);
    return tier.start().map(v -> (ContextTier) tier).recover(t -> tier.stop().transform(x -> Future.failedFuture(t)));
  }

  private Future<Void> start() {
    Path shm = Path.of("/dev/shm");
    Path dir = Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    region = SharedRegion.create(dir.resolve(baseName), options.getSharedMemorySize());
    Promise<Void> hello = Promise.promise();
    server = vertx.createNetServer().connectHandler(socket -> {
      if (link != null) {
        socket.close();
        return;
      }
      link = new Link(socket, frame -> onFrame(frame, hello), t -> {
        LOG.log(System.Logger.Level.ERROR, "malformed frame from the device host: " + t.getMessage());
        socket.close();
      });
      link.closeHandler(v -> onLinkClosed(hello));
    });
    SocketAddress address;
    if (vertx.isNativeTransportEnabled()) {
      socketPath = Path.of(System.getProperty("java.io.tmpdir"), baseName + ".sock");
      address = SocketAddress.domainSocketAddress(socketPath.toString());
    } else {
      address = SocketAddress.inetSocketAddress(0, "127.0.0.1");
    }
    return server.listen(address).compose(s -> {
      String linkArg = socketPath != null ? "unix:" + socketPath : "tcp:" + s.actualPort();
      try {
        process = spawn(linkArg);
      } catch (IOException e) {
        return Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, "cannot start the device host: " + e));
      }
      process.onExit().thenAccept(p -> {
        // Here, not on the context: a closing Vert.x drops what is run on it, and the region's name
        // must not outlive a device host that never got to map it.
        region.unlink();
        deleteSocketFile();
        context.runOnContext(v -> onExit(p, hello));
      });
      long timer = vertx.setTimer(options.getDeviceHostStartTimeout(), id -> hello.tryFail(new CudaException(
        FailureCode.CONTEXT_LOST, "the device host did not report ready within " + options.getDeviceHostStartTimeout() + " ms")));
      return hello.future().andThen(x -> vertx.cancelTimer(timer));
    }).compose(v -> {
      // Both sides have mapped the region and the socket is connected: the names can go now, so
      // nothing is left behind whatever happens to either process.
      region.unlink();
      deleteSocketFile();
      serveAddresses();
      return relay(Addresses.context(node, options.getDevice(), generation), new DescribeRequest());
    }).map(body -> {
      info = (DeviceInfo) body;
      return null;
    });
  }

  private Process spawn(String linkArg) throws IOException {
    JsonObject config = options.toJson().put("node", node).put("generation", generation);
    List<String> cmd = new ArrayList<>();
    cmd.add(ProcessHandle.current().info().command().orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    cmd.addAll(options.getDeviceHostJvmOptions());
    for (String p : List.of("java.library.path", "jna.library.path")) {
      if (System.getProperty(p) != null) {
        cmd.add("-D" + p + "=" + System.getProperty(p));
      }
    }
    cmd.add("-cp");
    cmd.add(classPath());
    cmd.add(DeviceHostMain.class.getName());
    cmd.add(linkArg);
    cmd.add(region.path().toString());
    cmd.add(Base64.getEncoder().encodeToString(config.encode().getBytes(StandardCharsets.UTF_8)));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
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

  /**
   * The device host's class path: this JVM's, unless the toolkit was loaded by a class loader of its
   * own (mvn exec:java, an application server), whose entries are taken then.
   */
  static String classPath() {
    String jvm = System.getProperty("java.class.path", "");
    try {
      String own = Path.of(DeviceHostMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
      for (String entry : jvm.split(java.io.File.pathSeparator)) {
        if (!entry.isEmpty() && Path.of(entry).toAbsolutePath().normalize().toString().equals(own)) {
          return jvm;
        }
      }
      java.util.LinkedHashSet<String> entries = new java.util.LinkedHashSet<>();
      for (ClassLoader l = DeviceHostMain.class.getClassLoader(); l != null; l = l.getParent()) {
        if (l instanceof java.net.URLClassLoader) {
          for (java.net.URL url : ((java.net.URLClassLoader) l).getURLs()) {
            if ("file".equals(url.getProtocol())) {
              entries.add(Path.of(url.toURI()).toString());
            }
          }
        }
      }
      return entries.contains(own) ? String.join(java.io.File.pathSeparator, entries) : jvm;
    } catch (java.net.URISyntaxException | RuntimeException e) {
      return jvm;
    }
  }

  @Override
  public DeviceInfo info() {
    return info;
  }

  /** The device host's process id. */
  public long pid() {
    return process.pid();
  }

  @Override
  public Buffer allocateTransferBuffer(int bytes) {
    long offset = region.allocate(bytes);
    if (offset < 0) {
      throw new CudaException(FailureCode.OUT_OF_MEMORY, "the shared region has no free " + bytes + "-byte slot");
    }
    return region.buffer(offset, bytes, 0);
  }

  @Override
  public boolean releaseTransferBuffer(Buffer buffer) {
    return region.releaseBuffer(buffer);
  }

  @Override
  public Future<Void> stop() {
    stopping = true;
    List<Future<?>> done = new ArrayList<>();
    consumers.forEach(c -> done.add(c.unregister()));
    consumers.clear();
    failPending("the device host is stopping");
    if (link != null) {
      link.close();
    }
    if (server != null) {
      done.add(server.close());
    }
    if (process != null && process.isAlive()) {
      process.destroy();
      done.add(Future.fromCompletionStage(process.onExit().orTimeout(2, TimeUnit.SECONDS)
        .exceptionally(t -> process.destroyForcibly().onExit().join())));
    }
    return Future.join(done).eventually(() -> {
      if (region != null) {
        region.unlink();
      }
      deleteSocketFile();
      return Future.succeededFuture();
    }).mapEmpty();
  }

  private void serveAddresses() {
    List<String> addresses = new ArrayList<>();
    addresses.add(Addresses.context(node, options.getDevice(), generation));
    for (Library l : options.getLibraries()) {
      addresses.add(Addresses.contextLibrary(node, options.getDevice(), generation, l));
    }
    for (String a : addresses) {
      consumers.add(vertx.eventBus().localConsumer(a, m -> forward(a, m)));
    }
  }

  private void forward(String address, Message<Object> m) {
    Object body = m.body();
    long seq = RequestSequencer.of(m);
    Future<?> answer;
    try {
      if (body instanceof UploadRequest && ((UploadRequest) body).getHandle() != null
        && ((UploadRequest) body).getData() != null) {
        answer = upload(address, (UploadRequest) body, seq);
      } else if (body instanceof DownloadRequest && ((DownloadRequest) body).getHandle() != null) {
        answer = download(address, ((DownloadRequest) body).getHandle(), seq);
      } else {
        answer = relay(address, body, seq);
      }
    } catch (RuntimeException e) {
      answer = Future.failedFuture(e);
    }
    if (seq > 0 && relayedSequence != seq) {
      // Refused here (bad size, no slot free, no codec): the device host must not wait for it.
      skip(seq);
    }
    answer.onComplete(ar -> {
      if (ar.succeeded()) {
        m.reply(ar.result());
      } else {
        Failures.fail(m, ar.cause());
      }
    });
  }

  /** Uploads through the region: no copy when the data already lies there, one copy otherwise. */
  private Future<BufferHandle> upload(String address, UploadRequest r, long seq) {
    BufferHandle h = r.getHandle();
    Buffer data = r.getData();
    Transfers.checkUpload(h, data.length());
    if (data.length() == 0) {
      // Nothing to move, but the handle is still checked by the context.
      return relay(address, new SharedTransfer(h, 0, 0, true), seq).map(x -> h);
    }
    long at = region.offsetOf(data);
    if (at >= 0) {
      return relay(address, new SharedTransfer(h, at, data.length(), true), seq).map(x -> h);
    }
    ByteBuffer src = ((BufferInternal) data).getByteBuf().nioBuffer();
    return inChunks(h, (view, from) -> {
      long slot = slot(view.byteLength());
      region.slice(slot, view.byteLength()).put(src.slice((int) from, (int) view.byteLength()));
      return relay(address, new SharedTransfer(view, slot, view.byteLength(), true), seq)
        .eventually(() -> {
          region.release(slot, view.byteLength());
          return Future.succeededFuture();
        });
    }).map(x -> h);
  }

  /**
   * Downloads through the region. One that fits a slot is handed back as a buffer over the region
   * (no copy; the slot returns when the buffer is released or unreachable); a larger one is
   * assembled chunk by chunk.
   */
  private Future<DownloadReply> download(String address, BufferHandle h, long seq) {
    Transfers.checkDownload(h, Math.min(h.byteLength(), Transfers.MAX_DOWNLOAD));
    int length = (int) h.byteLength();
    if (length <= region.largestSlot()) {
      long slot = slot(length);
      return relay(address, new SharedTransfer(h, slot, length, false), seq)
        .map(x -> new DownloadReply(h, region.buffer(slot, length, length)))
        .onFailure(t -> region.release(slot, length));
    }
    // Allocated once the first chunk came back: by then the context has checked the handle.
    Buffer[] assembled = new Buffer[1];
    return inChunks(h, (view, from) -> {
      long slot = slot(view.byteLength());
      return relay(address, new SharedTransfer(view, slot, view.byteLength(), false), seq)
        .map(x -> {
          if (assembled[0] == null) {
            assembled[0] = Buffer.buffer(length);
          }
          assembled[0].appendBuffer(BufferInternal.buffer(io.netty.buffer.Unpooled.wrappedBuffer(region.slice(slot, view.byteLength()))));
          return x;
        })
        .eventually(() -> {
          region.release(slot, view.byteLength());
          return Future.succeededFuture();
        });
    }).map(x -> new DownloadReply(h, assembled[0]));
  }

  private long slot(long bytes) {
    long slot = region.allocate(bytes);
    if (slot < 0) {
      throw new CudaException(FailureCode.QUEUE_FULL, "the shared region has no free " + bytes
        + "-byte slot now; retry when transfers in flight have finished");
    }
    return slot;
  }

  private interface Chunk {
    Future<?> run(BufferHandle view, long fromByte);
  }

  /** Runs {@code chunk} over consecutive views of {@code h}, each small enough for one slot. */
  private Future<Void> inChunks(BufferHandle h, Chunk chunk) {
    int size = h.dtype().size();
    long perChunk = Math.max(1, Math.min(region.largestSlot(), h.byteLength()) / size);
    Future<?> chain = Future.succeededFuture();
    for (long first = 0; first < h.length(); first += perChunk) {
      long f = first;
      long n = Math.min(perChunk, h.length() - first);
      chain = chain.compose(x -> chunk.run(h.view(f, n), f * size));
    }
    return chain.mapEmpty();
  }

  /** Sends a message over the link and completes with the reply's body. */
  private Future<Object> relay(String address, Object body) {
    return relay(address, body, 0);
  }

  private Future<Object> relay(String address, Object body, long sequence) {
    if (link == null || stopping || gone) {
      return Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, "the device host is gone"));
    }
    long id = nextId++;
    Promise<Object> p = Promise.promise();
    link.send(LinkFrame.request(id, address, body, sequence)); // throws for a body with no wire codec
    pending.put(id, p);
    if (sequence > 0) {
      relayedSequence = sequence;
    }
    return p.future();
  }

  private void skip(long sequence) {
    if (link != null && !stopping && !gone) {
      link.send(LinkFrame.notice(LinkFrame.Kind.SKIP, sequence, null));
    }
  }

  private void onFrame(LinkFrame frame, Promise<Void> hello) {
    switch (frame.kind) {
      case REPLY: {
        Promise<Object> p = pending.remove(frame.id);
        if (p != null) {
          p.complete(frame.body);
        }
        break;
      }
      case FAILURE: {
        Promise<Object> p = pending.remove(frame.id);
        if (p != null) {
          p.fail(Failures.replyException(FailureCode.fromCode(frame.code) == null ? FailureCode.LIBRARY_ERROR
            : FailureCode.fromCode(frame.code), frame.text));
        }
        break;
      }
      case HELLO:
        hello.tryComplete();
        break;
      case START_FAILED:
        hello.tryFail(new CudaException(FailureCode.CONTEXT_LOST, "the device host could not start its context: "
          + frame.text));
        break;
      case POISONED:
        // Tell the device verticle as an in-process context would; the device host exits next.
        vertx.eventBus().send(Addresses.supervisor(node, options.getDevice()),
          new JsonObject().put("generation", generation).put("reason", frame.text));
        reported = true;
        break;
      default:
        break;
    }
  }

  private void onLinkClosed(Promise<Void> hello) {
    gone = true;
    failPending("the link to the device host closed");
    if (process != null) {
      // Wait briefly for the exit status, so the reason names the exit code or signal.
      process.onExit().orTimeout(1, TimeUnit.SECONDS)
        .whenComplete((p, t) -> context.runOnContext(v -> report(p != null && !p.isAlive()
          ? exitReason(p) : "the link to the device host closed", hello)));
    }
  }

  private void onExit(Process p, Promise<Void> hello) {
    gone = true;
    failPending("the device host exited");
    report(exitReason(p), hello);
  }

  private void report(String reason, Promise<Void> hello) {
    hello.tryFail(new CudaException(FailureCode.CONTEXT_LOST, "the device host ended before it was ready: " + reason));
    if (stopping || reported || !hello.future().succeeded()) {
      return;
    }
    reported = true;
    lost.handle(reason);
  }

  private void failPending(String why) {
    List<Promise<Object>> all = new ArrayList<>(pending.values());
    pending.clear();
    all.forEach(p -> p.tryFail(Failures.replyException(FailureCode.CONTEXT_LOST, why)));
  }

  /** The exit code or signal of a finished device host, in words. */
  static String exitReason(Process p) {
    int code = p.exitValue();
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

  private void deleteSocketFile() {
    if (socketPath != null) {
      try {
        Files.deleteIfExists(socketPath);
      } catch (IOException ignored) {
        // already gone
      }
    }
  }
}
