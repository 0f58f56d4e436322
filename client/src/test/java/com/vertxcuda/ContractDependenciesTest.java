package com.vertxcuda;

import com.vertxcuda.blas.BlasClient;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The client artifact stays free of the engines' dependencies: what the build resolves for it has
 * no JCuda, netlib, JTransforms (nor what JTransforms brings) or device and library modules, and
 * no class of it refers to any of them. (The enforcer's bannedDependencies rule in this module's
 * pom fails the build first; this checks what actually ends up on the class path and in the
 * class files.)
 */
class ContractDependenciesTest {

  /** Jar names of what a sending node must not need. */
  private static final Pattern BANNED_JAR = Pattern.compile(
    "(?i)^(jcuda|jcublas|jcufft|jcurand|jcusparse|jcusolver|jnvrtc|blas|lapack|arpack|JTransforms|JLargeArrays"
      + "|commons-math3|jna|vertx-cuda-device|vertx-cuda-libraries)-[0-9].*\\.jar$");

  /** Packages (internal names) a class of this artifact must not refer to. */
  private static final List<String> BANNED_PACKAGES = List.of("jcuda/", "dev/ludovic/netlib/", "org/jtransforms/",
    "pl/edu/icm/jlargearrays/", "org/apache/commons/math3/", "com/sun/jna/");

  private static final Pattern DESCRIPTOR_CLASS = Pattern.compile("L([\\w$/]+)[;<]");

  @Test
  void theResolvedClassPathHoldsNoEngineDependency() {
    List<String> banned = new ArrayList<>();
    List<String> entries = List.of(System.getProperty("java.class.path").split(File.pathSeparator));
    for (String entry : entries) {
      Path p = Path.of(entry);
      String name = p.getFileName() == null ? "" : p.getFileName().toString();
      if (BANNED_JAR.matcher(name).matches()
        || entry.replace('\\', '/').matches(".*/(device-verticle|library-verticles)/target/.*")) {
        banned.add(entry);
      }
    }
    assertTrue(banned.isEmpty(), "the client artifact's class path holds " + banned);
    assertTrue(entries.stream().anyMatch(e -> e.contains("vertx-core")), "the check reads a real class path: " + entries);
  }

  @Test
  void noClassOfTheArtifactRefersToAnEngineDependency() throws Exception {
    Path classes = Path.of(BlasClient.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    try (FileSystem jar = Files.isDirectory(classes) ? null
      : FileSystems.newFileSystem(URI.create("jar:" + classes.toUri()), Map.of())) {
      Path root = jar == null ? classes : jar.getPath("/");
      Set<String> own = new HashSet<>();
      Map<String, Set<String>> refs = new java.util.TreeMap<>();
      try (Stream<Path> files = Files.walk(root)) {
        for (Path f : (Iterable<Path>) files.filter(x -> x.toString().endsWith(".class"))::iterator) {
          String name = root.relativize(f).toString().replace('\\', '/');
          own.add(name.substring(0, name.length() - ".class".length()));
          try (InputStream in = Files.newInputStream(f)) {
            refs.put(name, referencedClasses(in));
          }
        }
      }
      assertTrue(own.contains("com/vertxcuda/blas/impl/BlasClientImpl"), "read the artifact's classes: " + root);
      Set<String> wrong = new TreeSet<>();
      refs.forEach((cls, used) -> {
        for (String r : used) {
          boolean banned = BANNED_PACKAGES.stream().anyMatch(r::startsWith);
          // Within the toolkit, a class of this artifact refers only to others of it.
          boolean otherModule = r.startsWith("com/vertxcuda/") && !own.contains(r);
          if (banned || otherModule) {
            wrong.add(cls + " -> " + r);
          }
        }
      });
      assertEquals(Set.of(), wrong, "classes that would need more than this artifact");
    }
  }

  /** Every class a class file names in its constant pool: class entries and those inside descriptors. */
  static Set<String> referencedClasses(InputStream classFile) throws IOException {
    DataInputStream in = new DataInputStream(classFile);
    if (in.readInt() != 0xCAFEBABE) {
      throw new IOException("not a class file");
    }
    in.readUnsignedShort();
    in.readUnsignedShort();
    int count = in.readUnsignedShort();
    String[] utf8 = new String[count];
    List<Integer> classIndexes = new ArrayList<>();
    for (int i = 1; i < count; i++) {
      int tag = in.readUnsignedByte();
      switch (tag) {
        case 1 -> utf8[i] = in.readUTF();
        case 7 -> classIndexes.add(in.readUnsignedShort());
        case 8, 16, 19, 20 -> in.readUnsignedShort();
        case 15 -> { in.readUnsignedByte(); in.readUnsignedShort(); }
        case 3, 4, 9, 10, 11, 12, 17, 18 -> in.readInt();
        case 5, 6 -> { in.readLong(); i++; }
        default -> throw new IOException("constant pool tag " + tag);
      }
    }
    Set<String> names = new TreeSet<>();
    for (int index : classIndexes) {
      String n = utf8[index];
      names.add(n.startsWith("[") ? n.replaceAll("^\\[+L?|;$", "") : n);
    }
    for (String s : utf8) {
      if (s != null) {
        Matcher m = DESCRIPTOR_CLASS.matcher(s);
        while (m.find()) {
          names.add(m.group(1));
        }
      }
    }
    return names;
  }
}
