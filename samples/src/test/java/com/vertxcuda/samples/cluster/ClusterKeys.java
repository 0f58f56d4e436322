package com.vertxcuda.samples.cluster;

import java.nio.file.Path;
import java.util.List;

/**
 * A test cluster's PKCS#12 store for {@code --cluster-manager infinispan}, made with the JDK's
 * keytool exactly as docs/security.md tells an operator: the AES key of SYM_ENCRYPT and the RSA key
 * pair of AUTH's X509Token.
 */
final class ClusterKeys {

  private static final String PASSWORD = "test-store-password";
  private static final String SECRET = "test-cluster-secret";

  private ClusterKeys() {
  }

  /** Makes the store in {@code dir} (once per test class). */
  static void generate(Path dir) throws Exception {
    generate(dir.resolve("cluster.p12"), PASSWORD);
  }

  /** {@code s} on encrypted, authenticated Infinispan with the store {@link #generate(Path)} made in {@code dir}. */
  static ClusterSettings encrypted(ClusterSettings s, Path dir) {
    s.manager = ClusterSettings.Manager.INFINISPAN;
    s.jgroupsKeyStore = dir.resolve("cluster.p12").toString();
    s.jgroupsPassword = PASSWORD;
    s.jgroupsSecret = SECRET;
    return s;
  }

  static void generate(Path store, String password) throws Exception {
    String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
    // keytool's JVM C1-only with the serial collector, as the suite's other JVMs: a short run.
    run(List.of(keytool, "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-genseckey", "-alias", EncryptedInfinispan.KEY_ALIAS, "-keyalg", "AES", "-keysize", "256",
      "-storetype", "PKCS12", "-keystore", store.toString(), "-storepass", password, "-keypass", password));
    run(List.of(keytool, "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-genkeypair", "-alias", EncryptedInfinispan.AUTH_ALIAS, "-keyalg", "RSA", "-keysize", "2048",
      "-dname", "CN=vertx-cuda-test-cluster", "-validity", "2", "-storetype", "PKCS12", "-keystore", store.toString(),
      "-storepass", password, "-keypass", password));
  }

  private static void run(List<String> command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (p.waitFor() != 0) {
      throw new IllegalStateException("keytool failed: " + out);
    }
  }
}
