package com.vertxcuda.device.context;

import com.vertxcuda.Addresses;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceClientOptions;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceNode;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.NodeOptions;
import com.vertxcuda.device.TestDevices;
import com.vertxcuda.internal.CopyInRequest;
import com.vertxcuda.internal.RequestSender;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.junit5.VertxExtension;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Copies straight between two devices of one process: a start the target refuses keeps its refusal
 * for the copy's source side only until the start's deadline, so starts whose source never comes (a
 * raw sender's) leave nothing behind, and the devices still copy.
 */
@ExtendWith(VertxExtension.class)
@Tag("runs-once")
class PeerCopiesTest {

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void refusedStartsWithoutASourceLeaveNothingBehind(Vertx vertx) throws Exception {
    DeviceNode.deploy(vertx, new NodeOptions().setHostDevices(2).setDeviceOptions(TestDevices.options()
      .setBackend(BackendKind.HOST).setIsolation(Isolation.IN_PROCESS).setPeerCopy(true))).await();
    DeviceClient a = DeviceClient.create(vertx, new DeviceClientOptions().setDevice(0));
    DeviceClient b = DeviceClient.create(vertx, new DeviceClientOptions().setDevice(1));
    BufferHandle x = a.alloc(DType.F32, 64).await();
    BufferHandle wrong = b.alloc(DType.I32, 64).await();
    int before = PeerCopies.waiting();

    // Starts of copies whose dtypes differ, each refused, with a 300 ms deadline and no source side.
    RequestSender target = new RequestSender(vertx, Addresses.device(wrong.node(), wrong.device()), 300);
    List<Future<Object>> starts = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      starts.add(target.request(new CopyInRequest(x, wrong, 0x7000_0000L + i)));
    }
    Future.join(starts).otherwiseEmpty().await();
    for (Future<Object> s : starts) {
      assertEquals(FailureCode.BAD_REQUEST, ((CudaException) s.cause()).code(), String.valueOf(s.cause()));
    }
    assertTrue(PeerCopies.waiting() >= before + 200, "each refusal waits for its source until the deadline");

    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (PeerCopies.waiting() > before && System.nanoTime() < until) {
      Thread.sleep(50);
    }
    assertEquals(before, PeerCopies.waiting(), "refusals whose source never came are gone after their deadline");

    // The devices still copy between them.
    BufferHandle y = b.alloc(DType.F32, 64).await();
    a.fill(x, 2.5).await();
    a.copy(x, y).await();
    assertEquals(2.5f, b.downloadFloats(y).await()[63]);
  }
}
