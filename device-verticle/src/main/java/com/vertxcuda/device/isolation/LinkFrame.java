package com.vertxcuda.device.isolation;

import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.device.context.UnreadableRequest;
import com.vertxcuda.codec.WireIn;
import com.vertxcuda.codec.WireOut;
import com.vertxcuda.codec.WireType;
import com.vertxcuda.codec.impl.WireCodec;
import io.vertx.core.buffer.Buffer;

import java.util.HashMap;
import java.util.Map;

/**
 * The link protocol between a device verticle and its device host, in one place. A frame is
 * {@code int length, byte kind, long id, fields}; message bodies travel in the codecs' wire form.
 */
final class LinkFrame {

  /** What a frame is. */
  enum Kind {
    /** parent → child: deliver {@code body} to {@code address} and answer with REPLY or FAILURE. */
    REQUEST,
    /** the successful answer to REQUEST {@code id}. */
    REPLY,
    /** the failed answer to REQUEST {@code id}: failure code and message. */
    FAILURE,
    /** child → parent: the context is poisoned ({@code text}: the sticky error). */
    POISONED,
    /** child → parent: the context is deployed and serving. */
    HELLO,
    /** child → parent: the context could not start ({@code text}: why). */
    START_FAILED,
    /**
     * parent → child: request number {@code id} was answered before it reached the link (refused by
     * the parent); the device host lets later requests pass it at once.
     */
    SKIP
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
  final String address;
  final Object body;
  final int code;
  final String text;
  /** A request's sequence number (0: none), see {@code RequestSequencer}. */
  final long sequence;

  private LinkFrame(Kind kind, long id, String address, Object body, int code, String text, long sequence) {
    this.kind = kind;
    this.id = id;
    this.address = address;
    this.body = body;
    this.code = code;
    this.text = text;
    this.sequence = sequence;
  }

  private LinkFrame(Kind kind, long id, String address, Object body, int code, String text) {
    this(kind, id, address, body, code, text, 0);
  }

  static LinkFrame request(long id, String address, Object body, long sequence) {
    return new LinkFrame(Kind.REQUEST, id, address, body, 0, null, sequence);
  }

  static LinkFrame reply(long id, Object body) {
    return new LinkFrame(Kind.REPLY, id, null, body, 0, null);
  }

  static LinkFrame failure(long id, int code, String text) {
    return new LinkFrame(Kind.FAILURE, id, null, null, code, text);
  }

  static LinkFrame notice(Kind kind, long value, String text) {
    return new LinkFrame(kind, value, null, null, 0, text);
  }

  /** The frame with its length prefix. Throws for a body type that has no codec. */
  Buffer encode() {
    Buffer b = Buffer.buffer(64);
    b.appendInt(0).appendByte((byte) kind.ordinal()).appendLong(id);
    WireOut out = new WireOut(b);
    switch (kind) {
      case REQUEST:
        out.writeString(address).writeLong(sequence);
        writeBody(b, out);
        break;
      case REPLY:
        writeBody(b, out);
        break;
      case FAILURE:
        out.writeInt(code).writeString(text);
        break;
      default:
        out.writeString(text);
    }
    b.setInt(0, b.length() - 4);
    return b;
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

  /** Decodes one frame (without its length prefix). */
  static LinkFrame decode(Buffer record) {
    if (record.length() < 9) {
      throw new WireFormatException("malformed link frame: " + record.length() + " bytes");
    }
    int k = record.getByte(0);
    if (k < 0 || k >= Kind.values().length) {
      throw new WireFormatException("malformed link frame: kind " + k);
    }
    Kind kind = Kind.values()[k];
    long id = record.getLong(1);
    WireIn in = new WireIn(record, 9, record.length(), "link frame");
    switch (kind) {
      case REQUEST: {
        String address = in.readString();
        long sequence = in.readLong();
        Object body;
        try {
          body = readBody(record, in);
        } catch (WireFormatException e) {
          // The frame itself is whole: only this request fails (BAD_REQUEST from its verticle).
          body = new UnreadableRequest(e.getMessage());
        }
        return new LinkFrame(kind, id, address, body, 0, null, sequence);
      }
      case REPLY:
        return new LinkFrame(kind, id, null, readBody(record, in), 0, null);
      case FAILURE:
        return new LinkFrame(kind, id, null, null, in.readInt(), in.readString());
      default:
        return new LinkFrame(kind, id, null, null, 0, in.readString());
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
