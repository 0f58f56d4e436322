package com.vertxcuda.device.isolation;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The link between a device verticle and its device host, both ends in this JVM over a Unix socket
 * and rings in direct memory (the processes map the same bytes from the region's file): frames of
 * every size arrive whole and in each sender's order, whether the reader spins or blocks; a full
 * ring never blocks a sender; what a peer wrote before it went is read before the link ends; a
 * malformed ring ends the link.
 */
@Tag("runs-once")
@Tag("alone")
class LinkTest {

  private final List<Link> links = new ArrayList<>();

  @AfterEach
  void close() {
    links.forEach(Link::close);
  }

  private final class Pair {
    final ByteBuffer rings = ByteBuffer.allocateDirect(LinkRing.PAIR_BYTES);
    final SocketChannel nearSocket;
    final SocketChannel farSocket;
    final BlockingQueue<String> nearClosed = new LinkedBlockingQueue<>();
    final BlockingQueue<String> farClosed = new LinkedBlockingQueue<>();
    Link near;
    Link far;

    Pair(Path dir) throws Exception {
      Path socket = dir.resolve("link.sock");
      try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
        server.bind(UnixDomainSocketAddress.of(socket));
        nearSocket = SocketChannel.open(UnixDomainSocketAddress.of(socket));
        farSocket = server.accept();
      }
    }

    void start(long spinNanos, Consumer<ByteBuffer> atNear, Consumer<ByteBuffer> atFar) throws Exception {
      start(spinNanos, atNear, atFar, Link.DEFAULT_MAX_BACKLOG);
    }

    void start(long spinNanos, Consumer<ByteBuffer> atNear, Consumer<ByteBuffer> atFar, long maxBacklog)
      throws Exception {
      near = new Link(nearSocket, LinkRing.toNode(rings), LinkRing.toDeviceHost(rings), "test-near", spinNanos, atNear,
        (why, byPeer) -> nearClosed.add(why), maxBacklog);
      far = new Link(farSocket, LinkRing.toDeviceHost(rings), LinkRing.toNode(rings), "test-far", spinNanos, atFar,
        (why, byPeer) -> farClosed.add(why));
      links.add(near);
      links.add(far);
      near.start();
      far.start();
    }
  }

  // A frame (with its length prefix) of `length` bytes: sender, sequence, then a pattern of both.
  private static ByteBuffer frame(int sender, int seq, int length) {
    ByteBuffer b = ByteBuffer.allocate(4 + length);
    b.putInt(length).putInt(sender).putInt(seq);
    for (int i = 8; i < length; i++) {
      b.put((byte) (sender * 31 + seq * 7 + i));
    }
    return b.flip();
  }

  private static String check(ByteBuffer f) {
    int sender = f.getInt(f.position());
    int seq = f.getInt(f.position() + 4);
    for (int i = 8; i < f.remaining(); i++) {
      if (f.get(f.position() + i) != (byte) (sender * 31 + seq * 7 + i)) {
        return "frame " + sender + "/" + seq + " of " + f.remaining() + " bytes is wrong at byte " + i;
      }
    }
    return null;
  }

  /**
   * Three threads send 600 frames each, from 8 bytes to more than a ring holds (so in pieces and
   * through the backlog), while the far side reads: each arrives whole, each sender's in its order.
   * With spinning readers, and with readers that block (woken by nudges) as on a small host.
   */
  @ParameterizedTest
  @ValueSource(longs = {0, 200_000})
  void framesOfEverySizeArriveWholeAndInEachSendersOrder(long spinNanos, @TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    int senders = 3;
    int each = 600;
    int[] next = new int[senders];
    List<String> wrong = new ArrayList<>();
    CountDownLatch all = new CountDownLatch(senders * each);
    long[] bytes = new long[1];
    p.start(spinNanos, f -> { }, f -> {
      int sender = f.getInt(f.position());
      int seq = f.getInt(f.position() + 4);
      String bad = check(f);
      if (bad == null && seq != next[sender]) {
        bad = "sender " + sender + ": frame " + seq + " came where " + next[sender] + " was due";
      }
      if (bad != null) {
        wrong.add(bad);
      }
      next[sender] = seq + 1;
      bytes[0] += f.remaining();
      all.countDown();
    });
    List<Thread> threads = new ArrayList<>();
    for (int s = 0; s < senders; s++) {
      int sender = s;
      Thread t = new Thread(() -> {
        Random random = new Random(sender);
        for (int seq = 0; seq < each; seq++) {
          int length = seq % 100 == 99 ? LinkRing.CAPACITY + LinkRing.CAPACITY / 3 + random.nextInt(4096)
            : seq % 10 == 9 ? 64 * 1024 + random.nextInt(200_000) : 8 + random.nextInt(2000);
          p.near.send(frame(sender, seq, length));
        }
      });
      threads.add(t);
      t.start();
    }
    for (Thread t : threads) {
      t.join(60_000);
    }
    assertTrue(all.await(60, TimeUnit.SECONDS), all.getCount() + " frames did not arrive");
    assertEquals(List.of(), wrong);
    for (int s = 0; s < senders; s++) {
      assertEquals(each, next[s], "frames of sender " + s);
    }
    assertTrue(bytes[0] > 6L * senders * LinkRing.CAPACITY, "bytes " + bytes[0]);
    assertTrue(p.near.isOpen() && p.far.isOpen());
  }

  /**
   * The far side stops reading for a second (its handler busy): the near side sends 16 MiB of frames,
   * four rings' worth, in that time without waiting (a sender is an event loop), and they arrive in
   * order once the far side reads again.
   */
  @Test
  void aFullRingNeverBlocksTheSender(@TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    CountDownLatch busy = new CountDownLatch(1);
    BlockingQueue<Integer> got = new LinkedBlockingQueue<>();
    p.start(200_000, f -> { }, f -> {
      int seq = f.getInt(f.position() + 4);
      if (seq == 0) {
        busy.countDown();
        sleep(1_000);
      }
      got.add(seq);
    });
    p.near.send(frame(0, 0, 64));
    assertTrue(busy.await(10, TimeUnit.SECONDS));
    int frames = 256;
    long start = System.nanoTime();
    for (int seq = 1; seq <= frames; seq++) {
      p.near.send(frame(0, seq, 64 * 1024));
    }
    long sendMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(sendMillis < 900, "sending 16 MiB into a ring of " + LinkRing.CAPACITY + " bytes took " + sendMillis
      + " ms: it waited for the reader");
    for (int seq = 0; seq <= frames; seq++) {
      Integer s = got.poll(20, TimeUnit.SECONDS);
      assertNotNull(s, "frame " + seq + " never came");
      assertEquals(seq, s.intValue());
    }
    p.near.flushed(TimeUnit.SECONDS.toNanos(5));
  }

  /** The far side writes three frames and goes (its process exits): all three are read, then the link ends. */
  @ParameterizedTest
  @ValueSource(longs = {0, 200_000})
  void whatAPeerWroteBeforeItWentIsReadBeforeTheLinkEnds(long spinNanos, @TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    BlockingQueue<Integer> got = new LinkedBlockingQueue<>();
    p.start(spinNanos, f -> got.add(f.getInt(f.position() + 4)), f -> { });
    for (int seq = 0; seq < 3; seq++) {
      p.far.send(frame(1, seq, 100));
    }
    p.farSocket.close();
    assertEquals("the peer closed the link", p.nearClosed.poll(10, TimeUnit.SECONDS));
    assertEquals(List.of(0, 1, 2), new ArrayList<>(got));
    assertTrue(!p.near.isOpen());
  }

  /** A record whose length runs past the ring's end (a corrupted ring) ends the link, with why. */
  @Test
  void aMalformedRingEndsTheLink(@TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    List<ByteBuffer> got = new ArrayList<>();
    p.start(0, got::add, f -> { });
    // The ring toward the near side: its header (tail first), then the records.
    ByteBuffer toNear = p.rings.slice(LinkRing.BYTES, LinkRing.BYTES).order(ByteOrder.nativeOrder());
    int records = LinkRing.BYTES - LinkRing.CAPACITY;
    toNear.putInt(records, LinkRing.CAPACITY);
    toNear.putInt(records + 4, LinkRing.CAPACITY);
    toNear.putLong(0, 64);
    // As a sender would: the near reader blocks (no spin), so nudge it.
    p.farSocket.write(ByteBuffer.wrap(new byte[] {1}));
    String why = p.nearClosed.poll(10, TimeUnit.SECONDS);
    assertNotNull(why, "the link did not end");
    assertTrue(why.startsWith("the link failed: malformed link"), why);
    assertEquals(List.of(), got);
  }

  /**
   * The near reader's handler throws an Error (as running out of heap for a frame would): the link
   * ends at once, saying why, instead of leaving a dead reader behind an open link.
   */
  @ParameterizedTest
  @ValueSource(longs = {0, 200_000})
  void anErrorInTheReaderEndsTheLinkAtOnce(long spinNanos, @TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    p.start(spinNanos, f -> {
      throw new OutOfMemoryError("no heap for this frame (injected)");
    }, f -> { });
    long sent = System.nanoTime();
    p.far.send(frame(1, 0, 100));
    String why = p.nearClosed.poll(10, TimeUnit.SECONDS);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);
    assertNotNull(why, "the link did not end");
    assertTrue(why.contains("OutOfMemoryError") && why.contains("injected"), why);
    assertTrue(millis < 1_000, "the link ended " + millis + " ms after the frame");
    assertTrue(!p.near.isOpen());
  }

  /**
   * The far side stops reading: the near side's frames fill the ring, then the backlog up to its
   * bound, and a frame past it is refused (send answers false) while a small one still goes; once
   * the far side reads again, every frame taken arrives, in order, and none refused.
   */
  @Test
  void theBacklogIsBoundedInBytes(@TempDir Path dir) throws Exception {
    Pair p = new Pair(dir);
    long bound = 1 << 20;
    CountDownLatch reading = new CountDownLatch(1);
    CountDownLatch busy = new CountDownLatch(1);
    BlockingQueue<Integer> got = new LinkedBlockingQueue<>();
    p.start(0, f -> { }, f -> {
      int seq = f.getInt(f.position() + 4);
      if (seq == 0) {
        busy.countDown();
        await(reading);
      }
      got.add(seq);
    }, bound);
    p.near.send(frame(0, 0, 64));
    assertTrue(busy.await(10, TimeUnit.SECONDS));
    int frameBytes = 64 * 1024;
    List<Integer> taken = new ArrayList<>(List.of(0));
    int seq = 1;
    int refused = 0;
    // Four rings' worth: far more than the ring and the backlog hold.
    for (; seq <= 4 * LinkRing.CAPACITY / frameBytes; seq++) {
      if (p.near.send(frame(0, seq, frameBytes))) {
        taken.add(seq);
      } else {
        refused++;
      }
      assertTrue(p.near.backlogBytes() <= bound, "the backlog holds " + p.near.backlogBytes() + " bytes");
    }
    assertTrue(refused > 0, "nothing was refused");
    long inRingAndBacklog = (long) (taken.size() - 1) * (frameBytes + 8);
    assertTrue(inRingAndBacklog <= LinkRing.CAPACITY + bound + frameBytes, inRingAndBacklog + " bytes taken");
    // A small frame (a failure, a notice) goes whatever the backlog holds.
    assertTrue(p.near.send(frame(0, seq, 100)));
    taken.add(seq);
    reading.countDown();
    for (int expected : taken) {
      Integer s = got.poll(20, TimeUnit.SECONDS);
      assertNotNull(s, "frame " + expected + " never came");
      assertEquals(expected, s.intValue());
    }
    p.near.flushed(TimeUnit.SECONDS.toNanos(5));
    assertEquals(0, p.near.backlogBytes());
    assertEquals(null, got.poll(100, TimeUnit.MILLISECONDS), "a refused frame arrived");
    // With room again, large frames are taken again.
    assertTrue(p.near.send(frame(0, seq + 1, frameBytes)));
    assertEquals(seq + 1, got.poll(20, TimeUnit.SECONDS).intValue());
  }

  private static void await(CountDownLatch latch) {
    try {
      latch.await(30, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
