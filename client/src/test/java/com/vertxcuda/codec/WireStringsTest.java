package com.vertxcuda.codec;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.blas.Transpose;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Strings and enum constants on the wire: a reader keeps the last string it read and gives it again
 * for the same bytes (node ids repeat in every handle of a batch), and reads enum constants by
 * matching their names' bytes; neither may ever give a value other than the one written.
 */
class WireStringsTest {

  @Test
  void stringsThatDifferInAnyByteReadBackAsWritten() {
    // Same lengths, differing in the first, a middle and the last byte; in and past the 8-byte words.
    String base = "0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30";
    List<String> written = new ArrayList<>();
    for (int i = 0; i < base.length(); i++) {
      char[] c = base.toCharArray();
      c[i] = c[i] == 'x' ? 'y' : 'x';
      written.add(base);
      written.add(new String(c));
    }
    written.addAll(Arrays.asList("", "a", "", "abcdefgh", "abcdefgi", "abcdefgh", null, "é-ü", "é-ü", "é-v", null, base));
    Buffer wire = Buffer.buffer();
    WireOut out = new WireOut(wire);
    written.forEach(out::writeString);
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    for (String s : written) {
      assertEquals(s, in.readString());
    }
    in.expectEnd();
  }

  @Test
  void aStringReadAgainIsTheSameInstance() {
    Buffer wire = Buffer.buffer();
    WireOut out = new WireOut(wire);
    out.writeString("node-one").writeString("node-one").writeString("node-two").writeString("node-one");
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    String first = in.readString();
    assertSame(first, in.readString(), "the same bytes again: the string already made");
    assertEquals("node-two", in.readString());
    assertEquals("node-one", in.readString());
  }

  @Test
  void enumConstantsReadBackByName() {
    Buffer wire = Buffer.buffer();
    WireOut out = new WireOut(wire);
    for (DType t : DType.values()) {
      out.writeEnum(t);
    }
    out.writeEnum(null).writeEnum(Transpose.T).writeEnum(Transpose.N);
    // Names past one 8-byte word, several of one length (GEMM, GEMV, GEAM...).
    for (com.vertxcuda.blas.BlasOp op : com.vertxcuda.blas.BlasOp.values()) {
      out.writeEnum(op);
    }
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    for (DType t : DType.values()) {
      assertSame(t, in.readEnum(DType.class));
    }
    assertNull(in.readEnum(DType.class));
    assertSame(Transpose.T, in.readEnum(Transpose.class));
    assertSame(Transpose.N, in.readEnum(Transpose.class));
    for (com.vertxcuda.blas.BlasOp op : com.vertxcuda.blas.BlasOp.values()) {
      assertSame(op, in.readEnum(com.vertxcuda.blas.BlasOp.class));
    }
    in.expectEnd();
  }

  @Test
  void anUnknownNameIsAClearError() {
    Buffer wire = Buffer.buffer();
    new WireOut(wire).writeString("F33");
    WireFormatException e = assertThrows(WireFormatException.class,
      () -> new WireIn(wire, 0, wire.length(), "test").readEnum(DType.class));
    assertTrue(e.getMessage().contains("unknown DType 'F33'"), e.getMessage());
    // A prefix of a name, and a name with a byte more, are not that name.
    Buffer near = Buffer.buffer();
    byte[] f3 = "F3".getBytes(StandardCharsets.UTF_8);
    near.appendInt(f3.length).appendBytes(f3);
    assertThrows(WireFormatException.class, () -> new WireIn(near, 0, near.length(), "test").readEnum(DType.class));
    Buffer longer = Buffer.buffer();
    new WireOut(longer).writeString("F322");
    assertThrows(WireFormatException.class, () -> new WireIn(longer, 0, longer.length(), "test").readEnum(DType.class));
  }

  /**
   * A message in the middle of a larger buffer reads the same whatever memory holds it: a heap array
   * (read in place, at the buffer's own offset into it), a slice of one, or direct memory (copied
   * once); a read past the message's end is refused even where the buffer goes on.
   */
  @Test
  void aMessageReadsTheSameFromHeapSlicesAndDirectMemory() {
    BufferHandle h = new BufferHandle("0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30", 3, 7, 42, DType.C64, 1000, -5, 6, 100, 900);
    Buffer message = Buffer.buffer();
    new WireOut(message).writeInt(-123456789).writeLong(Long.MIN_VALUE + 7).writeDouble(-2.5e-300).writeBoolean(true)
      .writeString("é-ü").writeEnum(DType.BF16).writeHandle(h).writeHandle(null).writeByte((byte) -1);
    Buffer framed = Buffer.buffer().appendString("prefix").appendBuffer(message).appendString("suffix");
    int from = 6;
    int to = from + message.length();
    io.netty.buffer.ByteBuf direct = io.netty.buffer.Unpooled.directBuffer(framed.length());
    direct.writeBytes(framed.getBytes());
    List<Buffer> holders = List.of(framed, framed.slice(0, framed.length()),
      com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(framed.getBytes()).slice(0, framed.length())),
      com.vertxcuda.internal.VertxInternals.buffer(direct));
    for (Buffer holder : holders) {
      WireIn in = new WireIn(holder, from, to, "test");
      assertEquals(-123456789, in.readInt());
      assertEquals(Long.MIN_VALUE + 7, in.readLong());
      assertEquals(-2.5e-300, in.readDouble());
      assertTrue(in.readBoolean());
      assertEquals("é-ü", in.readString());
      assertSame(DType.BF16, in.readEnum(DType.class));
      assertEquals(h, in.readHandle());
      assertNull(in.readHandle());
      assertEquals(-1, in.readByte());
      in.expectEnd();
      WireFormatException past = assertThrows(WireFormatException.class, in::readByte);
      assertTrue(past.getMessage().contains("the message ends at " + to), past.getMessage());
    }
    // A reader told of more bytes than the buffer has stops at its end, though its array holds more.
    Buffer roomy = Buffer.buffer(64).appendInt(7);
    WireIn short4 = new WireIn(roomy, 0, 64, "test");
    assertEquals(7, short4.readInt());
    assertThrows(WireFormatException.class, short4::readInt);
    // Offset into the backing array: a slice that starts past the array's first byte.
    Buffer offset = com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(framed.getBytes()).slice(from, message.length()));
    WireIn in = new WireIn(offset, 0, message.length(), "test");
    assertEquals(-123456789, in.readInt());
    assertEquals(Long.MIN_VALUE + 7, in.readLong());
    direct.release();
  }

  /**
   * Values written in place into a buffer that grows under the writer many times, with appends of
   * others between them (as a link frame's header is), read back in order.
   */
  @Test
  void writesIntoAGrowingBufferSharedWithOtherAppendsReadBackInOrder() {
    Buffer wire = Buffer.buffer(1);
    org.junit.jupiter.api.Assertions.assertNotNull(WireBuffers.appendable(wire),
      "a new Buffer is written in place");
    WireOut out = new WireOut(wire);
    for (int i = 0; i < 5000; i++) {
      out.writeInt(i).writeLong(-i * 1_000_003L).writeString("node-" + (i % 3)).writeEnum(DType.values()[i % DType.values().length]);
      wire.appendByte((byte) i);
      out.writeDouble(i / 7.0).writeBoolean(i % 2 == 0);
    }
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    for (int i = 0; i < 5000; i++) {
      assertEquals(i, in.readInt());
      assertEquals(-i * 1_000_003L, in.readLong());
      assertEquals("node-" + (i % 3), in.readString());
      assertSame(DType.values()[i % DType.values().length], in.readEnum(DType.class));
      assertEquals((byte) i, in.readByte());
      assertEquals(i / 7.0, in.readDouble());
      assertEquals(i % 2 == 0, in.readBoolean());
    }
    in.expectEnd();
  }

  /**
   * A Vert.x Buffer moves to a new Netty buffer when another's append outgrows the old one's maximum
   * (a wrapped array): the writer's next value goes where the Buffer now is, not into the old one.
   */
  @Test
  void aWriterFollowsTheBufferWhenAnotherAppendMovesIt() {
    Buffer wire = com.vertxcuda.internal.VertxInternals.buffer(io.netty.buffer.Unpooled.wrappedBuffer(new byte[8]).clear());
    assertNull(WireBuffers.appendable(wire), "a bounded Buffer is appended to through its API");
    WireOut out = new WireOut(wire);
    out.writeInt(17);
    String text = "longer than the eight bytes the wrapped array may hold";
    wire.appendString(text);
    out.writeLong(-42L).writeString("after");
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    assertEquals(17, in.readInt());
    byte[] raw = new byte[text.length()];
    for (int i = 0; i < raw.length; i++) {
      raw[i] = in.readByte();
    }
    assertEquals(text, new String(raw, StandardCharsets.UTF_8));
    assertEquals(-42L, in.readLong());
    assertEquals("after", in.readString());
    in.expectEnd();
  }

  /**
   * A handle the message already carries goes as a reference to the first time: it reads back as
   * the same object; an equal handle in another object, and one of many distinct handles, read back
   * equal; a reference the message has not earned yet, or a tag that is not one, is refused.
   */
  @Test
  void aHandleWrittenAgainReadsBackAsTheFirstAndCostsFiveBytes() {
    BufferHandle shared = new BufferHandle("0f6c2a9e-4b1d-4c3e-9a7b-5d2e8f1c6a30", 0, 2, 7, DType.F32, 4096, 11, 12, 0, 4096);
    BufferHandle twin = new BufferHandle(shared.node(), 0, 2, 7, DType.F32, 4096, 11, 12, 0, 4096);
    Buffer once = Buffer.buffer();
    new WireOut(once).writeHandle(shared);
    Buffer wire = Buffer.buffer();
    WireOut out = new WireOut(wire);
    List<BufferHandle> written = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      BufferHandle own = new BufferHandle(shared.node(), 0, 2, 100 + i, DType.F16, 64, i, -i, i % 5, 32);
      out.writeHandle(shared).writeHandle(own).writeHandle(null);
      written.add(own);
    }
    out.writeHandle(twin);
    // 300 distinct handles in full, the shared one in full once, then 299 references of 5 bytes, 300 nulls of 1.
    assertTrue(wire.length() <= 302 * once.length() + 299 * 5 + 300, wire.length() + " bytes");
    WireIn in = new WireIn(wire, 0, wire.length(), "test");
    BufferHandle first = in.readHandle();
    assertEquals(shared, first);
    for (int i = 0; i < 300; i++) {
      if (i > 0) {
        assertSame(first, in.readHandle(), "the shared handle, time " + i);
      }
      assertEquals(written.get(i), in.readHandle(), "handle " + i);
      assertNull(in.readHandle());
    }
    assertEquals(twin, in.readHandle());
    in.expectEnd();

    Buffer forged = Buffer.buffer().appendByte((byte) 2).appendInt(0);
    WireFormatException early = assertThrows(WireFormatException.class,
      () -> new WireIn(forged, 0, forged.length(), "test").readHandle());
    assertTrue(early.getMessage().contains("handle 0 of the 0 read so far"), early.getMessage());
    Buffer beyond = Buffer.buffer();
    new WireOut(beyond).writeHandle(shared);
    beyond.appendByte((byte) 2).appendInt(1);
    WireIn two = new WireIn(beyond, 0, beyond.length(), "test");
    assertEquals(shared, two.readHandle());
    assertThrows(WireFormatException.class, two::readHandle);
    Buffer tag = Buffer.buffer().appendByte((byte) 3);
    WireFormatException bad = assertThrows(WireFormatException.class, () -> new WireIn(tag, 0, tag.length(), "test").readHandle());
    assertTrue(bad.getMessage().contains("bad handle tag 3"), bad.getMessage());
  }
}
