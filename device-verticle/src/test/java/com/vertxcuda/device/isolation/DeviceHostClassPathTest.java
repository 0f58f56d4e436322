package com.vertxcuda.device.isolation;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The device host's class path when the toolkit was loaded by a class loader of its own (as under
 * mvn exec:java): the loader's entries, not the JVM's class path, which lacks the toolkit.
 */
@Tag("runs-once")
class DeviceHostClassPathTest {

  @Test
  void takenFromTheToolkitsOwnClassLoaderWhenTheJvmClassPathLacksIt(@TempDir Path copy) throws Exception {
    // The toolkit's classes, a folder under Maven or a jar in the GPU bundle, copied where the JVM's
    // class path does not reach.
    Path classes = Path.of(ProcessContextTier.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    Path moved = Files.isDirectory(classes) ? copy : copy.resolve(classes.getFileName().toString());
    copyTree(classes, moved);
    List<URL> urls = new ArrayList<>();
    urls.add(moved.toUri().toURL());
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!Path.of(entry).toAbsolutePath().normalize().equals(classes)) {
        urls.add(Path.of(entry).toUri().toURL());
      }
    }
    try (URLClassLoader own = new URLClassLoader(urls.toArray(new URL[0]), ClassLoader.getPlatformClassLoader())) {
      Class<?> tier = own.loadClass(ProcessContextTier.class.getPackageName() + ".DeviceHostClassPath");
      assertEquals(own, tier.getClassLoader());
      Method classPath = tier.getDeclaredMethod("of");
      classPath.setAccessible(true);
      List<String> entries = List.of(((String) classPath.invoke(null)).split(File.pathSeparator));
      assertTrue(entries.contains(moved.toString()), "the loader's copy of the toolkit: " + entries);
      assertFalse(entries.contains(classes.toString()), "not the JVM's class path");
      assertEquals(urls.size(), entries.size());
    }
    // Loaded from the JVM's class path, it is that class path.
    assertEquals(System.getProperty("java.class.path"), DeviceHostClassPath.of());
  }

  private static void copyTree(Path from, Path to) throws IOException {
    if (!Files.isDirectory(from)) {
      Files.copy(from, to);
      return;
    }
    try (Stream<Path> all = Files.walk(from)) {
      for (Path p : (Iterable<Path>) all::iterator) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target);
        }
      }
    }
  }
}
