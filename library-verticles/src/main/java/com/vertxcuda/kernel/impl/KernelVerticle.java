package com.vertxcuda.kernel.impl;

import com.vertxcuda.FailureCode;
import com.vertxcuda.Failures;
import com.vertxcuda.Library;
import com.vertxcuda.device.context.ContextRuntime;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import io.vertx.core.eventbus.Message;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * The kernel verticle of one context generation: loads modules (PTX, cubin, or CUDA C through
 * NVRTC with a PTX cache), launches their functions ordered against the other libraries by the
 * buffer rules, unloads them once their launches have finished, and runs the built-in elementwise
 * kernels. Module handles are generation-checked like buffer handles.
 *
 * <p>Options ({@code DeviceOptions.libraryOptions.kernel}): {@code ptxCacheSize} (entries, default
 * 64) and {@code ptxCacheDirectory} (a folder; unset: memory only).
 */
public final class KernelVerticle extends LibraryVerticle {

  private static final System.Logger LOG = System.getLogger(KernelVerticle.class.getName());

  private KernelEngine engine;
  private ModuleTable<Object> modules;
  private PtxCache cache;

  public KernelVerticle(ContextRuntime runtime) {
    super(runtime, Library.KERNEL);
  }

  @Override
  protected void open() throws BackendException {
    JsonObject options = libraryOptions();
    modules = new ModuleTable<>(runtime.node(), runtime.deviceIndex(), runtime.generation());
    cache = new PtxCache(options.getInteger("ptxCacheSize", 64), options.getString("ptxCacheDirectory"));
    engine = KernelEngine.open(runtime, stream);
  }

  @Override
  protected void handle(Message<Object> m) throws BackendException {
    if (!(m.body() instanceof KernelRequest)) {
      Failures.fail(m, FailureCode.BAD_REQUEST, "the kernel verticle does not serve "
        + (m.body() == null ? "an empty message" : m.body().getClass().getSimpleName()));
      return;
    }
    KernelRequest r = (KernelRequest) m.body();
    require(r.getOp() != null, "op is missing");
    switch (r.getOp()) {
      case LOAD_PTX:
        require(r.getPtx() != null && !r.getPtx().isEmpty(), "ptx is missing");
        m.reply(new KernelReply().setModule(modules.add(engine.load(text(r.getPtx())))));
        break;
      case LOAD_IMAGE:
        require(r.getImage() != null && r.getImage().length() > 0, "image is missing");
        m.reply(new KernelReply().setModule(modules.add(engine.load(r.getImage().getBytes()))));
        break;
      case COMPILE:
        compile(m, r);
        break;
      case LAUNCH: {
        KernelCall call = KernelCall.launch(r, runtime.allocations());
        Object module = modules.resolve(r.getModule());
        GpuEvent done = enqueue(call.reads(), call.writes(), () -> engine.launch(stream, module, r.getFunction(), call));
        runtime.replyWhenDone(m, done, KernelReply::new);
        break;
      }
      case UNLOAD:
        unload(m, r);
        break;
      default: {
        KernelCall call = KernelCall.builtin(r, runtime.allocations());
        EngineResult[] result = new EngineResult[1];
        GpuEvent done = enqueue(call.reads(), call.writes(), () -> result[0] = engine.builtin(stream, call));
        runtime.replyWhenDone(m, done, () -> {
          if (result[0] != null) {
            result[0].value();
          }
          return new KernelReply().setOutput(r.getOutput());
        });
      }
    }
  }

  private void compile(Message<Object> m, KernelRequest r) throws BackendException {
    require(r.getSource() != null && !r.getSource().isEmpty(), "source is missing");
    List<String> options = r.getCompileOptions() == null ? List.of() : r.getCompileOptions();
    for (int i = 0; i < options.size(); i++) {
      require(options.get(i) != null, "compileOptions[" + i + "] is missing");
    }
    String arch = r.getArch() != null ? r.getArch() : engine.deviceArch();
    String key = PtxCache.key(r.getSource(), arch, options);
    String ptx = cache.get(key);
    boolean cached = ptx != null;
    StringBuilder log = new StringBuilder();
    if (!cached) {
      ptx = engine.compile(r.getSource(), r.getName() != null ? r.getName() : "program.cu", arch, options, log);
      cache.put(key, ptx);
    }
    m.reply(new KernelReply().setModule(modules.add(engine.load(text(ptx)))).setLog(log.toString()).setCached(cached));
  }

  // Every launch of a module ran on this verticle's stream: an event recorded now follows them all,
  // and the module is unloaded once it is reached. Later uses of the handle get NOT_FOUND at once.
  private void unload(Message<Object> m, KernelRequest r) throws BackendException {
    Object module = modules.remove(r.getModule());
    runtime.afterUses(List.of(runtime.device().record(stream)), context, () -> {
      if (!runtime.isPoisoned()) {
        try {
          engine.unload(module);
        } catch (BackendException e) {
          LOG.log(System.Logger.Level.WARNING, "unloading a module failed: " + e.getMessage());
        }
      }
    });
    m.reply(new KernelReply().setModule(r.getModule()));
  }

  @Override
  protected void close(boolean poisoned) {
    if (modules != null) {
      for (Object module : modules.drain()) {
        if (!poisoned) {
          try {
            engine.unload(module);
          } catch (BackendException e) {
            LOG.log(System.Logger.Level.WARNING, "unloading a module failed: " + e.getMessage());
          }
        }
      }
    }
    if (engine != null) {
      engine.close(poisoned);
    }
  }

  private static byte[] text(String ptx) {
    return (ptx + '\0').getBytes(StandardCharsets.UTF_8);
  }
}
