package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.Failures;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.CoreWireTypes;
import com.vertxcuda.codec.WireCodec;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.core.net.NetServerOptions;
import io.vertx.core.net.NetSocket;
import io.vertx.core.net.SSLEngineOptions;
import io.vertx.core.net.TCPSSLOptions;
import io.vertx.core.spi.cluster.ClusterManager;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.function.Consumer;

/**
 * The wire of the bulk side channel ({@link BulkServer}, {@link BulkTransfer}), written once here. A
 * connection carries transfers one after another, each answered before the next begins.
 *
 * <p>A transfer, client to node: {@code int MAGIC, byte UPLOAD|DOWNLOAD, long timeout ms, int n, n
 * bytes of the handle} (the handle's own wire codec, token included: each transfer is authorised on
 * its own); an upload's bytes follow, exactly the handle's byte length. Node to client: {@code DATA}
 * frames ({@code byte 'D', int n, n bytes}, a download's bytes in order), then one {@code DONE}
 * ({@code byte 'K'}) or, at any point, one {@code FAIL} ({@code byte 'F', int code, int n, n bytes of
 * UTF-8 message}) — the transfer's one answer. After DONE the client may send the next transfer's
 * header on the same connection; after FAIL the connection carries nothing more (the node drops what
 * still arrives, the client closes it).
 */
final class BulkWire {

  static final int MAGIC = 0x56434232; // "VCB2": transfers one after another on a connection
  static final byte UPLOAD = 'U';
  static final byte DOWNLOAD = 'D';
  static final byte DATA = 'D';
  static final byte DONE = 'K';
  static final byte FAIL = 'F';
  /** The fixed part of a header, before the handle's bytes. */
  static final int HEADER = 4 + 1 + 8 + 4;
  /** A handle's wire form is small; a header claiming more is not ours. */
  static final int MAX_HANDLE_BYTES = 4096;
  /** A failure's message is cut to this many bytes. */
  static final int MAX_MESSAGE_BYTES = 4096;
  /**
   * The most one write puts on a stream over TLS at once. Each write is flushed on its own (outside
   * a read), and over TLS a flush encrypts all of its write before the first byte leaves: a whole
   * segment in one write keeps the peer idle while the node encrypts it, and the node idle while the
   * peer decrypts it; MiB slices let the two overlap.
   */
  static final int WRITE_SLICE = 1 << 20;

  private static final WireCodec<BufferHandle> HANDLE = CudaCodecs.codec(CoreWireTypes.HANDLE);

  /**
   * Writes {@code data} on {@code socket}: over TLS in writes of at most {@link #WRITE_SLICE} bytes,
   * plain in one (where nothing is done to a write before it leaves, so slicing only adds flushes
   * and makes a plain stream slower).
   * Completes when the last has been written (Netty writes a channel's writes in order), fails if any
   * fails.
   */
  static Future<Void> write(NetSocket socket, Buffer data) {
    int n = data.length();
    if (n <= WRITE_SLICE || !socket.isSsl()) {
      return socket.write(data);
    }
    List<Future<Void>> writes = new ArrayList<>(n / WRITE_SLICE + 1);
    for (int from = 0; from < n; from += WRITE_SLICE) {
      writes.add(socket.write(data.slice(from, Math.min(n, from + WRITE_SLICE))));
    }
    return Future.all(writes).mapEmpty();
  }

  /**
   * The side channel's server: the event bus's host, TLS and client authentication (so it is exactly
   * as protected as the bus), any free port. Settings are copied typed: a JSON copy of the bus's
   * options drops what has no JSON form (key and trust given as {@code KeyStoreOptions}).
   */
  static NetServerOptions serverOptions(Vertx vertx, EventBusOptions bus) {
    NetServerOptions o = new NetServerOptions();
    copy(bus, o);
    o.setClientAuth(bus.getClientAuth());
    return o.setHost(bindHost(vertx, bus)).setPort(0);
  }

  /**
   * The side channel's client: the event bus's TLS settings, and, as the clustered bus's own client,
   * peers trusted by the trust store alone: never every server (the bus's {@code trustAll} is not
   * carried over), and no host-name check (nodes are reached by address).
   */
  static NetClientOptions clientOptions(EventBusOptions bus) {
    NetClientOptions o = new NetClientOptions();
    copy(bus, o);
    return o.setTrustAll(false).setHostnameVerificationAlgorithm("");
  }

  /**
   * Why a side channel with the TLS settings of {@code bus} would be less protected than the bus;
   * null where it is as protected (a plain bus, or a TLS bus that names its key and its trust). A TLS
   * side channel needs both: the key to serve, the trust to know the nodes it connects to.
   */
  static String tlsMismatch(EventBusOptions bus) {
    if (!bus.isSsl()) {
      return null;
    }
    if (bus.getKeyCertOptions() == null) {
      return "the event bus uses TLS but names no key and certificate (EventBusOptions.setKeyCertOptions):"
        + " the bulk side channel cannot serve TLS";
    }
    if (bus.getTrustOptions() == null) {
      return "the event bus uses TLS but names no trust (EventBusOptions.setTrustOptions): the bulk side channel"
        + " would trust any server; give the bus the trust store that its nodes' certificates are checked against";
    }
    return null;
  }

  // The bus's TCP and TLS settings onto a side-channel server's or client's, each by its typed
  // getter, and its TLS engine (engine, below). Not carried over: the bus's idle timeouts (the side
  // channel keeps its own) and ALPN (the side channel speaks its own protocol).
  private static void copy(EventBusOptions bus, TCPSSLOptions o) {
    o.setTcpNoDelay(bus.isTcpNoDelay()).setTcpKeepAlive(bus.isTcpKeepAlive()).setSoLinger(bus.getSoLinger())
      .setSendBufferSize(bus.getSendBufferSize()).setReceiveBufferSize(bus.getReceiveBufferSize())
      .setReuseAddress(bus.isReuseAddress()).setReusePort(bus.isReusePort()).setTrafficClass(bus.getTrafficClass())
      .setTcpFastOpen(bus.isTcpFastOpen()).setTcpCork(bus.isTcpCork()).setTcpQuickAck(bus.isTcpQuickAck())
      .setTcpUserTimeout(bus.getTcpUserTimeout()).setLogActivity(bus.getLogActivity());
    o.setSsl(bus.isSsl());
    o.setKeyCertOptions(bus.getKeyCertOptions() == null ? null : bus.getKeyCertOptions().copy());
    o.setTrustOptions(bus.getTrustOptions() == null ? null : bus.getTrustOptions().copy());
    if (bus.getEnabledCipherSuites() != null) {
      bus.getEnabledCipherSuites().forEach(o::addEnabledCipherSuite);
    }
    if (bus.getCrlPaths() != null) {
      bus.getCrlPaths().forEach(o::addCrlPath);
    }
    if (bus.getCrlValues() != null) {
      bus.getCrlValues().forEach(v -> o.addCrlValue(v.copy()));
    }
    if (bus.getEnabledSecureTransportProtocols() != null) {
      o.setEnabledSecureTransportProtocols(new LinkedHashSet<>(bus.getEnabledSecureTransportProtocols()));
    }
    o.setSslEngineOptions(engine(bus));
    o.setSslHandshakeTimeout(bus.getSslHandshakeTimeout()).setSslHandshakeTimeoutUnit(bus.getSslHandshakeTimeoutUnit());
  }

  /**
   * The TLS engine of the side channel of {@code bus}, server and client alike: the one the bus names
   * (the application's choice, kept), else the toolkit's choice ({@link TlsEngines#preferred}); null
   * for a plain bus.
   */
  static SSLEngineOptions engine(EventBusOptions bus) {
    return bus.isSsl() ? TlsEngines.of(bus.getSslEngineOptions()) : null;
  }

  /** Where clients reach the side channel: the bus's public host, else the one it binds. */
  static String advertisedHost(Vertx vertx, EventBusOptions bus) {
    ClusterManager cm = VertxInternals.clusterManager(vertx);
    String host = bus.getClusterPublicHost() != null ? bus.getClusterPublicHost()
      : cm != null && cm.clusterPublicHost() != null ? cm.clusterPublicHost() : null;
    return host != null ? host : bindHost(vertx, bus);
  }

  // The bus's host; where it is left to the cluster manager, the manager's; never every interface.
  private static String bindHost(Vertx vertx, EventBusOptions bus) {
    ClusterManager cm = VertxInternals.clusterManager(vertx);
    String host = bus.getHost() != null ? bus.getHost() : cm != null ? cm.clusterHost() : null;
    return host != null ? host : "localhost";
  }

  /**
   * The side channel's client: the event bus's TLS settings, and, as the clustered bus's own client,
   * peers trusted by the trust store alone (no host-name check: nodes are reached by address).
   */
  private BulkWire() {
  }

  /** A transfer's header. */
  static Buffer header(boolean upload, BufferHandle handle, long timeoutMillis) {
    Buffer h = Buffer.buffer();
    HANDLE.encodeToWire(h, handle);
    return Buffer.buffer(HEADER + h.length()).appendInt(MAGIC).appendByte(upload ? UPLOAD : DOWNLOAD)
      .appendLong(timeoutMillis).appendInt(h.length()).appendBuffer(h);
  }

  /** The handle of a header's last field. */
  static BufferHandle handle(Buffer bytes) {
    return HANDLE.decodeFromWire(0, bytes);
  }

  static Buffer dataFrame(int length) {
    return Buffer.buffer(5).appendByte(DATA).appendInt(length);
  }

  static Buffer doneFrame() {
    return Buffer.buffer(1).appendByte(DONE);
  }

  static Buffer failFrame(Throwable failure) {
    CudaException e = Failures.toCudaException(failure);
    byte[] message = String.valueOf(e.getMessage()).getBytes(StandardCharsets.UTF_8);
    int n = Math.min(message.length, MAX_MESSAGE_BYTES);
    return Buffer.buffer(9 + n).appendByte(FAIL).appendInt(e.code().code()).appendInt(n).appendBytes(message, 0, n);
  }

  /** The failure a FAIL frame's code and message name. */
  static CudaException failure(int code, Buffer message) {
    return Failures.fromCode(code, message.toString(StandardCharsets.UTF_8));
  }

  /**
   * Cuts a byte stream into small fields, each handed over whole (a few bytes, gathered here), and
   * runs of bulk bytes, handed over as slices of what arrived (never copied). Each callback says what
   * comes next ({@link #field} or {@link #run}); bytes that arrive when nothing is expected are a
   * protocol error. One connection's context only.
   */
  static final class Cutter {
    private Buffer field;
    private int want;
    private Consumer<Buffer> onField;
    private long run;
    private Consumer<Buffer> onSlice;
    private Runnable onRunEnd;
    private boolean closed;
    private boolean holding;
    private Buffer kept;

    /** Next: {@code n} bytes, handed to {@code then} in one buffer. */
    void field(int n, Consumer<Buffer> then) {
      if (n == 0) {
        // Nothing to wait for (an empty FAIL message): no more bytes may come to complete it.
        then.accept(Buffer.buffer(0));
        return;
      }
      field = Buffer.buffer(n);
      want = n;
      onField = then;
    }

    /** Next: {@code n} bulk bytes, handed to {@code slice} as they arrive, then {@code end}. */
    void run(long n, Consumer<Buffer> slice, Runnable end) {
      run = n;
      onSlice = slice;
      onRunEnd = end;
      if (n == 0) {
        onRunEnd = null;
        end.run();
      }
    }

    /**
     * Nothing more is handed over until {@link #release}: what arrives meanwhile is kept as it came,
     * at most {@code bound} bytes (past them the stream is malformed). Its reader pauses the socket,
     * so what is kept is the rest of one read.
     */
    void hold(int bound) {
      holding = true;
      holdBound = bound;
    }

    private int holdBound;

    /** Hands over what was kept, to what comes next, and what arrives from now on. */
    void release() {
      holding = false;
      Buffer k = kept;
      kept = null;
      if (k != null) {
        feed(k);
      }
    }

    /** Nothing more is read (the stream failed or ended). */
    void close() {
      closed = true;
    }

    /** Feeds what arrived; throws {@link WireFormatException} on bytes nothing expects. */
    void feed(Buffer b) {
      int pos = 0;
      while (pos < b.length() && !closed) {
        if (holding) {
          int n = b.length() - pos;
          if (n > holdBound - (kept == null ? 0 : kept.length())) {
            throw new WireFormatException("the bulk stream sent " + n + " bytes before its header was answered");
          }
          kept = kept == null ? b.slice(pos, b.length()) : Buffer.buffer().appendBuffer(kept).appendBuffer(b, pos, n);
          return;
        }
        if (onField != null) {
          int n = Math.min(want - field.length(), b.length() - pos);
          field.appendBuffer(b, pos, n);
          pos += n;
          if (field.length() == want) {
            Consumer<Buffer> then = onField;
            onField = null;
            then.accept(field);
          }
        } else if (onRunEnd != null) {
          int n = (int) Math.min(run, b.length() - pos);
          run -= n;
          onSlice.accept(b.slice(pos, pos + n));
          pos += n;
          if (run == 0) {
            Runnable end = onRunEnd;
            onRunEnd = null;
            end.run();
          }
        } else {
          throw new WireFormatException("the bulk stream sent " + (b.length() - pos) + " bytes nothing expects");
        }
      }
    }
  }
}
