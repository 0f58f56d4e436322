package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The native transport is optional in the device module: a user of the libraries does not get it,
 * and everything works without it (the device host links over plain NIO).
 */
class WithoutNativeTransportTest extends HostDeviceTest {

  @Test
  void librariesRunWithoutEpollOnTheClassPath() {
    assertThrows(ClassNotFoundException.class, () -> Class.forName("io.netty.channel.epoll.Epoll"),
      "netty-transport-native-epoll must stay optional in vertx-cuda-device");
    BufferHandle x = f32(1, 2, 3, 4);
    BufferHandle spectrum = f32(0, 0, 0, 0);
    await(fft.transform(com.vertxcuda.fft.FftType.C2C, com.vertxcuda.fft.FftDirection.FORWARD, List.of(2), 1, x, spectrum));
    assertArrayEquals(new float[] {4, 6, -2, -2}, readF32(spectrum));
  }

  @Test
  void aVertxThatPrefersNativeTransportFallsBackToNio() {
    Vertx preferring = Vertx.vertx(new VertxOptions().setPreferNativeTransport(true));
    try {
      assertFalse(preferring.isNativeTransportEnabled());
    } finally {
      await(preferring.close());
    }
  }
}
