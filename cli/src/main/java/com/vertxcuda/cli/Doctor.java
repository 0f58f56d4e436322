package com.vertxcuda.cli;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.cuda.CudaBackend;
import com.vertxcuda.device.cuda.CudaUnavailableException;
import com.vertxcuda.device.cuda.NativeLoading;
import com.vertxcuda.device.cuda.NativeLoading.NativeLibrary;
import com.vertxcuda.device.context.BackendSelection;
import com.vertxcuda.device.impl.Backends;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * What this machine offers the toolkit, found the way the device verticle finds it
 * ({@link NativeLoading}, {@link CudaBackend#load}, {@link Backends}): the NVIDIA driver, the CUDA
 * libraries and the forwarders that stand in for old sonames, and the backend a device would get.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
  description = "Show the NVIDIA driver, CUDA libraries and forwarders found, and the backend a device would get.")
final class Doctor implements Callable<Integer> {

  @Option(names = "--cuda-library-path", description = "a folder searched first for CUDA libraries (DeviceOptions.cudaLibraryPath)")
  String cudaLibraryPath;

  /** Where NativeLoading keeps its forwarders in the device jar. */
  private static final String FORWARDERS = "native/linux-x86_64";

  @Override
  public Integer call() {
    DeviceOptions options = new DeviceOptions().setCudaLibraryPath(cudaLibraryPath);
    line("java", System.getProperty("java.version") + " (" + System.getProperty("java.home") + "), "
      + System.getProperty("os.name") + " " + System.getProperty("os.arch"));
    Path driver = NativeLoading.driverPath(options);
    line("driver", driver == null ? "libcuda.so.1 not found" : "libcuda.so.1 at " + real(driver));
    line("nvidia-smi", nvidiaSmi());
    String why = null;
    try {
      CudaBackend.load(options);
    } catch (CudaUnavailableException e) {
      why = e.getMessage();
    }
    for (NativeLibrary library : NativeLibrary.values()) {
      line(library.name().toLowerCase(Locale.ROOT), library(library, options));
    }
    line("forwarders", forwarders());
    String backend;
    try {
      backend = BackendSelection.select(options).name();
    } catch (CudaUnavailableException e) {
      backend = "none";
      why = e.getMessage();
    }
    line("backend", backend + (why == null ? ": the driver and a device are usable" : ": " + why));
    line("isolation", Backends.isolation(options).name().toLowerCase(Locale.ROOT) + " (auto picks process with a driver, in_process without)");
    return 0;
  }

  private static void line(String what, String found) {
    System.out.printf("%-11s %s%n", what, found);
  }

  private static String library(NativeLibrary library, DeviceOptions options) {
    String loaded = NativeLoading.preparedPath(library);
    if (loaded == null) {
      try {
        NativeLoading.prepare(library, options);
        loaded = NativeLoading.preparedPath(library);
      } catch (CudaUnavailableException | UnsatisfiedLinkError e) {
        return "not found: " + e.getMessage();
      }
    }
    String via = loaded.endsWith(" via forwarder") ? " via forwarder" : "";
    Path path = Path.of(loaded.substring(0, loaded.length() - via.length()));
    return real(path) + via;
  }

  /** The file a soname link leads to: its name carries the full version (libcublas.so.12.4.5.8). */
  private static String real(Path path) {
    try {
      Path real = path.toRealPath();
      return real.equals(path) ? path.toString() : path + " -> " + real.getFileName();
    } catch (IOException e) {
      return path.toString();
    }
  }

  private static String nvidiaSmi() {
    try {
      Process p = new ProcessBuilder("nvidia-smi", "--query-gpu=index,name,driver_version,memory.total",
        "--format=csv,noheader").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
      if (!p.waitFor(10, TimeUnit.SECONDS)) {
        p.destroy();
        return "did not answer within 10 s";
      }
      return p.exitValue() == 0 ? String.join("; ", out.lines().toList()) : "exit " + p.exitValue() + ": " + out;
    } catch (IOException e) {
      return "not on PATH";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }

  /** The forwarding libraries the device jar carries. */
  private static String forwarders() {
    try {
      Path jar = Path.of(NativeLoading.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isDirectory(jar)) {
        return names(jar.resolve(FORWARDERS));
      }
      try (FileSystem fs = FileSystems.newFileSystem(jar, Map.of())) {
        return names(fs.getPath(FORWARDERS));
      }
    } catch (IOException | URISyntaxException | RuntimeException e) {
      return "unknown: " + e.getMessage();
    }
  }

  private static String names(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return "none in this build (they are built where gcc is present)";
    }
    try (Stream<Path> files = Files.list(dir)) {
      List<String> names = files.map(p -> p.getFileName().toString()).sorted().toList();
      return String.join(", ", names) + " (loaded under the old soname when only a newer CUDA major is present)";
    }
  }
}
