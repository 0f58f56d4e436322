package com.vertxcuda.codec;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;

/**
 * The message codec for one wire type. Wire form: {@code int length, byte version, payload}, where
 * length counts the version byte and the payload. Local delivery hands over the same instance:
 * messages are treated as immutable once sent.
 */
public final class WireCodec<T> implements MessageCodec<T, T> {

  private final WireType<T> type;

  public WireCodec(WireType<T> type) {
    this.type = type;
  }

  @Override
  public void encodeToWire(Buffer buffer, T value) {
    int start = buffer.length();
    buffer.appendInt(0).appendByte(type.version());
    type.write(value, new WireOut(buffer));
    buffer.setInt(start, buffer.length() - start - 4);
  }

  @Override
  public T decodeFromWire(int pos, Buffer buffer) {
    String what = type.type().getSimpleName();
    if (pos < 0 || pos > buffer.length() - 5) {
      throw new WireFormatException("malformed " + what + " on the wire: " + (buffer.length() - pos)
        + " bytes is too short for a header");
    }
    int length = buffer.getInt(pos);
    if (length < 1 || length > buffer.length() - pos - 4) {
      throw new WireFormatException("malformed " + what + " on the wire: length " + length
        + " does not fit in " + (buffer.length() - pos - 4) + " bytes");
    }
    byte version = buffer.getByte(pos + 4);
    if (version != type.version()) {
      throw new WireFormatException("unsupported " + what + " wire format version " + version
        + " (this node reads version " + type.version() + ")");
    }
    WireIn in = new WireIn(buffer, pos + 5, pos + 4 + length, what);
    T value;
    try {
      value = type.read(in);
    } catch (WireFormatException e) {
      throw e;
    } catch (RuntimeException e) {
      // A message's own checks (a constructor refusing a field, a list without room) on bytes that
      // decoded: still malformed bytes, so the one failure that decoding answers.
      throw new WireFormatException("malformed " + what + " on the wire: " + e, e);
    }
    in.expectEnd();
    return value;
  }

  @Override
  public T transform(T value) {
    return value;
  }

  @Override
  public String name() {
    return type.name();
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
