package com.vertxcuda.jmh;

import com.vertxcuda.Addresses;
import com.vertxcuda.DeviceRegistry;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import io.vertx.core.Vertx;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.util.List;

/** Finding devices in the registry (the shared map of a non-clustered Vert.x), with {@code devices} registered. */
@State(Scope.Benchmark)
public class RegistryBenchmarks {

  @Param({"16"})
  public int devices;

  private Vertx vertx;

  @Setup(Level.Trial)
  public void setup() {
    vertx = Vertx.vertx();
    for (int d = 0; d < devices; d++) {
      String node = "node-" + (d / 8);
      DeviceInfo info = new DeviceInfo().setNode(node).setDevice(d % 8).setAddress(Addresses.device(node, d % 8))
        .setName("NVIDIA L40S").setBackend("cuda").setIsolation("process").setState(DeviceState.READY)
        .setGeneration(1).setLoad(d * 7 % 5).setPid(1000 + d).setLibraries(List.of("blas"));
      DeviceRegistry.put(vertx, info, 60_000).toCompletionStage().toCompletableFuture().join();
    }
  }

  @TearDown(Level.Trial)
  public void close() {
    vertx.close().toCompletionStage().toCompletableFuture().join();
  }

  @Benchmark
  public List<DeviceInfo> list() {
    return DeviceRegistry.list(vertx).toCompletionStage().toCompletableFuture().join();
  }

  @Benchmark
  public DeviceInfo leastLoaded() {
    return DeviceRegistry.leastLoaded(vertx).toCompletionStage().toCompletableFuture().join();
  }
}
