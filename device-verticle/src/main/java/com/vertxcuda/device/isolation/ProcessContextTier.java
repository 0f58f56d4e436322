package com.vertxcuda.device.isolation;

import com.vertxcuda.Library;
import com.vertxcuda.internal.TransferMemory;
import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.CudaException;
import com.vertxcuda.Failures;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.spi.IdleWait;
import com.vertxcuda.device.context.ContextTier;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.device.context.InFlight;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.message.DescribeRequest;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.device.context.RequestTable;
import com.vertxcuda.message.DownloadRequest;
import com.vertxcuda.message.RecordRequest;
import com.vertxcuda.message.ReleasePipelineRequest;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.message.UploadRequest;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The context tier in a device-host process of its own, seen from the device verticle: a typed
 * channel, not a relay of the event bus. {@link #submit} writes a request frame straight onto the
 * link from the caller's thread; the link's reader thread completes the request from the reply
 * frame, and the reply goes straight to the requester. Bulk data moves through the shared region
 * ({@link SharedTransfers}); the process itself is {@link DeviceHostProcess}'s.
 *
 * <p>The requests on the link are entries of the device's one in-flight table ({@link InFlight}),
 * each marked with the call its reply frame goes to, under the entry's id as the frame's: when the
 * link closes or the process ends, every one of them is answered CONTEXT_LOST from there, and the
 * loss is reported once.
 */
public final class ProcessContextTier implements ContextTier {

  private static final System.Logger LOG = System.getLogger(ProcessContextTier.class.getName());

  /** A request on the link: what to do with its reply frame. */
  interface Call extends InFlight.Linked {
    /** The call that answers {@code r} with its reply frame, as it is. */
    static Call answering(Request r) {
      return new Call() {
        @Override
        public void replied(Object reply) {
          r.reply(reply);
        }


        @Override
        public void failed(CudaException failure) {
          r.fail(failure);
        }
      };
    }
  }

  private final Vertx vertx;
  private final DeviceOptions options;
  private final ContextTier.Listener listener;
  /** The device's one in-flight table: the requests on the link are its entries. */
  private final InFlight inFlight;
  /** Requests on this link whose reply frame has not come. */
  private final AtomicInteger onLink = new AtomicInteger();
  private final Map<Long, Promise<Long>> pings = new ConcurrentHashMap<>();
  private final AtomicLong ids = new AtomicLong();
  private final AtomicBoolean reported = new AtomicBoolean();
  private final Promise<Void> hello = Promise.promise();
  // The device host connected and proved the secret; failed at once if it exits before that.
  private final Promise<Void> connected = Promise.promise();
  private volatile DeviceHostProcess process;
  /** The process the start made, or null where it made none (failed, or stopped first). */
  private final CompletableFuture<DeviceHostProcess> spawned = new CompletableFuture<>();
  private SharedTransfers transfers;
  private Link link;
  private DeviceInfo info;
  private volatile boolean stopping;
  /** Why the link or the process ended; requests fail at once once set. */
  private volatile String gone;

  private ProcessContextTier(Vertx vertx, DeviceOptions options, InFlight inFlight, ContextTier.Listener listener) {
    this.vertx = vertx;
    this.options = options;
    this.inFlight = inFlight;
    this.listener = listener;
  }

  /**
   * Starts a device host for {@code generation} and completes once its context serves; the requests
   * it sends over its link are entries of {@code inFlight}, the device's table.
   * {@code listener} hears (once, on any thread) why the device host is gone if it goes on its own.
   */
  public static Future<ContextTier> launch(Vertx vertx, DeviceOptions options, String node, long generation,
                                           InFlight inFlight, ContextTier.Listener listener) {
    ProcessContextTier tier = new ProcessContextTier(vertx, options, inFlight, listener);
    return tier.start(node, generation).map(v -> (ContextTier) tier)
      .recover(t -> tier.stop().transform(x -> Future.failedFuture(t)));
  }

  private Future<Void> start(String node, long generation) {
    long spin = IdleWait.spinNanos(options);
    long timeout = options.getDeviceHostStartTimeout();
    // Starting the process (its region, its socket, the fork) and accepting its connection block: on a
    // thread of its own, never the event loop. A stop at any point waits for the start's outcome and
    // stops what it made (spawned completes once, with the process or null); its socket closed, the
    // accept fails at once.
    Thread starter = new Thread(() -> {
      DeviceHostProcess p = null;
      try {
        if (!stopping) {
          p = DeviceHostProcess.start(options, node, generation, this::exited);
          process = p;
          transfers = new SharedTransfers(p.region(), this);
          // Once the process is gone no pipeline of it uses the region: what they held goes back.
          SharedTransfers ending = transfers;
          p.onExit().thenRun(ending::releaseHeld);
        }
      } catch (IOException | RuntimeException | Error e) {
        // An Error too (no memory for the region's mapping, say): the start fails now, not at its deadline.
        connected.tryFail(new CudaException(FailureCode.CONTEXT_LOST, "cannot start the device host: " + e));
      } finally {
        spawned.complete(p);
      }
      if (p == null) {
        connected.tryFail(new CudaException(FailureCode.CONTEXT_LOST, "the device host is stopping"));
        return;
      }
      try {
        link = p.accept(timeout, frame -> onFrame(LinkFrame.decode(frame)), this::linkClosed, spin);
        // Requests on the link await their answers: its reader spins for them rather than sleep.
        link.awaiting(() -> onLink.get() > 0);
        connected.tryComplete();
      } catch (IOException | RuntimeException e) {
        connected.tryFail(new CudaException(FailureCode.CONTEXT_LOST, "the device host did not connect: " + e.getMessage()));
      }
    }, "vertx-cuda-device-host-start");
    starter.setDaemon(true);
    starter.start();
    // One deadline for the whole start — connecting, HELLO, the first describe — whatever stalls it (a
    // device host that never connects: stopping the tier closes the socket the accept waits on).
    Promise<Void> started = Promise.promise();
    long timer = vertx.setTimer(timeout, id -> started.tryFail(new CudaException(FailureCode.CONTEXT_LOST,
      "the device host did not report ready within " + timeout + " ms")));
    connected.future()
      .compose(v -> hello.future())
      .compose(v -> {
        // Both sides have mapped the region and the link is up: the names can go now.
        process.unlinkNames();
        return call(null, new DescribeRequest());
      })
      .onComplete(ar -> {
        vertx.cancelTimer(timer);
        if (ar.failed()) {
          started.tryFail(ar.cause());
          return;
        }
        info = (DeviceInfo) ar.result();
        if (started.tryComplete()) {
          // Ready: the class-data archive of later starts is made now, if there is none, at low priority.
          process.trainArchive();
        }
      });
    return started.future();
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
  public void submit(Request request) {
    Request r = entry(request);
    if (gone != null || stopping) {
      r.fail(new CudaException(FailureCode.CONTEXT_LOST, gone != null ? gone : "the device host is stopping"));
      return;
    }
    Object body = r.body();
    try {
      if (r.library() == null && body instanceof RecordRequest && RequestTable.namesHostMemory((RecordRequest) body)) {
        // Its transfer buffers cross as the slices of the region they lie in, held while the pipeline exists.
        transfers.record(r, (RecordRequest) body);
        return;
      }
      if (r.library() == null && body instanceof ReleasePipelineRequest) {
        // Answered once the pipeline's uses are done: the transfer buffers it held go back then.
        send(r, body, new Call() {
          @Override
          public void replied(Object reply) {
            if (reply instanceof PipelineHandle) {
              transfers.released(((PipelineHandle) reply).id());
            }
            r.reply(reply);
          }

          @Override
          public void failed(CudaException failure) {
            r.fail(failure);
          }
        });
        return;
      }
      boolean region = false;
      switch (r.type().crossing()) {
        case REGION_TO_DEVICE: {
          UploadRequest u = (UploadRequest) body;
          if (u.getHandle() != null && u.getData() != null) {
            transfers.upload(r, u);
            region = true;
          }
          break;
        }
        case REGION_TO_HOST: {
          DownloadRequest d = (DownloadRequest) body;
          if (d.getHandle() != null) {
            transfers.download(r, d.getHandle());
            region = true;
          }
          break;
        }
        default:
          break;
      }
      // Anything else crosses in a frame; so does a transfer with nothing to move, which the device
      // host answers.
      if (!region) {
        send(r, body, Call.answering(r));
      }
    } catch (RuntimeException | Error e) {
      // A body without a wire form is an IllegalArgumentException (BAD_REQUEST); encoding a huge one
      // may exhaust the heap (OUT_OF_MEMORY).
      r.fail(Failures.toCudaException("the request cannot cross to the device host", e));
    }
  }

  /**
   * Writes {@code body} for {@code r}'s library as one request frame; {@code call} hears its reply on
   * the link's reader thread. Throws for a body that has no wire form.
   */
  void send(Request r, Object body, Call call) {
    InFlight.Entry e = entry(r);
    long timeLeft = Math.min(e.deadline() - System.nanoTime(), TimeUnit.DAYS.toNanos(1));
    ByteBuffer frame;
    try {
      frame = LinkFrame.request(e.id(), e.library(), body, timeLeft, e.owner(), e.measured()).encode();
    } catch (RuntimeException | Error t) {
      // Never sent: the call still hears it once, so what it holds (a slot of the region) goes back.
      call.failed(Failures.toCudaException("encoding the request's link frame", t));
      return;
    }
    onLink.incrementAndGet();
    e.link(this, call);
    if (gone != null) {
      InFlight.Linked mine = linked(e.id());
      if (mine != null) {
        mine.failed(new CudaException(FailureCode.CONTEXT_LOST, gone));
      }
      return;
    }
    if (!link.send(frame)) {
      InFlight.Linked mine = linked(e.id());
      if (mine != null) {
        mine.failed(new CudaException(FailureCode.QUEUE_FULL, "the device host reads requests slower than they "
          + "come: " + link.backlogBytes() + " bytes wait to cross its link; retry later"));
      }
    }
  }

  // The call a reply frame goes to, taken once.
  private InFlight.Linked linked(long id) {
    return linked(id, null);
  }

  // {@code phases}: what the device host measured of it, kept by the entry for its answer.
  private InFlight.Linked linked(long id, RequestPhases phases) {
    InFlight.Linked c = inFlight.linked(id, phases);
    if (c != null) {
      onLink.decrementAndGet();
    }
    return c;
  }

  // Every request the device serves is an entry of its table; one from elsewhere (a harness) gets
  // one of its own, not counted with clients'.
  private InFlight.Entry entry(Request r) {
    if (r instanceof InFlight.Entry) {
      return (InFlight.Entry) r;
    }
    return inFlight.entry(r.body(), InFlight.Answer.of(r), r.library(), r.deadline(), r.owner()).own().track();
  }

  // A request of the tier's own (describe once ready).
  private Future<Object> call(Library library, Object body) {
    Promise<Object> p = Promise.promise();
    InFlight.Entry e = inFlight.entry(body, InFlight.Answer.of(p), library,
      System.nanoTime() + options.getRequestTimeout() * 1_000_000, null).own().track();
    send(e, body, new Call() {
      @Override public void replied(Object b) { e.describe(b); }
      @Override public void failed(CudaException x) { e.fail(x); }
    });
    return p.future();
  }

  @Override
  public Future<Long> stalledMillis() {
    if (gone != null) {
      return Future.failedFuture(new CudaException(FailureCode.CONTEXT_LOST, gone));
    }
    long id = ids.incrementAndGet();
    Promise<Long> p = Promise.promise();
    pings.put(id, p);
    link.send(LinkFrame.notice(LinkFrame.Kind.PING, id, 0, null).encode());
    return p.future().andThen(x -> pings.remove(id));
  }

  private void onFrame(LinkFrame frame) {
    switch (frame.kind) {
      case REPLY: {
        InFlight.Linked c = linked(frame.id, frame.phases);
        if (c != null) {
          c.replied(frame.body);
        }
        break;
      }
      case FAILURE: {
        InFlight.Linked c = linked(frame.id);
        if (c != null) {
          c.failed(Failures.fromCode((int) frame.code, frame.text));
        }
        break;
      }
      case PONG: {
        Promise<Long> p = pings.remove(frame.id);
        if (p != null) {
          p.tryComplete(frame.code);
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
        // The device host exits next; the device verticle replaces it now.
        lost("the device host's context was poisoned: " + frame.text);
        break;
      default:
        LOG.log(System.Logger.Level.WARNING, "unexpected " + frame.kind + " frame from the device host");
    }
  }

  private void linkClosed(String why, boolean byPeer) {
    if (!byPeer) {
      // This side ended it (its reader failed: a malformed ring, an Error): nothing to wait for, the
      // device host is alive and learns of it from the socket.
      end("the link to the device host ended: " + why);
      return;
    }
    // A device host that is ending (killed, crashed) is reported lost at once, its exit status read
    // from Linux: one killed while it held a CUDA context is gone only once the driver has torn the
    // context down, tens of milliseconds after its link closed. Otherwise wait briefly for the exit
    // status, so the reason names the exit code or signal.
    String ending = process.endingReason();
    if (ending != null) {
      long closed = System.nanoTime();
      end(ending);
      process.onExit().thenAccept(p -> LOG.log(System.Logger.Level.INFO, "the device host (pid " + p.pid()
        + ") was gone " + (System.nanoTime() - closed) / 1_000_000 + " ms after its link closed: " + ending));
      return;
    }
    process.onExit().orTimeout(1, TimeUnit.SECONDS).whenComplete((p, t) ->
      end(p != null ? process.exitReason() : "the link to the device host closed: " + why));
  }

  private void exited(String reason) {
    end(reason);
  }

  private void end(String reason) {
    if (gone == null) {
      gone = reason;
    }
    // The loss is reported before the calls on the link fail: a heartbeat's PING among them would
    // otherwise reach the device first and name a missed heartbeat instead of the exit.
    if (!stopping && hello.future().succeeded()) {
      lost(reason);
    }
    failCalls(gone);
    CudaException early = new CudaException(FailureCode.CONTEXT_LOST, "the device host ended before it was ready: "
      + reason);
    connected.tryFail(early);
    hello.tryFail(early);
  }

  private void lost(String reason) {
    if (reported.compareAndSet(false, true)) {
      listener.lost(reason);
    }
  }

  private void failCalls(String why) {
    CudaException lost = new CudaException(FailureCode.CONTEXT_LOST, why);
    onLink.addAndGet(-inFlight.failLinked(this, lost));
    for (Long id : List.copyOf(pings.keySet())) {
      Promise<Long> p = pings.remove(id);
      if (p != null) {
        p.tryFail(lost);
      }
    }
  }

  /** The shared region, the only memory that crosses to the device host without a copy. */
  @Override
  public TransferMemory transferMemory() {
    return transfers.memory();
  }

  /** What a device host started with {@code options} lends at once (three quarters of its region). */
  public static long lendingLimit(DeviceOptions options) {
    return SharedRegion.heldLimit(options.getSharedMemorySize());
  }

  @Override
  public boolean ended() {
    return gone != null || stopping;
  }

  @Override
  public String lost() {
    return stopping ? null : gone;
  }

  @Override
  public Future<Void> stop() {
    // A start still under way spawns nothing after this, or stops below what it spawned.
    stopping = true;
    if (gone == null) {
      gone = "the device host is stopping";
    }
    failCalls("the device host is stopping");
    if (link != null) {
      link.close();
    }
    return VertxInternals.fromCompletionStage(vertx, spawned.thenCompose(p -> p == null
      ? CompletableFuture.completedFuture(null) : p.stop()));
  }
}
