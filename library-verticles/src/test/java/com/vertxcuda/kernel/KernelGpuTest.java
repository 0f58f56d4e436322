package com.vertxcuda.kernel;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.FailureCode;
import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.DeviceVerticle;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.DeviceEvent;
import com.vertxcuda.DeviceInfo;
import com.vertxcuda.DeviceState;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * User kernels on a real GPU, and the fault drill: a kernel that stores through an invalid pointer
 * poisons the context for real. In process isolation the device host is replaced; in-process the
 * device is LOST. Either way every request is answered and this JVM never sees a native fault.
 */
@Tag("gpu")
@Tag("alone")
class KernelGpuTest {

  static final String SAXPY = "extern \"C\" __global__ void saxpy(float a, const float* x, float* y, int n) {\n"
    + "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    + "  if (i < n) y[i] = a * x[i] + y[i];\n"
    + "}\n";
  static final String POISON = "extern \"C\" __global__ void poison(float* p) {\n"
    + "  *((volatile float*) (p - (1ll << 40))) = 1.0f;\n"
    + "}\n";

  private Vertx vertx;

  @BeforeAll
  static void needsGpu() {
    try {
      CudaBackend.load(new DeviceOptions());
    } catch (CudaUnavailableException e) {
      assumeTrue(false, "no usable GPU: " + e.getMessage());
    }
  }

  @BeforeEach
  void vertx() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void close() {
    await(vertx.close());
  }

  static <T> T await(Future<T> f) {
    try {
      return f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof RuntimeException ? (RuntimeException) e.getCause() : new RuntimeException(e.getCause());
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }

  static FailureCode code(Future<?> f) {
    try {
      f.toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return ((CudaException) e.getCause()).code();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    return fail("expected a failure");
  }

  static Buffer floats(float... v) {
    Buffer b = Buffer.buffer();
    for (float f : v) {
      b.appendFloatLE(f);
    }
    return b;
  }

  static float[] floats(Buffer b) {
    float[] out = new float[b.length() / 4];
    for (int i = 0; i < out.length; i++) {
      out[i] = b.getFloatLE(i * 4);
    }
    return out;
  }

  private DeviceOptions cuda(Isolation isolation) {
    return new DeviceOptions().setBackend(BackendKind.CUDA).setIsolation(isolation).setRestartLimit(10);
  }

  @Test
  void compileLaunchCacheAndModuleHandles() {
    await(vertx.deployVerticle(new DeviceVerticle(cuda(Isolation.PROCESS))));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    KernelReply compiled = await(kernels.compile(SAXPY, null, List.of("-DUNUSED=1")));
    assertFalse(compiled.isCached());
    KernelReply again = await(kernels.compile(SAXPY, null, List.of("-DUNUSED=1")));
    assertTrue(again.isCached(), "the second compile comes from the PTX cache");
    int n = 1000;
    float[] x = new float[n];
    float[] y = new float[n];
    float[] expected = new float[n];
    for (int i = 0; i < n; i++) {
      x[i] = i;
      y[i] = 1;
      expected[i] = 2.5f * i + 1;
    }
    BufferHandle hx = await(device.alloc(DType.F32, n).compose(h -> device.upload(h, floats(x))));
    BufferHandle hy = await(device.alloc(DType.F32, n).compose(h -> device.upload(h, floats(y))));
    // Launch, then download at once: the buffer rules order the copy after the kernel.
    kernels.launch(compiled.getModule(), "saxpy", new int[] {(n + 127) / 128, 1, 1}, new int[] {128, 1, 1}, 0,
      KernelArg.scalar(DType.F32, 2.5), KernelArg.in(hx), KernelArg.inOut(hy), KernelArg.integer(DType.I32, n));
    assertArrayEquals(expected, floats(await(device.download(hy))));
    ModuleHandle m = compiled.getModule();
    ModuleHandle forged = new ModuleHandle(m.node(), m.device(), m.generation(), m.id(), m.tokenHigh() ^ 1, m.tokenLow());
    assertEquals(FailureCode.FORBIDDEN, code(kernels.launch(forged, "saxpy", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0)));
    assertEquals(FailureCode.NOT_FOUND, code(kernels.launch(m, "nosuch", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0)));
    assertEquals(FailureCode.BAD_REQUEST, code(kernels.compile("this is not C", null, List.of())));
    await(kernels.unload(m));
    assertEquals(FailureCode.NOT_FOUND, code(kernels.unload(m)));
    // PTX text loads as a module too.
    ModuleHandle fromPtx = await(kernels.loadPtx(saxpyPtx()));
    await(kernels.launch(fromPtx, "saxpy", new int[] {(n + 127) / 128, 1, 1}, new int[] {128, 1, 1}, 0,
      KernelArg.scalar(DType.F32, -2.5), KernelArg.in(hx), KernelArg.inOut(hy), KernelArg.integer(DType.I32, n)));
    float[] ones = new float[n];
    java.util.Arrays.fill(ones, 1f);
    assertArrayEquals(ones, floats(await(device.download(hy))));
  }

  /**
   * A compile runs off the submission thread: built-ins sent after it on other buffers are answered
   * first, in their order. An unload sent right behind launches of its module, without waiting,
   * waits for them (the module's key orders them) and then for their completion on the GPU.
   */
  @Test
  void aCompileInPreparationHoldsNothingBackAndAnUnloadWaitsForItsLaunches() {
    await(vertx.deployVerticle(new DeviceVerticle(cuda(Isolation.IN_PROCESS))));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    BufferHandle u = await(device.alloc(DType.F32, 4096));
    List<String> order = new ArrayList<>();
    Promise<List<Future<?>>> sent = Promise.promise();
    vertx.runOnContext(v -> {
      // A -D value no cache holds: the compile takes NVRTC's time.
      Future<KernelReply> compiled = kernels.compile(SAXPY, null, List.of("-DSTAMP=" + System.nanoTime()));
      Future<BufferHandle> filled = kernels.fill(u, 2);
      Future<BufferHandle> scaled = kernels.scale(u, 3, u);
      Future<Buffer> read = device.download(u);
      compiled.onComplete(ar -> order.add("compile"));
      read.onComplete(ar -> order.add("download"));
      sent.complete(List.of(compiled, filled, scaled, read));
    });
    List<Future<?>> first = await(sent.future());
    await(Future.all(first));
    float[] sixes = new float[4096];
    java.util.Arrays.fill(sixes, 6f);
    assertArrayEquals(sixes, floats((Buffer) first.get(3).result()));
    assertEquals(List.of("download", "compile"), order, "the built-ins did not wait for the compile");

    ModuleHandle module = ((KernelReply) first.get(0).result()).getModule();
    int n = 1 << 20;
    float[] x = new float[n];
    float[] expected = new float[n];
    for (int i = 0; i < n; i++) {
      x[i] = i % 1000;
      expected[i] = 1 + 4 * 2.5f * x[i];
    }
    BufferHandle hx = await(device.alloc(DType.F32, n).compose(h -> device.upload(h, floats(x))));
    BufferHandle hy = await(device.alloc(DType.F32, n).compose(h -> kernels.fill(h, 1)));
    Promise<List<Future<?>>> launched = Promise.promise();
    vertx.runOnContext(v -> {
      List<Future<?>> all = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        all.add(kernels.launch(module, "saxpy", new int[] {(n + 127) / 128, 1, 1}, new int[] {128, 1, 1}, 0,
          KernelArg.scalar(DType.F32, 2.5), KernelArg.in(hx), KernelArg.inOut(hy), KernelArg.integer(DType.I32, n)));
      }
      all.add(kernels.unload(module));
      all.add(device.download(hy));
      launched.complete(all);
    });
    List<Future<?>> second = await(launched.future());
    await(Future.all(second));
    assertArrayEquals(expected, floats((Buffer) second.get(5).result()), "four launches, then the unload");
    assertEquals(FailureCode.NOT_FOUND, code(kernels.launch(module, "saxpy", new int[] {1, 1, 1},
      new int[] {1, 1, 1}, 0)));
  }

  /** SAXPY written as PTX by hand, as a user who ships PTX text would load it. */
  private static String saxpyPtx() {
    return "//\n.version 7.0\n.target sm_80\n.address_size 64\n"
      + ".visible .entry saxpy(.param .f32 a, .param .u64 x, .param .u64 y, .param .u32 n)\n{\n"
      + "  .reg .pred p; .reg .f32 f<4>; .reg .b32 r<6>; .reg .b64 d<8>;\n"
      + "  ld.param.f32 f1, [a]; ld.param.u64 d1, [x]; ld.param.u64 d2, [y]; ld.param.u32 r1, [n];\n"
      + "  mov.u32 r2, %ctaid.x; mov.u32 r3, %ntid.x; mov.u32 r4, %tid.x; mad.lo.s32 r5, r2, r3, r4;\n"
      + "  setp.ge.s32 p, r5, r1; @p bra DONE;\n"
      + "  cvta.to.global.u64 d3, d1; cvta.to.global.u64 d4, d2; mul.wide.s32 d5, r5, 4;\n"
      + "  add.s64 d6, d3, d5; add.s64 d7, d4, d5; ld.global.f32 f2, [d6]; ld.global.f32 f3, [d7];\n"
      + "  fma.rn.f32 f3, f1, f2, f3; st.global.f32 [d7], f3;\nDONE:\n  ret;\n}\n";
  }

  @Test
  void modulesAreBoundedAndCountedAndATimedOutLoadLeavesNothing() {
    DeviceOptions options = cuda(Isolation.PROCESS)
      .setLibraryOptions(new io.vertx.core.json.JsonObject().put("kernel", new io.vertx.core.json.JsonObject().put("maxModules", 2)));
    await(vertx.deployVerticle(new DeviceVerticle(options)));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    ModuleHandle a = await(kernels.compile(SAXPY, null, List.of())).getModule();
    ModuleHandle b = await(kernels.compile(SAXPY, null, List.of("-DB=1"))).getModule();
    long held = await(device.stats()).getLibraryBytes().getOrDefault("kernel", 0L);
    assertTrue(held > 0, "loaded modules count against the memory limit");
    CudaException full = (CudaException) await(kernels.compile(SAXPY, null, List.of("-DC=1"))
      .transform(ar -> Future.succeededFuture(ar.cause())));
    assertEquals(FailureCode.QUEUE_FULL, full.code(), full.getMessage());
    assertTrue(full.getMessage().contains("maxModules = 2"), full.getMessage());
    await(kernels.unload(a));
    await(kernels.unload(b));
    // A compile whose sender gives up (1 ms) while NVRTC compiles: its module is unloaded, its slot and bytes come back.
    KernelClient impatient = KernelClient.create(vertx, new com.vertxcuda.DeviceClientOptions().setTimeout(1));
    assertEquals(FailureCode.TIMEOUT, code(impatient.compile(SAXPY, null, List.of("-DD=1"))));
    long deadline = System.currentTimeMillis() + 30_000;
    while (await(device.stats()).getLibraryBytes().getOrDefault("kernel", 0L) != 0
      && System.currentTimeMillis() < deadline) {
      await(Future.future(p -> vertx.setTimer(50, t -> p.complete())));
    }
    assertEquals(0L, await(device.stats()).getLibraryBytes().getOrDefault("kernel", 0L),
      "unloaded and timed-out modules hold nothing");
    await(kernels.compile(SAXPY, null, List.of("-DE=1")));
    await(kernels.compile(SAXPY, null, List.of("-DF=1")));
  }

  @Test
  void cubinImagesLoadAndRun() throws Exception {
    // A cubin made here with NVRTC for the device's own architecture, loaded through LOAD_IMAGE.
    com.vertxcuda.device.cuda.NativeLoading.prepare(com.vertxcuda.device.cuda.NativeLoading.NativeLibrary.NVRTC,
      new DeviceOptions());
    jcuda.driver.JCudaDriver.cuInit(0);
    jcuda.driver.CUdevice dev = new jcuda.driver.CUdevice();
    jcuda.driver.JCudaDriver.cuDeviceGet(dev, 0);
    int[] major = new int[1];
    int[] minor = new int[1];
    jcuda.driver.JCudaDriver.cuDeviceGetAttribute(major,
      jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    jcuda.driver.JCudaDriver.cuDeviceGetAttribute(minor,
      jcuda.driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    jcuda.nvrtc.nvrtcProgram program = new jcuda.nvrtc.nvrtcProgram();
    jcuda.nvrtc.JNvrtc.nvrtcCreateProgram(program, SAXPY, "saxpy.cu", 0, null, null);
    assertEquals(0, jcuda.nvrtc.JNvrtc.nvrtcCompileProgram(program, 1,
      new String[] {"--gpu-architecture=sm_" + major[0] + minor[0]}));
    long[] size = new long[1];
    jcuda.nvrtc.JNvrtc.nvrtcGetCUBINSize(program, size);
    byte[] cubin = new byte[(int) size[0]];
    jcuda.nvrtc.JNvrtc.nvrtcGetCUBIN(program, cubin);
    jcuda.nvrtc.JNvrtc.nvrtcDestroyProgram(program);

    await(vertx.deployVerticle(new DeviceVerticle(cuda(Isolation.PROCESS).setSpareDeviceHost(false))));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    ModuleHandle m = await(kernels.execute(new KernelRequest(KernelOp.LOAD_IMAGE).setImage(Buffer.buffer(cubin))))
      .getModule();
    BufferHandle x = await(device.alloc(DType.F32, 4).compose(h -> device.upload(h, floats(1, 2, 3, 4))));
    BufferHandle y = await(device.alloc(DType.F32, 4).compose(h -> device.upload(h, floats(10, 10, 10, 10))));
    await(kernels.launch(m, "saxpy", new int[] {1, 1, 1}, new int[] {32, 1, 1}, 0,
      KernelArg.scalar(DType.F32, 3), KernelArg.in(x), KernelArg.inOut(y), KernelArg.integer(DType.I32, 4)));
    assertArrayEquals(new float[] {13, 16, 19, 22}, floats(await(device.download(y))));
    assertEquals(FailureCode.BAD_REQUEST, code(kernels.execute(new KernelRequest(KernelOp.LOAD_IMAGE)
      .setImage(Buffer.buffer(new byte[] {1, 2, 3, 4})))));
  }

  @Test
  void faultDrillInProcessIsolation() {
    DeviceVerticle verticle = new DeviceVerticle(cuda(Isolation.PROCESS));
    await(vertx.deployVerticle(verticle));
    DeviceClient device = DeviceClient.create(vertx);
    DeviceClient other = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    DeviceInfo before = await(device.describe());
    BufferHandle old = await(device.alloc(DType.F32, 4).compose(h -> device.upload(h, floats(1, 2, 3, 4))));
    ModuleHandle bad = await(kernels.compile(POISON, null, List.of())).getModule();
    Promise<DeviceEvent> changed = Promise.promise();
    await(device.events(e -> {
      if (e.getType() == DeviceEvent.Type.GENERATION_CHANGED) {
        changed.tryComplete(e);
      }
    }).completion());

    // The device keeps a spare device host for the next generation; let it come up first.
    long waitUntil = System.currentTimeMillis() + 30_000;
    while (deviceHosts() < 2 && System.currentTimeMillis() < waitUntil) {
      sleep(100);
    }
    sleep(3000);
    long hostsBefore = deviceHosts();
    long t0 = System.nanoTime();
    Future<Void> launch = kernels.launch(bad, "poison", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
      KernelArg.inOut(old));
    // Another client keeps asking while the context dies and is rebuilt.
    AtomicInteger replies = new AtomicInteger();
    List<Future<BufferHandle>> others = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      others.add(other.alloc(DType.F32, 256).andThen(ar -> replies.incrementAndGet()));
    }
    assertEquals(FailureCode.CONTEXT_LOST, code(launch));
    // Sent once the device has taken the loss in (no longer READY on the old generation): queued while
    // the context is rebuilt (or served by the new one), never lost. Before that, a request may still
    // reach the dying device host and be answered CONTEXT_LOST, as those sent with the launch may be.
    for (DeviceInfo now = await(device.describe()); now.getState() == DeviceState.READY
      && now.getGeneration() == before.getGeneration(); now = await(device.describe())) {
      sleep(1);
    }
    List<Future<BufferHandle>> later = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      later.add(other.alloc(DType.F32, 256));
    }
    DeviceEvent event = await(changed.future());
    long toEvent = System.nanoTime() - t0;
    await(Future.join(new ArrayList<>(others)).otherwiseEmpty());
    BufferHandle fresh = await(device.alloc(DType.F32, 3));
    long toServed = System.nanoTime() - t0;
    System.out.printf("drill (process isolation, %d device hosts at the poison): poison to generation changed %.0f ms,"
      + " to first request served %.0f ms; reason: %s%n", hostsBefore, toEvent / 1e6, toServed / 1e6, event.getReason());

    assertEquals(before.getGeneration() + 1, event.getNewGeneration());
    assertTrue(event.getReason().contains("CUDA_ERROR") || event.getReason().contains("sticky"), event.getReason());
    assertEquals(50, replies.get(), "every request of the other client was answered");
    for (Future<BufferHandle> f : others) {
      assertTrue(f.succeeded() || ((CudaException) f.cause()).code() == FailureCode.CONTEXT_LOST,
        "only CONTEXT_LOST for requests in flight on the lost context: " + f.cause());
    }
    // Those handed to the poisoned context may all have been lost with it (an allocation is answered
    // once its zeroing has run, which the sticky error fails); those sent after the loss run on the new one.
    for (Future<BufferHandle> f : later) {
      assertEquals(event.getNewGeneration(), await(f).generation(), "a request sent during the rebuild ran on the new context");
    }
    assertEquals(FailureCode.STALE_HANDLE, code(device.download(old)));
    assertEquals(FailureCode.STALE_HANDLE, code(kernels.launch(bad, "poison", new int[] {1, 1, 1},
      new int[] {1, 1, 1}, 0, KernelArg.inOut(fresh))));
    assertArrayEquals(new float[] {5, 5, 5}, floats(await(kernels.fill(fresh, 5).compose(device::download))));
    DeviceInfo after = await(device.describe());
    assertNotEquals(before.getPid(), after.getPid(), "a new device host serves");
    assertNotEquals(ProcessHandle.current().pid(), after.getPid(), "the GPU is used by the device host, not this JVM");
    assertTrue(toServed < 2_000_000_000L, "ready again within 2 s: " + toServed / 1_000_000 + " ms");
  }

  private static long deviceHosts() {
    return ProcessHandle.current().children().filter(ProcessHandle::isAlive)
      .filter(h -> h.info().commandLine().map(c -> c.contains("DeviceHostMain")).orElse(false)).count();
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Run in a JVM of its own: afterwards this process can no longer use the GPU. */
  @Test
  @Tag("poisons-this-jvm")
  void faultDrillInProcess() {
    await(vertx.deployVerticle(new DeviceVerticle(cuda(Isolation.IN_PROCESS))));
    DeviceClient device = DeviceClient.create(vertx);
    KernelClient kernels = KernelClient.create(vertx);
    BufferHandle old = await(device.alloc(DType.F32, 4));
    ModuleHandle bad = await(kernels.compile(POISON, null, List.of())).getModule();
    Promise<DeviceEvent> lost = Promise.promise();
    await(device.events(e -> {
      if (e.getType() == DeviceEvent.Type.LOST) {
        lost.tryComplete(e);
      }
    }).completion());
    Future<Void> launch = kernels.launch(bad, "poison", new int[] {1, 1, 1}, new int[] {1, 1, 1}, 0,
      KernelArg.inOut(old));
    List<Future<?>> others = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      others.add(device.alloc(DType.F32, 16));
    }
    assertEquals(FailureCode.CONTEXT_LOST, code(launch));
    DeviceEvent event = await(lost.future());
    System.out.println("drill (in-process): " + event.getReason());
    assertTrue(event.getReason().contains("process isolation"), event.getReason());
    await(Future.join(others).otherwiseEmpty());
    assertTrue(others.stream().allMatch(Future::isComplete), "every request answered");
    assertEquals(FailureCode.CONTEXT_LOST, code(device.alloc(DType.F32, 1)));
    assertEquals(DeviceState.LOST, await(device.describe()).getState());
  }
}
