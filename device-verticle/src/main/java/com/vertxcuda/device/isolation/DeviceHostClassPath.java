package com.vertxcuda.device.isolation;

import com.vertxcuda.device.DeviceOptions;

import java.io.File;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.LinkedHashSet;

/** The device host's class path, decided in one place. */
final class DeviceHostClassPath {

  private DeviceHostClassPath() {
  }

  /** The class path {@code options} name ({@link DeviceOptions#getDeviceHostClassPath()}), else {@link #of()}. */
  static String of(DeviceOptions options) {
    String named = options.getDeviceHostClassPath();
    return named != null && !named.isBlank() ? named : of();
  }

  /**
   * This JVM's class path, unless the toolkit was loaded by a class loader of its own (mvn
   * exec:java, an application server), whose entries are taken then.
   */
  static String of() {
    String jvm = System.getProperty("java.class.path", "");
    try {
      String own = Path.of(DeviceHostMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
      for (String entry : jvm.split(File.pathSeparator)) {
        if (!entry.isEmpty() && Path.of(entry).toAbsolutePath().normalize().toString().equals(own)) {
          return jvm;
        }
      }
      LinkedHashSet<String> entries = new LinkedHashSet<>();
      for (ClassLoader l = DeviceHostMain.class.getClassLoader(); l != null; l = l.getParent()) {
        if (l instanceof URLClassLoader) {
          for (URL url : ((URLClassLoader) l).getURLs()) {
            if ("file".equals(url.getProtocol())) {
              entries.add(Path.of(url.toURI()).toString());
            }
          }
        }
      }
      return entries.contains(own) ? String.join(File.pathSeparator, entries) : jvm;
    } catch (URISyntaxException | RuntimeException e) {
      return jvm;
    }
  }
}
