package com.vertxcuda.device.context;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Where a copy through memory pinned in pieces is split: at the end of each piece, never across one. */
@Tag("runs-once")
class TransferRequestTest {

  @Test
  void aCopyIsSplitWherePiecesEnd() {
    long mib = 1 << 20;
    // 10 MiB starting 60 MiB into memory pinned in 64 MiB pieces: 4 MiB, then the 6 MiB after the boundary.
    TransferRequest t = new TransferRequest(null, ByteBuffer.allocate(0), TransferRequest.Direction.TO_DEVICE,
      60 * mib, 64 * mib);
    assertEquals(4 * mib, t.pieceFrom(0, 10 * mib));
    assertEquals(6 * mib, t.pieceFrom(4 * mib, 6 * mib));
    // 200 MiB from offset 0: whole pieces, then the rest.
    TransferRequest big = new TransferRequest(null, ByteBuffer.allocate(0), TransferRequest.Direction.TO_HOST, 0, 64 * mib);
    assertEquals(64 * mib, big.pieceFrom(0, 200 * mib));
    assertEquals(64 * mib, big.pieceFrom(64 * mib, 136 * mib));
    assertEquals(8 * mib, big.pieceFrom(192 * mib, 8 * mib));
    // Memory pinned in one piece (or not at all): one copy.
    TransferRequest whole = new TransferRequest(null, ByteBuffer.allocate(0), TransferRequest.Direction.TO_DEVICE);
    assertEquals(200 * mib, whole.pieceFrom(0, 200 * mib));
  }
}
