package com.vertxcuda.device.isolation;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.Library;
import com.vertxcuda.RequestPhases;
import com.vertxcuda.codec.WireFormatException;
import com.vertxcuda.message.FillRequest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link's request and reply frames as the device host reads them: a request says whether its
 * phases are measured (a caller timing its work asked), a reply carries the phases measured, and a
 * request whose flags byte holds anything else is malformed.
 */
class LinkFrameTest {

  private static final BufferHandle HANDLE = new BufferHandle("node-a", 0, 7, 3, DType.F32, 256, 11, 12, 0, 256);

  // The frame as the far side reads it: without its length prefix.
  private static ByteBuffer wire(LinkFrame f) {
    ByteBuffer b = f.encode();
    int length = b.getInt();
    assertEquals(length, b.remaining());
    ByteBuffer copy = ByteBuffer.allocate(length);
    copy.put(b).flip();
    return copy;
  }

  @ParameterizedTest
  @ValueSource(booleans = {true, false})
  void aRequestSaysWhetherItsPhasesAreMeasured(boolean measure) {
    LinkFrame read = LinkFrame.decode(wire(LinkFrame.request(42, Library.BLAS, FillRequest.of(HANDLE, 2.5), 1_000_000L,
      "owner-node", measure)));
    assertEquals(LinkFrame.Kind.REQUEST, read.kind);
    assertEquals(42, read.id);
    assertEquals(Library.BLAS, read.library);
    assertEquals(1_000_000L, read.code);
    assertEquals("owner-node", read.text);
    assertEquals(measure, read.measure);
    assertTrue(read.body instanceof FillRequest, String.valueOf(read.body));
    assertEquals(HANDLE, ((FillRequest) read.body).getHandle());
  }

  @Test
  void aReplyCarriesThePhasesMeasured() {
    RequestPhases p = new RequestPhases().setQueueNanos(1_000).setStreamWaitNanos(2_000).setGpuNanos(30_000).setCopyNanos(-1);
    LinkFrame read = LinkFrame.decode(wire(LinkFrame.reply(5, FillRequest.of(HANDLE, 1), p)));
    assertEquals(LinkFrame.Kind.REPLY, read.kind);
    assertEquals(1_000, read.phases.getQueueNanos());
    assertEquals(2_000, read.phases.getStreamWaitNanos());
    assertEquals(30_000, read.phases.getGpuNanos());
    assertEquals(-1, read.phases.getCopyNanos());
    assertNull(LinkFrame.decode(wire(LinkFrame.reply(6, FillRequest.of(HANDLE, 1), null))).phases);
  }

  @Test
  void aRequestWithUnknownFlagsIsMalformed() {
    ByteBuffer frame = wire(LinkFrame.request(1, null, FillRequest.of(HANDLE, 1), 1_000L, "n", true));
    // kind (1) + id (8) + code (8) + library (1), then the flags byte.
    frame.put(18, (byte) 2);
    WireFormatException e = assertThrows(WireFormatException.class, () -> LinkFrame.decode(frame));
    assertTrue(e.getMessage().contains("flags"), e.getMessage());
  }
}
