package com.vertxcuda.device.isolation;

import com.vertxcuda.internal.VertxInternals;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.codec.WireIn;
import com.vertxcuda.codec.WireOut;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.WireCodec;
import com.vertxcuda.device.spi.UnreadableRequest;
import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;

/**
 * The link protocol between a device verticle and its device host, in one place. A frame is
 * {@code int length, byte kind, long id, fields}; message bodies travel in the codecs' wire form.
 */
final class LinkFrame {

  /** What a frame is. */
  enum Kind {
    /**
     * parent → child: queue {@code body} for {@code library} (null: the device), sent by node
     * {@code text} (its owner), its phases measured when {@code measure} (a flags byte after the
     * library's); answer REPLY or FAILURE.
     */
    REQUEST,
    /**
     * the successful answer to REQUEST {@code id}; with {@code code} 1, the request's phases (queue,
     * stream wait, GPU, copy: four longs, ns) come before the body.
     */
    REPLY,
    /** the failed answer to REQUEST {@code id}: failure code and message. */
    FAILURE,
    /** child → parent: the context is poisoned ({@code text}: the sticky error). */
    POISONED,
    /** child → parent: the context is deployed and serving ({@code id}: the pid). */
    HELLO,
    /** child → parent: the context could not start ({@code text}: why). */
    START_FAILED,
    /** child → parent, first frame on the link: the secret the parent gave it ({@code text}). */
    AUTH,
    /** parent → child: is the submission thread turning? */
    PING,
    /** child → parent: the answer to PING {@code id}: {@code code} ms the submission thread has been stuck. */
    PONG
  }

  private static final Map<String, WireCodec<Object>> BY_NAME = new HashMap<>();
  private static final Map<Class<?>, WireCodec<Object>> BY_CLASS = new HashMap<>();

  static {
    for (WireType<?> t : CudaCodecs.wireTypes()) {
      @SuppressWarnings("unchecked")
      WireCodec<Object> codec = (WireCodec<Object>) CudaCodecs.codec(t);
      BY_NAME.put(codec.name(), codec);
      BY_CLASS.put(t.type(), codec);
    }
  }

  final Kind kind;
  final long id;
  final Library library;
  final Object body;
  final long code;
  final String text;
  /** A reply's phases as the device host measured them; null when it did not. */
  final RequestPhases phases;
  /** A request whose phases the device host measures (and sends with its reply). */
  final boolean measure;

  private LinkFrame(Kind kind, long id, Library library, Object body, long code, String text) {
    this(kind, id, library, body, code, text, null);
  }

  private LinkFrame(Kind kind, long id, Library library, Object body, long code, String text, RequestPhases phases) {
    this(kind, id, library, body, code, text, phases, false);
  }

  private LinkFrame(Kind kind, long id, Library library, Object body, long code, String text, RequestPhases phases,
                    boolean measure) {
    this.measure = measure;
    this.kind = kind;
    this.id = id;
    this.library = library;
    this.body = body;
    this.code = code;
    this.text = text;
    this.phases = phases;
  }

  /**
   * A request; {@code timeLeft} (ns) carries its deadline across processes, {@code owner} the node
   * that sent it, {@code measure} whether the device host measures its phases.
   */
  static LinkFrame request(long id, Library library, Object body, long timeLeft, String owner, boolean measure) {
    return new LinkFrame(Kind.REQUEST, id, library, body, timeLeft, owner, null, measure);
  }

  static LinkFrame reply(long id, Object body) {
    return new LinkFrame(Kind.REPLY, id, null, body, 0, null);
  }

  /** A reply with the phases the device host measured ({@code phases} null: none). */
  static LinkFrame reply(long id, Object body, RequestPhases phases) {
    return new LinkFrame(Kind.REPLY, id, null, body, phases == null ? 0 : 1, null, phases);
  }

  static LinkFrame failure(long id, int code, String text) {
    return new LinkFrame(Kind.FAILURE, id, null, null, code, text);
  }

  static LinkFrame notice(Kind kind, long id, long code, String text) {
    return new LinkFrame(kind, id, null, null, code, text);
  }

  /** Frames are encoded into one buffer per thread, which grows once and is then reused. */
  private static final ThreadLocal<io.netty.buffer.ByteBuf> SCRATCH =
    ThreadLocal.withInitial(() -> io.netty.buffer.Unpooled.buffer(64 << 10));
  /** A scratch buffer that grew past this is dropped after use rather than kept. */
  private static final int SCRATCH_KEPT = 4 << 20;

  /**
   * The frame with its length prefix, ready to write. The bytes live in this thread's scratch
   * buffer: write them (or copy them) before the thread encodes another frame. Throws for a body
   * type that has no codec.
   */
  ByteBuffer encode() {
    io.netty.buffer.ByteBuf scratch = SCRATCH.get();
    if (scratch.capacity() > SCRATCH_KEPT) {
      scratch = io.netty.buffer.Unpooled.buffer(64 << 10);
      SCRATCH.set(scratch);
    }
    scratch.clear();
    Buffer b = VertxInternals.buffer(scratch);
    b.appendInt(0).appendByte((byte) kind.ordinal()).appendLong(id).appendLong(code);
    WireOut out = new WireOut(b);
    switch (kind) {
      case REQUEST:
        b.appendByte((byte) (library == null ? -1 : library.ordinal())).appendByte((byte) (measure ? 1 : 0));
        out.writeString(text);
        writeBody(b, out);
        break;
      case REPLY:
        if (phases != null) {
          b.appendLong(phases.getQueueNanos()).appendLong(phases.getStreamWaitNanos())
            .appendLong(phases.getGpuNanos()).appendLong(phases.getCopyNanos());
        }
        writeBody(b, out);
        break;
      default:
        out.writeString(text);
    }
    int length = b.length() - 4;
    if (length > Link.MAX_FRAME) {
      // Never sent: the far side would end the link (and with it the context) on such a frame. Only
      // this request fails; bulk data crosses through the shared region, not in frames.
      throw new com.vertxcuda.CudaException(com.vertxcuda.FailureCode.BAD_REQUEST, "a " + kind.name().toLowerCase()
        + " of " + length + " bytes does not fit the device host's link (at most " + Link.MAX_FRAME
        + " bytes a frame; bulk data goes through uploads and downloads)");
    }
    b.setInt(0, length);
    return VertxInternals.byteBuf(b).nioBuffer();
  }

  private void writeBody(Buffer b, WireOut out) {
    if (body == null) {
      out.writeString(null);
      return;
    }
    WireCodec<Object> codec = BY_CLASS.get(body.getClass());
    if (codec == null) {
      throw new IllegalArgumentException("no wire codec for " + body.getClass().getName());
    }
    out.writeString(codec.name());
    codec.encodeToWire(b, body);
  }

  /** The kinds and libraries by wire number (values() clones its array on every call: once per frame). */
  private static final Kind[] KINDS = Kind.values();
  private static final Library[] LIBRARIES = Library.values();

  /** Decodes one frame (without its length prefix); copies what it keeps. */
  static LinkFrame decode(ByteBuffer frame) {
    byte[] bytes = new byte[frame.remaining()];
    frame.get(bytes);
    // Wrapped, not copied again (Buffer.buffer(byte[]) copies).
    Buffer record = VertxInternals.buffer(Unpooled.wrappedBuffer(bytes));
    if (record.length() < 17) {
      throw new WireFormatException("malformed link frame: " + record.length() + " bytes");
    }
    int k = record.getByte(0);
    if (k < 0 || k >= KINDS.length) {
      throw new WireFormatException("malformed link frame: kind " + k);
    }
    Kind kind = KINDS[k];
    long id = record.getLong(1);
    long code = record.getLong(9);
    switch (kind) {
      case REQUEST: {
        if (record.length() < 19) {
          throw new WireFormatException("malformed request frame");
        }
        int l = record.getByte(17);
        if (l < -1 || l >= LIBRARIES.length) {
          throw new WireFormatException("malformed request frame: library " + l);
        }
        int flags = record.getByte(18);
        if ((flags & ~1) != 0) {
          throw new WireFormatException("malformed request frame: flags " + flags);
        }
        WireIn in = new WireIn(record, 19, record.length(), "link frame");
        String owner = in.readString();
        Object body;
        try {
          body = readBody(record, in);
        } catch (WireFormatException e) {
          // The frame itself is whole: only this request fails (BAD_REQUEST from its handler).
          body = new UnreadableRequest(e.getMessage());
        }
        return new LinkFrame(kind, id, l < 0 ? null : LIBRARIES[l], body, code, owner, null, flags == 1);
      }
      case REPLY: {
        if (code != 0 && code != 1) {
          throw new WireFormatException("malformed reply frame: " + code);
        }
        RequestPhases phases = null;
        int at = 17;
        if (code == 1) {
          if (record.length() < at + 32) {
            throw new WireFormatException("malformed reply frame: its phases are cut short");
          }
          phases = new RequestPhases().setQueueNanos(record.getLong(at)).setStreamWaitNanos(record.getLong(at + 8))
            .setGpuNanos(record.getLong(at + 16)).setCopyNanos(record.getLong(at + 24));
          at += 32;
        }
        return new LinkFrame(kind, id, null, readBody(record, new WireIn(record, at, record.length(), "link frame")),
          code, null, phases);
      }
      default:
        return new LinkFrame(kind, id, null, null, code, new WireIn(record, 17, record.length(), "link frame").readString());
    }
  }

  private static Object readBody(Buffer record, WireIn in) {
    String name = in.readString();
    if (name == null) {
      return null;
    }
    WireCodec<Object> codec = BY_NAME.get(name);
    if (codec == null) {
      throw new WireFormatException("malformed link frame: unknown codec " + name);
    }
    // The body is the rest of the frame, starting where the reader stands.
    return codec.decodeFromWire(record.length() - in.remaining(), record);
  }
}
