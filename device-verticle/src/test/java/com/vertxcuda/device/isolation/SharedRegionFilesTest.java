package com.vertxcuda.device.isolation;

import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.device.Isolation;
import com.vertxcuda.device.TestDevices;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shared region's file cannot be taken over by another local user: it is created exclusively
 * (a file or a link already there makes creation fail, and nothing is followed or truncated),
 * owner-only from its creation, in a private directory under a name nobody can guess; and the
 * device host maps only such a file.
 */
@Tag("runs-once")
class SharedRegionFilesTest {

  private static final byte[] PRECIOUS = "someone else's data".getBytes(StandardCharsets.UTF_8);

  @Test
  void aLinkPlantedAtTheRegionsPathFailsCreationAndItsTargetIsLeftAlone(@TempDir Path dir) throws Exception {
    Path target = Files.write(dir.resolve("target"), PRECIOUS);
    Path region = Files.createSymbolicLink(dir.resolve("region"), target);
    UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> SharedRegion.create(region, 1 << 16));
    assertInstanceOf(FileAlreadyExistsException.class, e.getCause());
    assertEquals(new String(PRECIOUS, StandardCharsets.UTF_8), Files.readString(target), "the link's target");
    assertTrue(Files.isSymbolicLink(region));
  }

  @Test
  void aFileAlreadyAtTheRegionsPathIsNeverAdopted(@TempDir Path dir) throws Exception {
    Path planted = Files.write(dir.resolve("region"), PRECIOUS);
    Files.setPosixFilePermissions(planted, PosixFilePermissions.fromString("rw-rw-rw-"));
    assertThrows(UncheckedIOException.class, () -> SharedRegion.create(planted, 1 << 16));
    assertEquals(PRECIOUS.length, Files.size(planted), "the planted file was truncated or grown");
  }

  /**
   * A file system that cannot hold the region (a 12 MiB tmpfs: room for the rings, not for a 16 MiB
   * region) fails {@link SharedRegion#reserve} — which a device host's start calls — with a message
   * naming the size and the remedy, instead of a fault on a page stored into while serving, whether
   * the region is checked or taken whole; a region taken whole holds its pages at once and reads as
   * zeros. Mounting the tmpfs needs root: skipped without it.
   */
  @Test
  void aFileSystemWithoutRoomForTheRegionFailsItsReservation(@TempDir Path dir) throws Exception {
    Path tiny = mountTmpfs(dir.resolve("tiny"));
    try {
      SharedRegion tooLarge = SharedRegion.create(tiny.resolve("large"), 16 << 20);
      for (boolean whole : new boolean[] {false, true}) {
        java.io.IOException e = assertThrows(java.io.IOException.class, () -> tooLarge.reserve(whole));
        assertTrue(e.getMessage().contains("16777216 bytes do not fit") && e.getMessage().contains("sharedMemorySize"),
          e.getMessage());
      }
    } finally {
      run("umount", "-l", tiny.toString());
    }
    tiny = mountTmpfs(dir.resolve("fits"));
    try {
      SharedRegion fits = SharedRegion.create(tiny.resolve("small"), 2 << 20);
      long before = Files.getFileStore(tiny).getUsableSpace();
      fits.reserve(false);
      assertEquals(before, Files.getFileStore(tiny).getUsableSpace(), "checked only: nothing taken");
      fits.reserve(true);
      java.nio.ByteBuffer all = fits.slice(0, 2 << 20);
      for (int i = 0; i < all.capacity(); i += 4096) {
        assertEquals(0, all.get(i), "byte " + i);
      }
      // Every page of the region is the file system's already.
      long free = Files.getFileStore(tiny).getUsableSpace();
      assertEquals(before - (2 << 20), free, "bytes free once the region was taken whole");
    } finally {
      run("umount", "-l", tiny.toString());
    }
  }

  // A 12 MiB tmpfs at `at`, where this user may mount one (root); the test is skipped elsewhere.
  private static Path mountTmpfs(Path at) throws Exception {
    Files.createDirectory(at);
    org.junit.jupiter.api.Assumptions.assumeTrue(run("mount", "-t", "tmpfs", "-o", "size=12m", "tmpfs",
      at.toString()), "cannot mount a small tmpfs here (not root)");
    return at;
  }

  private static boolean run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    p.getInputStream().readAllBytes();
    return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
  }

  @Test
  void theRegionIsOwnerOnlyFromItsCreation(@TempDir Path dir) throws Exception {
    SharedRegion region = SharedRegion.create(dir.resolve("region"), 1 << 16);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(region.path())));
    // The region, then the link's two rings (the region is page-sized here, so no padding between).
    assertEquals((1 << 16) + LinkRing.PAIR_BYTES, Files.size(region.path()));
  }

  @Test
  void theDeviceHostMapsOnlyAnOwnerOnlyRegularFileOfTheRightSize(@TempDir Path dir) throws Exception {
    Path path = SharedRegion.create(dir.resolve("region"), 1 << 16).path();
    assertEquals(1 << 16, SharedRegion.open(path, 1 << 16).size());

    Path link = Files.createSymbolicLink(dir.resolve("link"), path);
    assertThrows(UncheckedIOException.class, () -> SharedRegion.open(link, 1 << 16), "opened through a link");
    assertThrows(UncheckedIOException.class, () -> SharedRegion.open(path, 1 << 17), "a region of another size");
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-r--r--"));
    UncheckedIOException e = assertThrows(UncheckedIOException.class, () -> SharedRegion.open(path, 1 << 16));
    assertTrue(e.getMessage().contains("rw-r--r--, not rw-------"), e.getMessage());
    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    assertThrows(UncheckedIOException.class, () -> SharedRegion.open(path, 1 << 16), "a directory others can read");
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
  }

  /**
   * Links planted at every name the region used to get (pid, device, generation, a counter) are
   * neither followed nor adopted; the region lies in a fresh rwx------ directory, rw------- itself.
   */
  @Test
  void aDeviceHostsRegionCannotBeGuessedOrPlanted(@TempDir Path dir) throws Exception {
    Path shm = Path.of("/dev/shm");
    Path target = Files.write(dir.resolve("target"), PRECIOUS);
    List<Path> planted = new ArrayList<>();
    DeviceOptions options = TestDevices.options().setIsolation(Isolation.PROCESS).setSharedMemorySize(1 << 20);
    List<DeviceHostProcess> hosts = new ArrayList<>();
    try {
      if (Files.isDirectory(shm)) {
        for (int seq = 1; seq <= 300; seq++) {
          Path p = shm.resolve("vertx-cuda-" + ProcessHandle.current().pid() + "-" + options.getDevice() + "-g1-" + seq);
          if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            planted.add(Files.createSymbolicLink(p, target));
          }
        }
      }
      for (int i = 0; i < 2; i++) {
        DeviceHostProcess host = DeviceHostProcess.start(options, "local", 1, why -> { });
        hosts.add(host);
        Path region = host.region().path();
        Path parent = region.getParent();
        // Right after creation, before the device host has started (a JVM takes longer than this).
        assertEquals("rw-------", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(region, LinkOption.NOFOLLOW_LINKS)), "the region file");
        assertEquals("rwx------", PosixFilePermissions.toString(
          Files.getPosixFilePermissions(parent, LinkOption.NOFOLLOW_LINKS)), "the region's directory");
        assertEquals(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")).toRealPath(),
          parent.getParent().toRealPath());
        assertFalse(planted.contains(region), "the region took a planted name");
        // 128 random bits in both names: nothing an attacker could enumerate.
        assertTrue(parent.getFileName().toString().matches("vertx-cuda-\\d+-[0-9a-f]{32}"), parent.toString());
        assertTrue(region.getFileName().toString().matches("region-[0-9a-f]{32}"), region.toString());
      }
      assertNotEquals(hosts.get(0).region().path().getParent(), hosts.get(1).region().path().getParent());
      assertEquals(new String(PRECIOUS, StandardCharsets.UTF_8), Files.readString(target), "a planted link's target");
      for (Path p : planted) {
        assertTrue(Files.isSymbolicLink(p), p + " was replaced");
      }
    } finally {
      for (DeviceHostProcess h : hosts) {
        h.stop().get(10, TimeUnit.SECONDS);
        assertFalse(Files.exists(h.region().path().getParent(), LinkOption.NOFOLLOW_LINKS), "directory left behind");
      }
      for (Path p : planted) {
        Files.deleteIfExists(p);
      }
    }
  }
}
