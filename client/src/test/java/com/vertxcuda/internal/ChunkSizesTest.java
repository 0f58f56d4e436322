package com.vertxcuda.internal;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How the pump cuts a transfer to a device in this JVM ({@link ChunkedTransfer#localChunk(long, long, int)}):
 * in as many chunks as copy threads fill them, of whole pages, never below {@link ChunkedTransfer#SPLIT_CHUNK}
 * nor above what the device lends a chunk; checked against the chunk counts worked out by hand.
 */
class ChunkSizesTest {

  private static final long LIMIT = 3L << 30; // lends plenty: chunks up to LOCAL_CHUNK
  private static final int KIB = 1 << 10;
  private static final int MIB = 1 << 20;

  private static long chunks(long bytes, int chunk) {
    return (bytes + chunk - 1) / chunk;
  }

  @Test
  void midSizesAreCutInOneChunkPerCopyThread() {
    // 1 MiB over eight threads: chunks of SPLIT_CHUNK (256 KiB), four of them.
    assertEquals(256 * KIB, ChunkedTransfer.localChunk(LIMIT, MIB, 8));
    assertEquals(4, chunks(MIB, ChunkedTransfer.localChunk(LIMIT, MIB, 8)));
    // 2 MiB: eight of 256 KiB; 16 bytes more: eight of 260 KiB (whole pages), the last shorter.
    assertEquals(256 * KIB, ChunkedTransfer.localChunk(LIMIT, 2 * MIB, 8));
    assertEquals(260 * KIB, ChunkedTransfer.localChunk(LIMIT, 2 * MIB + 16, 8));
    assertEquals(8, chunks(2 * MIB + 16, ChunkedTransfer.localChunk(LIMIT, 2 * MIB + 16, 8)));
    // 4 MiB: eight of 512 KiB; 16 MiB: eight of 2 MiB; 64 MiB: eight of LOCAL_CHUNK.
    assertEquals(512 * KIB, ChunkedTransfer.localChunk(LIMIT, 4 * MIB, 8));
    assertEquals(2 * MIB, ChunkedTransfer.localChunk(LIMIT, 16 * MIB, 8));
    assertEquals(ChunkedTransfer.LOCAL_CHUNK, ChunkedTransfer.localChunk(LIMIT, 64 * MIB, 8));
    // Larger: chunks of LOCAL_CHUNK, more than the threads (the ring recycles them).
    assertEquals(ChunkedTransfer.LOCAL_CHUNK, ChunkedTransfer.localChunk(LIMIT, 1L << 30, 8));
    // Four threads: 4 MiB in four chunks of 1 MiB.
    assertEquals(MIB, ChunkedTransfer.localChunk(LIMIT, 4 * MIB, 4));
  }

  @Test
  void oneCopyThreadCutsNothingBelowALocalChunk() {
    assertEquals(ChunkedTransfer.SPLIT_CHUNK, ChunkedTransfer.localChunk(LIMIT, 100 * KIB, 1));
    assertEquals(1, chunks(MIB, ChunkedTransfer.localChunk(LIMIT, MIB, 1)));
    assertEquals(1, chunks(5 * MIB + 48, ChunkedTransfer.localChunk(LIMIT, 5 * MIB + 48, 1)));
    assertEquals(ChunkedTransfer.LOCAL_CHUNK, ChunkedTransfer.localChunk(LIMIT, 16 * MIB, 1));
  }

  @Test
  void aDeviceThatLendsLittleKeepsItsSmallChunks() {
    // A 512 KiB region lends 384 KiB: chunks of MIN_LOCAL_CHUNK however the transfer would be cut.
    assertEquals(ChunkedTransfer.MIN_LOCAL_CHUNK, ChunkedTransfer.localChunk(384 * KIB, 4 * MIB, 8));
    // A 16 MiB limit: a ring (eight chunks) takes a quarter of it at most, chunks of 512 KiB.
    assertEquals(512 * KIB, ChunkedTransfer.localChunk(16L * MIB, 16 * MIB, 8));
    for (long bytes = MIB; bytes < 80L * MIB; bytes += 7 * MIB + 12) {
      int chunk = ChunkedTransfer.localChunk(LIMIT, bytes, 8);
      assertEquals(0, chunk % 4096, bytes + " bytes: whole pages");
      assertTrue(chunk >= ChunkedTransfer.SPLIT_CHUNK && chunk <= ChunkedTransfer.LOCAL_CHUNK, bytes + " bytes");
      assertTrue(chunks(bytes, chunk) <= Math.max(8, chunks(bytes, ChunkedTransfer.LOCAL_CHUNK)), bytes + " bytes");
    }
  }
}
