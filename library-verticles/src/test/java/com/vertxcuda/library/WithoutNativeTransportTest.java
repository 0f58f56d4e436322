package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftType;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The native transport is optional in the device module: a user of the libraries does not get it,
 * and everything works without it (the device host links over plain NIO).
 */
class WithoutNativeTransportTest extends HostDeviceTest {

  @Test
  void librariesRunWithoutEpollOnTheClassPath() {
    // Only Maven's class path is this module's own; the GPU bundle puts every module's jars on one.
    assumeTrue(System.getProperty("surefire.test.class.path") != null, "not this module's class path");
    assertThrows(ClassNotFoundException.class, () -> Class.forName("io.netty.channel.epoll.Epoll"),
      "netty-transport-native-epoll must stay optional in vertx-cuda-device");
    Vertx preferring = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    try {
      assertFalse(preferring.isNativeTransportEnabled(), "a Vert.x that prefers it falls back to NIO");
    } finally {
      await(preferring.close());
    }
    BufferHandle x = f32(1, 2, 3, 4);
    BufferHandle spectrum = f32(0, 0, 0, 0);
    await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(2), 1, x, spectrum));
    assertArrayEquals(new float[] {4, 6, -2, -2}, readF32(spectrum));
  }
}
