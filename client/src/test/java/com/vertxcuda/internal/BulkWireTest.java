package com.vertxcuda.internal;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The side channel's framing: a FAIL frame reaches its reader whole, an empty message included. */
class BulkWireTest {

  private static List<CudaException> read(Buffer frame, int feedSize) {
    List<CudaException> failures = new ArrayList<>();
    BulkWire.Cutter cutter = new BulkWire.Cutter();
    cutter.field(9, head -> cutter.field(head.getInt(5),
      message -> failures.add(BulkWire.failure(head.getInt(1), message))));
    for (int at = 0; at < frame.length(); at += feedSize) {
      cutter.feed(frame.slice(at, Math.min(frame.length(), at + feedSize)));
    }
    return failures;
  }

  @Test
  void aFailFrameArrivesWholeWhateverItsMessage() {
    Buffer named = BulkWire.failFrame(new CudaException(FailureCode.FORBIDDEN, "the token does not match"));
    for (int feed : new int[] {1, 3, named.length()}) {
      List<CudaException> got = read(named, feed);
      assertEquals(1, got.size(), "fed " + feed + " bytes at a time");
      assertEquals(FailureCode.FORBIDDEN, got.get(0).code());
    }
    // An empty message: nothing follows the header, and the failure is still heard at once.
    Buffer empty = Buffer.buffer().appendByte(named.getByte(0)).appendInt(FailureCode.TIMEOUT.code()).appendInt(0);
    List<CudaException> got = read(empty, empty.length());
    assertEquals(1, got.size());
    assertEquals(FailureCode.TIMEOUT, got.get(0).code());
  }
}
