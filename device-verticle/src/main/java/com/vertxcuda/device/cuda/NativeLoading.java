package com.vertxcuda.device.cuda;

import com.vertxcuda.device.DeviceOptions;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The one place that finds and loads native CUDA code: the driver (libcuda.so.1) and the CUDA
 * libraries JCuda's natives link against. Where a native needs a CUDA 11 soname that is absent but
 * a newer major is present, a forwarding library (built by {@code src/main/native/build-forwarders.sh})
 * is loaded under the old soname first, so the dynamic linker binds JCuda's native to it.
 *
 * <p>Search order: {@link DeviceOptions#getCudaLibraryPath()}, {@code CUDA_HOME}, {@code CUDA_PATH},
 * {@code /usr/local/cuda}, then the linker cache ({@code ldconfig -p}).
 */
public final class NativeLoading {

  /** The CUDA libraries a JCuda module needs. */
  public enum NativeLibrary {
    CUBLAS("libcublas.so.11", List.of("libcublas.so.13", "libcublas.so.12"), "libcublasLt"),
    CUFFT("libcufft.so.10", List.of("libcufft.so.12", "libcufft.so.11"), null),
    CURAND("libcurand.so.10", List.of(), null),
    NVRTC("libnvrtc.so.11.2", List.of("libnvrtc.so.13", "libnvrtc.so.12"), "libnvrtc-builtins");

    final String soname;
    final List<String> newer;
    /** A library the newer one needs from its own folder (same major), loaded before it. */
    final String companion;

    NativeLibrary(String soname, List<String> newer, String companion) {
      this.soname = soname;
      this.newer = newer;
      this.companion = companion;
    }
  }

  private static final System.Logger LOG = System.getLogger(NativeLoading.class.getName());
  private static final String FORWARDERS = "/native/linux-x86_64/";
  private static final List<String> DRIVER_DIRS = List.of("/usr/lib/x86_64-linux-gnu", "/usr/lib64",
    "/usr/lib/wsl/lib", "/usr/local/nvidia/lib64");

  private static boolean driverReady;
  private static boolean preparedAll;
  private static int deviceCount;
  private static final Map<NativeLibrary, String> prepared = new EnumMap<>(NativeLibrary.class);
  private static Map<String, String> linkerCache;
  private static Path forwarderDir;

  private NativeLoading() {
  }

  /**
   * Loads the driver and JCuda's driver native and initialises CUDA, once per process; then checks
   * {@code options.getDevice()} exists. The exception names every place searched.
   */
  public static synchronized void driver(DeviceOptions options) throws CudaUnavailableException {
    // Only success is kept: a failure is searched again, so its message names this call's options.
    if (!driverReady) {
      deviceCount = initDriver(options);
      driverReady = true;
    }
    if (CudaErrors.poisonedBy() != null) {
      throw new CudaUnavailableException("CUDA in this process was poisoned by " + CudaErrors.poisonedBy());
    }
    if (options.getDevice() < 0 || options.getDevice() >= deviceCount) {
      throw new CudaUnavailableException("device " + options.getDevice() + " asked, the driver sees "
        + deviceCount + " device(s)");
    }
  }

  /**
   * Makes {@code library} loadable by JCuda's native: the soname it links against is loaded from
   * the folders searched, or a forwarder to the newest major present stands in for it. Call before
   * the JCuda class of that library is first used. Idempotent.
   */
  public static synchronized void prepare(NativeLibrary library, DeviceOptions options) throws CudaUnavailableException {
    if (prepared.containsKey(library)) {
      return;
    }
    List<String> searched = new ArrayList<>();
    Path exact = find(library.soname, cudaDirs(options), searched);
    if (exact != null) {
      System.load(exact.toString());
      prepared.put(library, exact.toString());
      return;
    }
    for (String newer : library.newer) {
      Path target = find(newer, cudaDirs(options), new ArrayList<>());
      if (target == null) {
        continue;
      }
      if (library.companion != null) {
        loadCompanions(target.getParent(), library.companion, newer.substring(newer.indexOf(".so.") + 4));
      }
      System.load(target.toString());
      Path forwarder = forwarder(library.soname);
      System.load(forwarder.toString());
      LOG.log(System.Logger.Level.INFO, "vertx-cuda: " + library.soname + " is forwarded to " + target);
      prepared.put(library, target + " via forwarder");
      return;
    }
    throw new CudaUnavailableException("no " + library.soname
      + (library.newer.isEmpty() ? "" : " nor " + String.join(", ", library.newer)) + " in " + String.join(", ", searched));
  }

  /**
   * {@link #prepare}s every library, once per process; a library that cannot be found is logged
   * (its verticle then answers UNSUPPORTED when its JCuda class fails to load).
   */
  public static synchronized void prepareAll(DeviceOptions options) {
    if (preparedAll) {
      return;
    }
    preparedAll = true;
    for (NativeLibrary library : NativeLibrary.values()) {
      try {
        prepare(library, options);
      } catch (CudaUnavailableException | UnsatisfiedLinkError e) {
        LOG.log(System.Logger.Level.WARNING, "vertx-cuda: " + library + " unavailable: " + e.getMessage());
      }
    }
  }

  /** Where libcuda.so.1 is, searching as {@link #driver} does without loading it; null if nowhere. */
  public static Path driverPath(DeviceOptions options) {
    return find("libcuda.so.1", driverDirs(options), new ArrayList<>());
  }

  /** What {@link #prepare} loaded for {@code library}, or null. */
  public static synchronized String preparedPath(NativeLibrary library) {
    return prepared.get(library);
  }

  private static int initDriver(DeviceOptions options) throws CudaUnavailableException {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "");
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new CudaUnavailableException("the cuda backend runs on linux-x86_64, this is " + os + "-" + arch);
    }
    List<String> searched = new ArrayList<>();
    Path driver = find("libcuda.so.1", driverDirs(options), searched);
    if (driver == null) {
      throw new CudaUnavailableException("no NVIDIA driver: libcuda.so.1 is not in " + String.join(", ", searched)
        + "; CUDA libraries would be searched in " + String.join(", ", describe(cudaDirs(options))) + ", linker cache");
    }
    try {
      System.load(driver.toString());
      JCudaDriver.setExceptionsEnabled(false);
    } catch (Throwable t) {
      throw new CudaUnavailableException("libcuda.so.1 at " + driver + " found but JCuda's driver native did not load: " + t);
    }
    int r = JCudaDriver.cuInit(0);
    if (r != CUresult.CUDA_SUCCESS) {
      throw new CudaUnavailableException("libcuda.so.1 at " + driver + ": cuInit failed with " + CudaErrors.name(r));
    }
    int[] count = new int[1];
    r = JCudaDriver.cuDeviceGetCount(count);
    if (r != CUresult.CUDA_SUCCESS || count[0] == 0) {
      throw new CudaUnavailableException("libcuda.so.1 at " + driver + ": no CUDA device ("
        + (r != CUresult.CUDA_SUCCESS ? CudaErrors.name(r) : "count 0") + ")");
    }
    LOG.log(System.Logger.Level.DEBUG, "vertx-cuda: driver " + driver + ", " + count[0] + " device(s)");
    return count[0];
  }

  /** Folders searched for the driver, in order (the linker cache comes after them). */
  private static List<Path> driverDirs(DeviceOptions options) {
    List<Path> dirs = new ArrayList<>();
    if (options.getCudaLibraryPath() != null) {
      dirs.add(Path.of(options.getCudaLibraryPath()));
    }
    DRIVER_DIRS.forEach(d -> dirs.add(Path.of(d)));
    return dirs;
  }

  /** Folders searched for CUDA libraries, in order (the linker cache comes after them). */
  static List<Path> cudaDirs(DeviceOptions options) {
    List<Path> dirs = new ArrayList<>();
    if (options.getCudaLibraryPath() != null) {
      dirs.add(Path.of(options.getCudaLibraryPath()));
    }
    for (String env : List.of("CUDA_HOME", "CUDA_PATH")) {
      String home = System.getenv(env);
      if (home != null && !home.isBlank()) {
        dirs.add(Path.of(home, "targets", "x86_64-linux", "lib"));
        dirs.add(Path.of(home, "lib64"));
      }
    }
    dirs.add(Path.of("/usr/local/cuda/targets/x86_64-linux/lib"));
    dirs.add(Path.of("/usr/local/cuda/lib64"));
    return dirs;
  }

  private static List<String> describe(List<Path> dirs) {
    List<String> out = new ArrayList<>();
    dirs.forEach(d -> out.add(d.toString()));
    return out;
  }

  /** {@code name} in the first of {@code dirs} holding it, else in the linker cache; appends what it looked at. */
  private static synchronized Path find(String name, List<Path> dirs, List<String> searched) {
    for (Path d : dirs) {
      searched.add(d.toString());
      Path p = d.resolve(name);
      if (Files.isRegularFile(p)) {
        return p;
      }
    }
    searched.add("the linker cache (ldconfig -p)");
    String cached = linkerCache().get(name);
    return cached == null ? null : Path.of(cached);
  }

  private static void loadCompanions(Path dir, String prefix, String major) {
    try (var files = Files.list(dir)) {
      files.filter(p -> p.getFileName().toString().startsWith(prefix + ".so." + major))
        .sorted()
        .findFirst()
        .ifPresent(p -> System.load(p.toString()));
    } catch (IOException | UnsatisfiedLinkError e) {
      LOG.log(System.Logger.Level.DEBUG, "vertx-cuda: no " + prefix + " loaded from " + dir + ": " + e);
    }
  }

  private static synchronized Map<String, String> linkerCache() {
    if (linkerCache == null) {
      linkerCache = new LinkedHashMap<>();
      for (String ldconfig : List.of("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig")) {
        try {
          Process p = new ProcessBuilder(ldconfig, "-p").redirectErrorStream(true).start();
          String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
          p.waitFor(10, TimeUnit.SECONDS);
          for (String line : out.split("\n")) {
            // "	libcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1"
            int arrow = line.indexOf("=>");
            if (arrow < 0 || !line.contains("x86-64")) {
              continue;
            }
            String lib = line.trim().split("\\s+")[0];
            linkerCache.putIfAbsent(lib, line.substring(arrow + 2).trim());
          }
          break;
        } catch (IOException e) {
          // try the next location of ldconfig
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          break;
        }
      }
    }
    return linkerCache;
  }

  /** Extracts the forwarder for {@code soname} from this jar into a temporary folder, once. */
  private static Path forwarder(String soname) throws CudaUnavailableException {
    try {
      if (forwarderDir == null) {
        forwarderDir = Files.createTempDirectory("vertx-cuda-native");
        forwarderDir.toFile().deleteOnExit();
      }
      Path target = forwarderDir.resolve(soname);
      if (!Files.exists(target)) {
        try (InputStream in = NativeLoading.class.getResourceAsStream(FORWARDERS + soname)) {
          if (in == null) {
            throw new CudaUnavailableException("the forwarder " + FORWARDERS + soname + " is not in the vertx-cuda-device jar");
          }
          Files.copy(in, target, StandardCopyOption.REPLACE_EXISTING);
        }
        target.toFile().deleteOnExit();
      }
      return target;
    } catch (IOException e) {
      throw new CudaUnavailableException("cannot extract the forwarder for " + soname, e);
    }
  }
}
