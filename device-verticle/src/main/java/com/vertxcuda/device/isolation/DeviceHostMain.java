package com.vertxcuda.device.isolation;

import com.vertxcuda.Addresses;
import com.vertxcuda.CudaException;
import com.vertxcuda.Failures;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.context.Probe;
import com.vertxcuda.device.context.RequestSequencer;
import com.vertxcuda.device.context.TransferRequest;
import com.vertxcuda.device.context.UnreadableRequest;
import com.vertxcuda.device.impl.ForwardFailures;
import com.vertxcuda.device.impl.InProcessContextTier;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetClient;
import io.vertx.core.net.SocketAddress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;

/**
 * The device host: a child JVM that runs the context tier (the same ContextVerticle and library
 * verticles as in-process mode) behind a link to its device verticle. It never outlives its
 * parent: it exits when the link closes or its standard input (a pipe from the parent) ends, and
 * it exits after a sticky error, which on CUDA ends the process's use of the GPU.
 *
 * <p>Arguments: the link address ({@code unix:<path>} or {@code tcp:<port>}), the shared region's
 * path, and the context config (DeviceOptions JSON with node and generation), base64.
 */
public final class DeviceHostMain {

  /** Exit code after a sticky error poisoned the context. */
  public static final int EXIT_POISONED = 3;
  /** Exit code when the context could not start. */
  public static final int EXIT_START_FAILED = 2;

  // Held for the life of the process: a Vert.x NetClient that becomes unreachable is closed.
  private static NetClient client;

  private DeviceHostMain() {
  }

  public static void main(String[] args) {
    String link = args[0];
    Path regionPath = Path.of(args[1]);
    JsonObject config = new JsonObject(new String(Base64.getDecoder().decode(args[2]), StandardCharsets.UTF_8));
    exitWhenParentGoes();
    boolean unix = link.startsWith("unix:");
    Vertx vertx = Vertx.builder().with(new VertxOptions().setPreferNativeTransport(unix)).build();
    CudaCodecs.register(vertx.eventBus());
    if (Probe.ENABLED && Probe.FILE != null) {
      vertx.setPeriodic(50, id -> {
        try {
          Probe.appendTo(Path.of(Probe.FILE));
        } catch (IOException e) {
          System.err.println("device host: probe marks not written: " + e);
        }
      });
    }
    vertx.eventBus().registerDefaultCodec(TransferRequest.class, new LocalOnlyCodec<>(TransferRequest.class));
    vertx.eventBus().registerDefaultCodec(UnreadableRequest.class, new LocalOnlyCodec<>(UnreadableRequest.class));
    SharedRegion region = SharedRegion.open(regionPath);
    // Mapped: the name can go now, so nothing is left in /dev/shm whatever happens to either process.
    region.unlink();
    DeviceOptions options = new DeviceOptions(config);
    String node = config.getString("node");
    long generation = config.getLong("generation");
    SocketAddress address = unix
      ? SocketAddress.domainSocketAddress(link.substring(5))
      : SocketAddress.inetSocketAddress(Integer.parseInt(link.substring(4)), "127.0.0.1");
    client = vertx.createNetClient();
    client.connect(address).onFailure(t -> {
      System.err.println("device host: cannot reach its device verticle at " + link + ": " + t.getMessage());
      Runtime.getRuntime().halt(EXIT_START_FAILED);
    }).onSuccess(socket -> {
      Link[] self = new Link[1];
      String contextAddress = Addresses.context(node, options.getDevice(), generation);
      self[0] = new Link(socket, frame -> serve(vertx, self[0], region, options, contextAddress, frame), t -> {
        System.err.println("device host: malformed frame from the device verticle: " + t.getMessage());
        Runtime.getRuntime().halt(EXIT_START_FAILED);
      });
      self[0].closeHandler(v -> {
        System.err.println("device host " + ProcessHandle.current().pid() + ": the link closed; exiting");
        Runtime.getRuntime().halt(0);
      });
      vertx.eventBus().<JsonObject>consumer(Addresses.supervisor(node, options.getDevice()), m -> {
        if (m.body().getBoolean("stopped", false)) {
          return; // this process is ending anyway
        }
        self[0].send(LinkFrame.notice(LinkFrame.Kind.POISONED, m.body().getLong("generation"),
          m.body().getString("reason")));
        // Give the frame a moment to leave, then end the process: its use of the GPU is over.
        vertx.setTimer(100, id -> Runtime.getRuntime().halt(EXIT_POISONED));
      });
      InProcessContextTier.launch(vertx, options, node, generation)
        // Page-lock the whole shared region once (cuda), so every transfer through it is a pinned copy.
        .compose(tier -> vertx.eventBus().request(contextAddress,
          new TransferRequest(null, region.slice(0, region.size()), TransferRequest.Direction.REGISTER)))
        .onSuccess(pinned -> self[0].send(LinkFrame.notice(LinkFrame.Kind.HELLO, ProcessHandle.current().pid(),
          "ready, shared region " + (Boolean.TRUE.equals(pinned.body()) ? "pinned" : "pageable"))))
        .onFailure(t -> {
          self[0].send(LinkFrame.notice(LinkFrame.Kind.START_FAILED, 0, String.valueOf(t.getMessage())));
          vertx.setTimer(100, id -> Runtime.getRuntime().halt(EXIT_START_FAILED));
        });
    });
  }

  private static void serve(Vertx vertx, Link link, SharedRegion region, DeviceOptions options, String contextAddress,
                            LinkFrame frame) {
    if (frame.kind == LinkFrame.Kind.SKIP) {
      // The number is used up without a request: the context takes it and answers no one.
      vertx.eventBus().send(contextAddress, new UnreadableRequest("request #" + frame.id
        + " was answered by the device verticle"), new DeliveryOptions().addHeader(RequestSequencer.HEADER,
        Long.toString(frame.id)));
      return;
    }
    if (frame.kind != LinkFrame.Kind.REQUEST) {
      return;
    }
    Object body = frame.body;
    if (body instanceof SharedTransfer) {
      SharedTransfer t = (SharedTransfer) body;
      try {
        body = new TransferRequest(t.handle, region.slice(t.offset, t.length),
          t.toDevice ? TransferRequest.Direction.TO_DEVICE : TransferRequest.Direction.TO_HOST);
      } catch (RuntimeException e) {
        // Answered by its verticle like any unreadable request: BAD_REQUEST, its number used up.
        body = new UnreadableRequest("the transfer does not fit the shared region: " + e.getMessage());
      }
    }
    boolean library = !Addresses.isContext(frame.address);
    DeliveryOptions delivery = new DeliveryOptions().setSendTimeout(options.getRequestTimeout());
    if (frame.sequence > 0) {
      delivery.addHeader(RequestSequencer.HEADER, Long.toString(frame.sequence));
    }
    vertx.eventBus().request(frame.address, body, delivery)
      .onComplete(ar -> {
        if (ar.succeeded()) {
          link.send(LinkFrame.reply(frame.id, ((Message<?>) ar.result()).body()));
        } else {
          CudaException e = ForwardFailures.map(ar.cause(), library, -1);
          link.send(LinkFrame.failure(frame.id, e.code().code(), Failures.text(e)));
        }
      });
  }

  // Standard input is a pipe from the parent: it ends when the parent does, even after kill -9.
  private static void exitWhenParentGoes() {
    Thread t = new Thread(() -> {
      try {
        while (System.in.read() >= 0) {
          // nothing is sent; wait for the end of the stream
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
