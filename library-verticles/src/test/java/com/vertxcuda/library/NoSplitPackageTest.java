package com.vertxcuda.library;

import com.vertxcuda.blas.BlasClient;
import com.vertxcuda.library.blas.BlasVerticle;
import com.vertxcuda.device.DeviceVerticle;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * No package spans two of the toolkit's jars (each names its module through
 * Automatic-Module-Name, and a package in two modules cannot be loaded): the client
 * artifact, the device module and this one. Resources count, as they do for an automatic module.
 */
class NoSplitPackageTest {

  @Test
  void theClientDeviceAndLibraryJarsShareNoPackage() throws Exception {
    Map<String, Set<String>> packages = new HashMap<>();
    packages.put("client", packagesOf(BlasClient.class));
    packages.put("device", packagesOf(DeviceVerticle.class));
    packages.put("libraries", packagesOf(BlasVerticle.class));
    assertTrue(packages.get("client").contains("com.vertxcuda.blas"), packages.get("client").toString());
    assertTrue(packages.get("libraries").contains("com.vertxcuda.library.blas"), packages.get("libraries").toString());
    Set<String> shared = new TreeSet<>();
    for (String a : packages.keySet()) {
      for (String b : packages.keySet()) {
        if (a.compareTo(b) < 0) {
          for (String p : packages.get(a)) {
            if (packages.get(b).contains(p)) {
              shared.add(p + " (" + a + ", " + b + ")");
            }
          }
        }
      }
    }
    assertEquals(Set.of(), shared);
  }

  private static Set<String> packagesOf(Class<?> member) throws Exception {
    Path location = Path.of(member.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (FileSystem jar = Files.isDirectory(location) ? null
      : FileSystems.newFileSystem(URI.create("jar:" + location.toUri()), Map.of())) {
      Path root = jar == null ? location : jar.getPath("/");
      try (Stream<Path> files = Files.walk(root)) {
        return files.filter(Files::isRegularFile)
          .map(f -> root.relativize(f).toString().replace('\\', '/'))
          .filter(n -> n.contains("/") && !n.startsWith("META-INF/"))
          .map(n -> n.substring(0, n.lastIndexOf('/')).replace('/', '.'))
          .collect(Collectors.toCollection(TreeSet::new));
      }
    }
  }
}
