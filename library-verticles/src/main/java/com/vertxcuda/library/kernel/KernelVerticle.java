package com.vertxcuda.library.kernel;

import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;
import com.vertxcuda.Library;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.Footprint;
import com.vertxcuda.device.spi.GpuEvent;
import com.vertxcuda.device.spi.GpuStream;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.device.spi.Preparation;
import com.vertxcuda.device.spi.RecordedStep;
import com.vertxcuda.device.spi.Request;
import com.vertxcuda.device.spi.RequestType;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelReply;
import com.vertxcuda.kernel.KernelRequest;
import com.vertxcuda.kernel.ModuleHandle;
import com.vertxcuda.library.impl.EngineResult;
import com.vertxcuda.library.impl.LibraryVerticle;
import io.vertx.core.json.JsonObject;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static com.vertxcuda.library.impl.RequestChecks.require;

/**
 * The kernel library of one context generation: loads modules (PTX, cubin, or CUDA C through
 * NVRTC with a PTX cache), launches their functions ordered against the other libraries by the
 * buffer rules, unloads them once their launches have finished, and runs the built-in elementwise
 * kernels. Module handles are generation-checked like buffer handles.
 *
 * <p>Loading and compiling run off the submission thread (an NVRTC compile takes seconds); the
 * module enters the table on it. For ordering, a module is a resource of its own: a launch reads
 * its key and an unload writes it, so an unload waits for launches sent before it.
 *
 * <p>Modules are the user's handles, so none is ever evicted: at most {@code maxModules} are loaded
 * or loading at once (past it a load is refused with QUEUE_FULL naming the limit), and each
 * module's image (PTX text or cubin) counts against {@code DeviceOptions.memoryLimit} until it is
 * unloaded ({@code DeviceStats.libraryBytes["kernel"]}). A module loaded for a request that timed
 * out meanwhile is unloaded, never left behind.
 *
 * <p>Options ({@code DeviceOptions.libraryOptions.kernel}): {@code ptxCacheSize} (entries, default
 * 64), {@code ptxCacheDirectory} (a folder; unset: memory only) and {@code maxModules} (default
 * {@value #DEFAULT_MAX_MODULES}).
 */
public final class KernelVerticle extends LibraryVerticle {

  /** Loads, compiles, unloads and launches; launches and built-ins can be recorded. */
  private static final RequestType<KernelVerticle, KernelRequest> TYPE =
    RequestType.of(KernelVerticle.class, KernelRequest.class)
      .footprint(KernelVerticle::footprint).handler(KernelVerticle::serve).recorder(KernelVerticle::record).build();

  private static final System.Logger LOG = System.getLogger(KernelVerticle.class.getName());

  /** Modules loaded or loading at once, by default. */
  public static final int DEFAULT_MAX_MODULES = 1024;

  /**
   * A module a preparation loaded, with the slot and bytes it holds: taken into the table by its
   * request, or closed (unloaded, its slot and bytes given back) when the submission loop drops it.
   */
  private final class Loaded implements AutoCloseable {
    final Object module;
    final long bytes;
    final String log;
    final boolean cached;
    /**
     * The last replay of a captured pipeline that launches this module (on the pipeline stream, which
     * an event on this library's stream does not follow), retained; null: none. Submission thread.
     */
    private GpuEvent lastGraphUse;

    Loaded(Object module, long bytes, String log, boolean cached) {
      this.module = module;
      this.bytes = bytes;
      this.log = log;
      this.cached = cached;
    }

    // A graph launch of the module was queued; replays share one stream, so the last covers the rest.
    void launchedIn(GpuEvent event) {
      if (lastGraphUse != null) {
        lastGraphUse.release();
      }
      lastGraphUse = event.retain();
    }

    /** Its uses to wait for before unloading it: the launches on {@code stream} and its last graph launch. */
    List<GpuEvent> uses(GpuStream stream) throws BackendException {
      List<GpuEvent> uses = new ArrayList<>(2);
      uses.add(runtime.device().record(stream));
      if (lastGraphUse != null) {
        uses.add(lastGraphUse); // its reference passes to the wait, which releases it
        lastGraphUse = null;
      }
      return uses;
    }

    @Override
    public void close() {
      if (lastGraphUse != null) {
        lastGraphUse.release();
        lastGraphUse = null;
      }
      if (!runtime.isPoisoned()) {
        unload(module);
      }
      released(bytes);
    }
  }

  /** Modules in the table plus those being loaded (touched by preparation threads too). */
  private final AtomicInteger held = new AtomicInteger();
  private int maxModules;

  private KernelEngine engine;
  private ModuleTable<Loaded> modules;
  private PtxCache cache;

  public KernelVerticle(LibraryContext runtime) {
    super(runtime, Library.KERNEL);
  }

  @Override
  protected void open() throws BackendException {
    JsonObject options = runtime.libraryOptions(Library.KERNEL);
    modules = new ModuleTable<>(runtime.node(), runtime.deviceIndex(), runtime.generation());
    cache = new PtxCache(options.getInteger("ptxCacheSize", 64), options.getString("ptxCacheDirectory"));
    maxModules = Math.max(0, options.getInteger("maxModules", DEFAULT_MAX_MODULES));
    engine = KernelEngine.open(runtime, stream);
    // A departed node's modules go once the launches already queued on this stream are done.
    runtime.onOwnerGone(owner -> {
      // Each once its own uses are done (the wait takes and releases the events it is given).
      for (Loaded l : modules.removeOwnedBy(owner)) {
        try {
          runtime.afterUses(l.uses(stream), l::close);
        } catch (BackendException e) {
          l.close();
        }
      }
    });
  }

  /** The ordering key of a module: below zero, so it never meets a buffer id. */
  private static long moduleKey(ModuleHandle h) {
    return -1 - h.id();
  }

  @Override
  public List<RequestType<?, ?>> types() {
    return List.of(TYPE);
  }

  private Footprint footprint(KernelRequest r) {
    require(r.getOp() != null, "op is missing");
    switch (r.getOp()) {
      case LOAD_PTX:
      case LOAD_IMAGE:
      case COMPILE:
        return Footprint.NONE; // a module no earlier request can name
      case UNLOAD:
        require(r.getModule() != null, "module is missing");
        return Footprint.builder().writeKey(moduleKey(r.getModule())).build();
      case LAUNCH: {
        require(r.getModule() != null, "module is missing");
        KernelCall call = KernelCall.launch(r, runtime);
        return touching(call.reads(), call.writes()).readKey(moduleKey(r.getModule())).build();
      }
      default: {
        KernelCall call = KernelCall.builtin(r, runtime);
        return touching(call.reads(), call.writes()).build();
      }
    }
  }

  private Preparation serve(Request m, KernelRequest r, Object prepared) throws BackendException {
    require(r.getOp() != null, "op is missing");
    switch (r.getOp()) {
      case LOAD_PTX:
      case LOAD_IMAGE:
      case COMPILE: {
        if (prepared == null) {
          Preparation load = r.getOp() == KernelOp.COMPILE ? compile(r) : load(image(r));
          admit();
          return () -> {
            try {
              return load.prepare();
            } catch (Throwable t) {
              held.decrementAndGet();
              throw t;
            }
          };
        }
        Loaded loaded = (Loaded) prepared;
        KernelReply reply = new KernelReply().setModule(modules.add(loaded, m.owner()));
        m.reply(r.getOp() == KernelOp.COMPILE ? reply.setLog(loaded.log).setCached(loaded.cached) : reply);
        break;
      }
      case LAUNCH: {
        KernelCall call = KernelCall.launch(r, runtime);
        Object module = modules.resolve(r.getModule()).module;
        GpuEvent done = enqueue(call.reads(), call.writes(),
          () -> engine.launch(stream, module, r.getFunction(), call));
        runtime.replyWhenDone(m, done, KernelReply::new);
        break;
      }
      case UNLOAD:
        unload(m, r);
        break;
      default: {
        KernelCall call = KernelCall.builtin(r, runtime);
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
    return null;
  }

  /**
   * A launch or a built-in kernel as a step of a recorded pipeline. A launch keeps naming its
   * module: once the module is unloaded, replays fail with NOT_FOUND before anything runs.
   * Loads, compiles and unloads cannot be recorded.
   */
  private RecordedStep record(KernelRequest r) {
    require(r.getOp() != null, "op is missing");
    switch (r.getOp()) {
      case LOAD_PTX:
      case LOAD_IMAGE:
      case COMPILE:
      case UNLOAD:
        throw new CudaException(FailureCode.BAD_REQUEST, r.getOp() + " cannot be recorded: a pipeline launches "
          + "modules loaded before it is recorded");
      case LAUNCH: {
        require(r.getModule() != null, "module is missing");
        KernelCall call = KernelCall.launch(r, runtime);
        Loaded loaded = modules.resolve(r.getModule());
        ModuleHandle handle = r.getModule();
        String function = r.getFunction();
        return step(call.reads(), call.writes(), () -> engine.launch(stream, loaded.module, function, call), () -> {
          if (modules.resolve(handle) != loaded) {
            throw new CudaException(FailureCode.NOT_FOUND, "module #" + handle.id() + " was replaced");
          }
        }, new long[] {moduleKey(handle)}, loaded::launchedIn);
      }
      default: {
        KernelCall call = KernelCall.builtin(r, runtime);
        return step(call.reads(), call.writes(), () -> engine.builtin(stream, call), null);
      }
    }
  }

  // Takes a slot for one more module; QUEUE_FULL naming the limit when every slot is held.
  private void admit() {
    if (held.get() >= maxModules) {
      throw new CudaException(FailureCode.QUEUE_FULL, held.get() + " modules are loaded or loading on this "
        + "device, the kernel library's limit (libraryOptions.kernel.maxModules = " + maxModules
        + "); unload one first");
    }
    held.incrementAndGet();
  }

  // Counts an image's bytes against the memory limit before it is loaded (OUT_OF_MEMORY, nothing
  // loaded, past it), so loads in flight together cannot pass the limit; given back if the load fails.
  private Loaded loaded(byte[] image, String log, boolean cached) throws BackendException {
    runtime.reserveLibraryBytes(Library.KERNEL, image.length);
    Object module;
    try {
      module = engine.load(image);
    } catch (BackendException | RuntimeException | Error e) {
      runtime.releaseLibraryBytes(Library.KERNEL, image.length);
      throw e;
    }
    return new Loaded(module, image.length, log, cached);
  }

  private Preparation load(byte[] image) {
    return () -> loaded(image, "", false);
  }

  private void released(long bytes) {
    runtime.releaseLibraryBytes(Library.KERNEL, bytes);
    held.decrementAndGet();
  }

  private static byte[] image(KernelRequest r) {
    if (r.getOp() == KernelOp.LOAD_PTX) {
      require(r.getPtx() != null && !r.getPtx().isEmpty(), "ptx is missing");
      return text(r.getPtx());
    }
    require(r.getImage() != null && r.getImage().length() > 0, "image is missing");
    return r.getImage().getBytes();
  }

  // Checked on the submission thread; the cache lookup (it may read a file), the compile and the
  // load run in the preparation.
  private Preparation compile(KernelRequest r) {
    String source = r.getSource();
    require(source != null && !source.isEmpty(), "source is missing");
    List<String> options = r.getCompileOptions() == null ? List.of() : List.copyOf(checked(r.getCompileOptions()));
    String arch = r.getArch() != null ? r.getArch() : engine.deviceArch();
    String name = r.getName() != null ? r.getName() : "program.cu";
    return () -> {
      String key = PtxCache.key(source, arch, options);
      String ptx = cache.get(key);
      boolean cached = ptx != null;
      StringBuilder log = new StringBuilder();
      if (!cached) {
        ptx = engine.compile(source, name, arch, options, log);
        cache.put(key, ptx);
      }
      return loaded(text(ptx), log.toString(), cached);
    };
  }

  private static List<String> checked(List<String> options) {
    for (int i = 0; i < options.size(); i++) {
      require(options.get(i) != null, "compileOptions[" + i + "] is missing");
    }
    return options;
  }

  // Every launch of a module ran on this library's stream, or in a captured pipeline's graph: an event
  // recorded now follows the first, the graph's last launch the others, and the module is unloaded once
  // both are reached. Later uses of the handle get NOT_FOUND at once.
  private void unload(Request m, KernelRequest r) throws BackendException {
    Loaded loaded = modules.remove(r.getModule());
    runtime.afterUses(loaded.uses(stream), loaded::close);
    m.reply(new KernelReply().setModule(r.getModule()));
  }

  private void unload(Object module) {
    try {
      engine.unload(module);
    } catch (BackendException e) {
      LOG.log(System.Logger.Level.WARNING, "unloading a module failed: " + e.getMessage());
    }
  }

  @Override
  protected void close(boolean poisoned) {
    if (modules != null) {
      modules.drain().forEach(Loaded::close);
    }
    if (engine != null) {
      engine.close(poisoned);
    }
  }

  private static byte[] text(String ptx) {
    return (ptx + '\0').getBytes(StandardCharsets.UTF_8);
  }
}
