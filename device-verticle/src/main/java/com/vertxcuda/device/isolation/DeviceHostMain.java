package com.vertxcuda.device.isolation;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.RequestTable;
import com.vertxcuda.device.context.SharedTransfer;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.context.TransferRequest;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.context.InProcessContextTier;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.device.spi.UnreadableRequest;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.internal.CudaRuntime;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The device host: a child JVM that runs the context tier (the same ContextVerticle and library
 * verticles as in-process mode) behind a link to its device verticle. The link's reader thread puts
 * each request frame straight into the context's submission queue; replies are written to the link
 * from wherever the work completes. It never outlives its parent: it exits when the link closes or
 * its standard input (a pipe from the parent) ends, and after a sticky error, which on CUDA ends the
 * process's use of the GPU.
 *
 * <p>No arguments: the first line of standard input is a JSON object with the secret it proves when
 * it connects ({@code secret}), the link address ({@code link}: {@code unix:<path>} or
 * {@code tcp:<port>}), the shared region's path ({@code region}) and the context config
 * ({@code config}: DeviceOptions JSON with node and generation). Nothing of it is on the command
 * line or in the environment, where other local users could read it.
 */
public final class DeviceHostMain {

  /** Exit code after a sticky error poisoned the context. */
  public static final int EXIT_POISONED = 3;
  /** Exit code when the context could not start. */
  public static final int EXIT_START_FAILED = 2;

  private DeviceHostMain() {
  }

  public static void main(String[] args) throws IOException {
    BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String first = stdin.readLine();
    JsonObject launch;
    try {
      launch = new JsonObject(String.valueOf(first));
    } catch (RuntimeException e) {
      System.err.println("device host: standard input does not start with its launch JSON");
      Runtime.getRuntime().halt(EXIT_START_FAILED);
      return;
    }
    exitWhenParentGoes(stdin);
    String secret = launch.getString("secret");
    String address = launch.getString("link");
    Path regionPath = Path.of(launch.getString("region"));
    JsonObject config = launch.getJsonObject("config");
    DeviceOptions options = new DeviceOptions(config);
    // Measured here, where the context runs; the phases go back with each reply frame.
    IN_FLIGHT.measure(options.isMeasurePhases());
    SharedRegion region;
    try {
      region = SharedRegion.open(regionPath, options.getSharedMemorySize());
    } catch (RuntimeException e) {
      System.err.println("device host: " + e.getMessage());
      Runtime.getRuntime().halt(EXIT_START_FAILED);
      return;
    }
    // Mapped: the name can go now, so nothing is left in /dev/shm whatever happens to either process.
    region.unlink();
    String node = config.getString("node");
    long generation = config.getLong("generation");
    long spin = IdleWait.spinNanos(options);

    SocketChannel channel;
    try {
      channel = connect(address);
    } catch (IOException e) {
      System.err.println("device host: cannot reach its device verticle at " + address + ": " + e.getMessage());
      removeNames(address, regionPath);
      Runtime.getRuntime().halt(EXIT_START_FAILED);
      return;
    }
    // Connected: the socket's name and the private directory can go too (the parent does the same
    // once it hears HELLO; whichever comes first), so a parent killed now leaves nothing behind.
    removeNames(address, regionPath);
    Promise<ContextTier> tier = Promise.promise();
    // The secret first, on the socket itself, before anything slow: the parent cuts off a connection
    // that does not prove it within 2 s (making Vert.x took longer than that on a loaded machine),
    // and only then reads the link's rings.
    Link[] link = new Link[1];
    try {
      ByteBuffer auth = LinkFrame.notice(LinkFrame.Kind.AUTH, ProcessHandle.current().pid(), 0, secret).encode();
      while (auth.hasRemaining()) {
        channel.write(auth);
      }
      link[0] = new Link(channel, region.toDeviceHost(), region.toNode(), "vertx-cuda-device-host-link", spin,
        frame -> serve(link[0], tier.future(), region, LinkFrame.decode(frame)),
        (why, byPeer) -> {
          System.err.println("device host " + ProcessHandle.current().pid() + ": " + why + "; exiting");
          Runtime.getRuntime().halt(0);
        });
    } catch (IOException e) {
      System.err.println("device host: cannot prove itself to its device verticle: " + e.getMessage());
      Runtime.getRuntime().halt(EXIT_START_FAILED);
      return;
    }
    // The link's reader does not block while this side owes answers: the next request follows each.
    link[0].awaiting(() -> OWED.get() > 0);
    link[0].start();
    Vertx vertx = Vertx.vertx();
    CudaRuntime.of(vertx).registerCodecs();

    AtomicBoolean poisoned = new AtomicBoolean();
    InProcessContextTier.launch(vertx, options, node, generation, new ContextTier.Listener() {
      @Override
      public void lost(String reason) {
        if (poisoned.compareAndSet(false, true)) {
          link[0].send(LinkFrame.notice(LinkFrame.Kind.POISONED, generation, 0, reason).encode());
          // End the process once the frame is in the ring (at once, unless the ring was full): its use
          // of the GPU is over, and the device verticle's take-over waits for its exit.
          link[0].flushed(100_000_000L);
          Runtime.getRuntime().halt(EXIT_POISONED);
        }
      }
    }).compose(t -> pin(t, region, 0, 1).map(pinned -> {
      // The first segment is pinned (and the context has served a request) before it says ready;
      // the rest of the region as transfers reach it.
      tier.complete(t);
      link[0].send(LinkFrame.notice(LinkFrame.Kind.HELLO, ProcessHandle.current().pid(), 0,
        "ready, shared region " + (pinned ? "pinned as it is used" : "pageable")).encode());
      return null;
    })).onFailure(t -> {
      link[0].send(LinkFrame.notice(LinkFrame.Kind.START_FAILED, 0, 0, String.valueOf(t.getMessage())).encode());
      vertx.setTimer(100, id -> Runtime.getRuntime().halt(EXIT_START_FAILED));
    });
  }

  private static void removeNames(String address, Path region) {
    try {
      if (address.startsWith("unix:")) {
        java.nio.file.Files.deleteIfExists(Path.of(address.substring(5)));
      }
      java.nio.file.Files.deleteIfExists(region.toAbsolutePath().getParent());
    } catch (IOException ignored) {
      // not empty or already gone: the parent removes them
    }
  }

  private static SocketChannel connect(String address) throws IOException {
    SocketAddress to;
    SocketChannel channel;
    if (address.startsWith("unix:")) {
      to = UnixDomainSocketAddress.of(address.substring(5));
      channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    } else {
      to = new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(address.substring(4)));
      channel = SocketChannel.open();
    }
    channel.connect(to);
    return channel;
  }

  /** Bytes of the shared region page-locked at once, on first use. */
  static final long PINNED_SEGMENT = 64L << 20;
  /** Segments of the region page-locked (or being) so far. */
  private static final java.util.BitSet PINNED = new java.util.BitSet();

  /**
   * Page-locks (cuda) the segments of the shared region that bytes [offset, offset + length) lie in
   * and that are not yet, in the context's order ahead of the transfer that needs them: the region is
   * pinned as it is used, so an idle device host (or its spare) holds no more of it page-locked than
   * its transfers have touched, and a start pins one segment, not the region. A transfer is copied
   * piece by piece where segments meet ({@link TransferRequest#pieceFrom}). Completes with whether
   * the last segment asked for is pinned.
   */
  private static synchronized Future<Boolean> pin(ContextTier tier, SharedRegion region, long offset, long length) {
    Future<Boolean> last = Future.succeededFuture(true);
    if (length <= 0) {
      return last;
    }
    for (long k = offset / PINNED_SEGMENT, end = (offset + length - 1) / PINNED_SEGMENT; k <= end; k++) {
      if (PINNED.get((int) k)) {
        continue;
      }
      PINNED.set((int) k);
      long from = k * PINNED_SEGMENT;
      Promise<Object> done = Promise.promise();
      Object register = new TransferRequest(null, region.slice(from, Math.min(PINNED_SEGMENT, region.size() - from)),
        TransferRequest.Direction.REGISTER);
      tier.submit(IN_FLIGHT.entry(register, InFlight.Answer.of(done), null, Long.MAX_VALUE, null).own().track());
      long segment = k;
      // Not pinned (another backend, or the driver refused): the transfers still work, pageable.
      last = done.future().map(Boolean.TRUE::equals).onFailure(t -> System.err.println("device host: segment "
        + segment + " of the shared region stays pageable: " + t.getMessage())).otherwise(false);
    }
    return last;
  }

  /**
   * The transfer a region slice names, over this process's mapping of the region; the segments it
   * spans are page-locked first, in the context's order ahead of it. Throws for a slice outside the region.
   */
  private static TransferRequest overRegion(Future<ContextTier> tier, SharedRegion region, SharedTransfer t) {
    TransferRequest request = new TransferRequest(t.handle(), region.slice(t.offset(), t.length()),
      t.toDevice() ? TransferRequest.Direction.TO_DEVICE : TransferRequest.Direction.TO_HOST, t.offset(), PINNED_SEGMENT);
    if (tier.succeeded()) {
      pin(tier.result(), region, t.offset(), t.length());
    }
    return request;
  }

  /** On the link's reader thread: a request goes straight into the context's queue. */
  private static void serve(Link link, Future<ContextTier> tier, SharedRegion region, LinkFrame frame) {
    if (frame.kind == LinkFrame.Kind.PING) {
      long stalled = tier.succeeded()
        ? ((InProcessContextTier) tier.result()).context().stalledNanos() / 1_000_000 : 0;
      link.send(LinkFrame.notice(LinkFrame.Kind.PONG, frame.id, stalled, null).encode());
      return;
    }
    if (frame.kind != LinkFrame.Kind.REQUEST) {
      return;
    }
    Object body = frame.body;
    // The request's type, looked up once here and carried in its entry from now on.
    RequestType<?, ?> type = RequestTable.admitted(frame.library, body);
    if (type.crossing() == RequestType.Crossing.REGION_SLICE) {
      try {
        body = overRegion(tier, region, (SharedTransfer) body);
      } catch (RuntimeException e) {
        body = new UnreadableRequest("the transfer does not fit the shared region: " + e.getMessage());
      }
      type = RequestTable.admitted(null, body); // what the slice became
    } else if (frame.library == null && body instanceof RecordRequest) {
      // Steps that name transfer buffers crossed as the slices of the region they lie in.
      RecordRequest rr = (RecordRequest) body;
      List<PipelineStep> steps = new ArrayList<>(rr.getSteps().size());
      try {
        for (PipelineStep s : rr.getSteps()) {
          steps.add(s.library() == null && s.body() instanceof SharedTransfer
            ? new PipelineStep(null, overRegion(tier, region, (SharedTransfer) s.body())) : s);
        }
        body = new RecordRequest(steps);
      } catch (RuntimeException e) {
        body = new UnreadableRequest("a step's transfer does not fit the shared region: " + e.getMessage());
        type = RequestTable.admitted(null, body);
      }
    }
    OWED.incrementAndGet();
    InFlight.Entry r = IN_FLIGHT.entry(body, type, answer(link, frame.id), frame.library, System.nanoTime() + frame.code,
      frame.text);
    if (frame.measure) {
      r.measure();
    }
    r.track();
    if (!tier.succeeded()) {
      r.fail(new CudaException(FailureCode.CONTEXT_LOST, "the device host's context is not ready"));
    } else {
      tier.result().submit(r);
    }
  }

  /** The device host's requests (those from the link, and its own) until each has its one answer. */
  private static final InFlight IN_FLIGHT = new InFlight();
  /**
   * Requests from the link not yet answered over it: dropped only once the answer's frame is sent
   * (which marks the link's activity first), not when the table lets the entry go before its answer
   * is encoded: the reader must never see nothing owed while its last activity still reads old
   * ({@link com.vertxcuda.device.spi.IdleWait#pause}).
   */
  private static final java.util.concurrent.atomic.AtomicInteger OWED = new java.util.concurrent.atomic.AtomicInteger();

  /** The answer to a request that came over the link: a frame back, under the request's id. */
  private static InFlight.Answer answer(Link link, long id) {
    return new InFlight.Answer() {
      @Override
      public void succeed(Object reply) {
        succeed(reply, null);
      }

      @Override
      public void succeed(Object reply, RequestPhases phases) {
        boolean sent;
        try {
          sent = link.send(LinkFrame.reply(id, reply, phases).encode());
        } catch (RuntimeException | OutOfMemoryError e) {
          fail(Failures.toCudaException("the reply cannot cross the link", e));
          return;
        }
        if (!sent) {
          fail(backlogFull());
          return;
        }
        OWED.decrementAndGet();
      }

      @Override
      public void fail(CudaException failure) {
        try {
          if (!link.send(LinkFrame.failure(id, failure.code().code(), Failures.text(failure)).encode())) {
            // A failure with a long text, behind a full backlog: the short one always goes.
            CudaException full = backlogFull();
            link.send(LinkFrame.failure(id, full.code().code(), full.getMessage()).encode());
          }
        } finally {
          OWED.decrementAndGet();
        }
      }

      private CudaException backlogFull() {
        return new CudaException(com.vertxcuda.FailureCode.QUEUE_FULL, "the device verticle reads the link's "
          + "answers slower than they come: " + link.backlogBytes() + " bytes wait to cross");
      }
    };
  }

  // Standard input is a pipe from the parent: it ends when the parent does, even after kill -9.
  private static void exitWhenParentGoes(BufferedReader stdin) {
    Thread t = new Thread(() -> {
      try {
        while (stdin.read() >= 0) {
          // nothing more is sent; wait for the end of the stream
        }
      } catch (IOException ignored) {
        // the parent is gone
      }
      System.err.println("device host " + ProcessHandle.current().pid() + ": its parent is gone; exiting");
      Runtime.getRuntime().halt(0);
    }, "vertx-cuda-parent-watch");
    t.setDaemon(true);
    t.start();
  }
}
