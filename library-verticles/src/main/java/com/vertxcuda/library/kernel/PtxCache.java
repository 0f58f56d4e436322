package com.vertxcuda.library.kernel;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Compiled PTX keyed by source, options and device architecture: in memory (LRU) and, when a
 * folder is configured, on disk as {@code <sha-256>.ptx}, so a restarted device host skips NVRTC.
 * Thread-safe: compiles run on preparation threads, several at once.
 */
final class PtxCache {

  private final Map<String, String> memory;
  private final Path directory;

  PtxCache(int capacity, String directory) {
    this.memory = new LinkedHashMap<>(16, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, String> eldest) {
        return size() > capacity;
      }
    };
    this.directory = directory == null || directory.isEmpty() ? null : Path.of(directory);
  }

  static String key(String source, String arch, List<String> options) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(arch.getBytes(StandardCharsets.UTF_8));
      for (String o : options) {
        sha.update((byte) 0);
        sha.update(o.getBytes(StandardCharsets.UTF_8));
      }
      sha.update((byte) 1);
      sha.update(source.getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  synchronized String get(String key) {
    String ptx = memory.get(key);
    if (ptx == null && directory != null) {
      Path file = directory.resolve(key + ".ptx");
      try {
        if (Files.isRegularFile(file)) {
          ptx = Files.readString(file);
          memory.put(key, ptx);
        }
      } catch (IOException ignored) {
        // an unreadable cache entry is a miss
      }
    }
    return ptx;
  }

  synchronized void put(String key, String ptx) {
    memory.put(key, ptx);
    if (directory != null) {
      try {
        Files.createDirectories(directory);
        Path tmp = Files.createTempFile(directory, key, ".tmp");
        Files.writeString(tmp, ptx);
        Files.move(tmp, directory.resolve(key + ".ptx"), StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
      } catch (IOException ignored) {
        // the disk cache is an optimisation; memory still holds it
      }
    }
  }
}
