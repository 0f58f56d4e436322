package com.vertxcuda.library.kernel;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Compiled PTX is found again by source, options and architecture, in memory and on disk. */
class PtxCacheTest {

  @Test
  void keysTellSourceOptionsAndArchitectureApart() {
    String k = PtxCache.key("src", "compute_90", List.of("-DN=1"));
    assertEquals(k, PtxCache.key("src", "compute_90", List.of("-DN=1")));
    assertNotEquals(k, PtxCache.key("src", "compute_80", List.of("-DN=1")));
    assertNotEquals(k, PtxCache.key("src", "compute_90", List.of("-DN=2")));
    assertNotEquals(k, PtxCache.key("src2", "compute_90", List.of("-DN=1")));
    // Options are not concatenated ambiguously.
    assertNotEquals(PtxCache.key("s", "a", List.of("-Dx", "y")), PtxCache.key("s", "a", List.of("-Dxy")));
  }

  @Test
  void aNewCacheOverTheSameFolderFindsWhatAnEarlierOneCompiled(@TempDir Path dir) throws Exception {
    String key = PtxCache.key("__global__ void k() {}", "compute_90", List.of());
    PtxCache first = new PtxCache(4, dir.toString());
    assertNull(first.get(key));
    first.put(key, ".version 7.0\n// k\n");
    assertTrue(Files.exists(dir.resolve(key + ".ptx")));
    PtxCache afterRestart = new PtxCache(4, dir.toString());
    assertEquals(".version 7.0\n// k\n", afterRestart.get(key));
  }

  @Test
  void memoryOnlyCacheEvictsTheLeastRecentlyUsed() {
    PtxCache cache = new PtxCache(2, null);
    cache.put("a", "A");
    cache.put("b", "B");
    assertEquals("A", cache.get("a"));
    cache.put("c", "C");
    assertNull(cache.get("b"));
    assertEquals("A", cache.get("a"));
    assertEquals("C", cache.get("c"));
  }
}
