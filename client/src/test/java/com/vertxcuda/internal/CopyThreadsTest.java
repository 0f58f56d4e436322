package com.vertxcuda.internal;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A copy spread over the copy threads: every unit once, one answer, after the last piece, first failure kept. */
class CopyThreadsTest {

  @Test
  void piecesCoverTheCopyOnceInWholePagesAndAnswerOnce() throws Exception {
    int units = 3 * 1024 * 1024 + 5; // floats: not a whole number of pages
    List<int[]> pieces = Collections.synchronizedList(new ArrayList<>());
    AtomicInteger answers = new AtomicInteger();
    CompletableFuture<Throwable> done = new CompletableFuture<>();
    CopyThreads.spread(units, 4, 4, (from, length) -> pieces.add(new int[] {from, length}), failure -> {
      answers.incrementAndGet();
      done.complete(failure);
    });
    assertNull(done.get(10, TimeUnit.SECONDS));
    assertEquals(4, pieces.size());
    pieces.sort((a, b) -> Integer.compare(a[0], b[0]));
    int next = 0;
    for (int[] p : pieces) {
      assertEquals(next, p[0], "pieces meet");
      assertEquals(0, p[0] * 4 % 4096, "a piece starts on a page");
      assertTrue(p[1] * 4 <= CopyThreads.PIECE, "one bulk copy is at most a PIECE: the JVM reaches safepoints between");
      next = p[0] + p[1];
    }
    assertEquals(units, next, "the pieces end where the copy ends");
    Thread.sleep(50);
    assertEquals(1, answers.get());
  }

  @Test
  void aFailedPieceAnswersOnceAfterTheOthersHaveFinished() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger copying = new AtomicInteger();
    AtomicInteger answers = new AtomicInteger();
    OutOfMemoryError noRoom = new OutOfMemoryError("no room for the array");
    CompletableFuture<Object[]> done = new CompletableFuture<>();
    Thread spreader = new Thread(() -> CopyThreads.spread(4 << 20, 1, 4, (from, length) -> {
      copying.incrementAndGet();
      try {
        if (from == 0) {
          throw noRoom; // the piece on the spreading thread fails at once
        }
        release.await();
      } catch (InterruptedException e) {
        throw new IllegalStateException(e);
      } finally {
        copying.decrementAndGet();
      }
    }, failure -> {
      answers.incrementAndGet();
      done.complete(new Object[] {failure, copying.get()});
    }));
    spreader.start();
    Thread.sleep(100);
    assertTrue(!done.isDone(), "no answer while pieces are still copying");
    release.countDown();
    Object[] outcome = done.get(10, TimeUnit.SECONDS);
    assertSame(noRoom, outcome[0], "the failure is the piece's own, an Error included");
    assertEquals(0, outcome[1], "no piece copies any more when it answers");
    Thread.sleep(50);
    assertEquals(1, answers.get());
  }

  @Test
  void valuesReadAndWrittenInSpreadPiecesComeOutBitExact() throws Exception {
    int n = (9 << 20) / 4 + 3; // 9 MiB of floats and a few: several pieces wherever there are copy threads
    ByteBuffer device = ByteBuffer.allocateDirect(n * 4).order(ByteOrder.LITTLE_ENDIAN);
    for (int k = 0; k < n; k++) {
      device.putInt(k * 4, k * 0x9E3779B1);
    }
    HostElements into = HostElements.arrayFor(BufferHandle.issue("local", 0, 1, 7, DType.F32, n), float[].class);
    CompletableFuture<Throwable> read = new CompletableFuture<>();
    into.read(device.duplicate(), 0, n, read::complete);
    assertNull(read.get(10, TimeUnit.SECONDS));
    float[] back = (float[]) into.array();
    for (int k = 0; k < n; k++) {
      if (Float.floatToRawIntBits(back[k]) != k * 0x9E3779B1) {
        throw new AssertionError("value " + k);
      }
    }
    ByteBuffer again = ByteBuffer.allocateDirect(n * 4);
    CompletableFuture<Throwable> written = new CompletableFuture<>();
    HostElements.of(back).write(0, n, again, written::complete);
    assertNull(written.get(10, TimeUnit.SECONDS));
    byte[] expected = new byte[n * 4];
    byte[] actual = new byte[n * 4];
    device.duplicate().get(expected);
    again.duplicate().get(actual);
    assertArrayEquals(expected, actual);

    CompletableFuture<Throwable> wrongSize = new CompletableFuture<>();
    into.read(device.duplicate().limit(n * 4 - 4), 0, n, wrongSize::complete);
    assertTrue(wrongSize.get(10, TimeUnit.SECONDS) instanceof IllegalStateException, "a reply of the wrong size fails");
  }
}
