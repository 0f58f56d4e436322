package com.vertxcuda.device.isolation;

import java.util.concurrent.locks.LockSupport;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One frame there and back over the link between a device verticle and its device host, both
 * readers spinning as on a GPU host: the link's own share of every request's round trip in process
 * isolation. The far side echoes each frame as it gets it and the near side sends the next one as
 * the echo lands, {@value #ROUND_TRIPS} times per operation, while the benchmark's thread waits
 * parked (on a two-core machine a third spinning thread would measure the scheduler).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@OperationsPerInvocation(LinkRoundTripBenchmark.ROUND_TRIPS)
public class LinkRoundTripBenchmark {

  private Path directory;
  private Link near;
  private Link far;
  static final int ROUND_TRIPS = 1000;
  private final AtomicLong answers = new AtomicLong();
  private volatile long target;
  private volatile Thread waiter;
  /** Bytes of a frame: about a fill's, and a large one (a batch of a few thousand coalesced GEMMs). */
  @Param({"64", "440000"})
  public int frameBytes;
  private ByteBuffer frame;

  @Setup(Level.Trial)
  public void setup() throws Exception {
    directory = Files.createTempDirectory("link-bench");
    Path socket = directory.resolve("link.sock");
    ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    SocketChannel client = SocketChannel.open(UnixDomainSocketAddress.of(socket));
    SocketChannel accepted = server.accept();
    server.close();
    long spin = 200_000;
    Link[] echo = new Link[1];
    // The rings in memory of this JVM's: the device host maps the same bytes from the region's file.
    ByteBuffer rings = ByteBuffer.allocateDirect(LinkRing.PAIR_BYTES);
    far = new Link(accepted, LinkRing.toDeviceHost(rings), LinkRing.toNode(rings), "bench-far", spin, f -> {
      ByteBuffer back = ByteBuffer.allocate(4 + f.remaining());
      back.putInt(f.remaining()).put(f).flip();
      echo[0].send(back);
    }, (why, byPeer) -> { });
    echo[0] = far;
    near = new Link(client, LinkRing.toNode(rings), LinkRing.toDeviceHost(rings), "bench-near", spin, f -> {
      if (answers.incrementAndGet() < target) {
        near.send(frame.duplicate());
      } else {
        LockSupport.unpark(waiter);
      }
    }, (why, byPeer) -> { });
    near.awaiting(() -> answers.get() < target);
    far.awaiting(() -> true);
    far.start();
    near.start();
    frame = ByteBuffer.allocate(4 + frameBytes);
    frame.putInt(frameBytes).put(new byte[frameBytes]).flip();
  }

  @TearDown(Level.Trial)
  public void tearDown() throws Exception {
    near.close();
    far.close();
    Files.deleteIfExists(directory.resolve("link.sock"));
    Files.deleteIfExists(directory);
  }

  @Benchmark
  public long roundTrip() {
    waiter = Thread.currentThread();
    long want = answers.get() + ROUND_TRIPS;
    target = want;
    near.send(frame.duplicate());
    while (answers.get() < want) {
      LockSupport.park(this);
    }
    return want;
  }
}
