package com.vertxcuda.bench.report;

import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static com.vertxcuda.bench.report.Tables.value;

/**
 * The copy sweep by host type ({@code copy.host.h2d}, {@code copy.host.d2h}, with the heap Buffer,
 * transfer buffer and lent buffer of {@code copy.h2d} / {@code copy.d2h} beside them): one table per
 * direction, a row per host type, a column per size and mode, each cell the toolkit's GB/s and its
 * cost over the PyTorch yardstick the host type is judged by.
 */
final class HostCopyTables {

  /** PyTorch's copy between a pageable CPU tensor and a GPU tensor, both kept from copy to copy. */
  private static final String PAGEABLE = "pageable";
  /** PyTorch's {@code .cpu()}: a new pageable tensor each copy. */
  private static final String NEW_TENSOR = "a new tensor each copy (.cpu())";

  /** A direction: its sweep by host type, the sweep of its other points, and those points' variants. */
  private record Direction(String title, String byHost, String sweep, List<String> ownVariants) {
  }

  private static final Direction H2D = new Direction("Uploads (host to device) by host type", "copy.host.h2d",
    "copy.h2d", List.of("heap", "transfer buffer"));
  private static final Direction D2H = new Direction("Downloads (device to host) by host type", "copy.host.d2h",
    "copy.d2h", List.of("lent buffer"));

  private HostCopyTables() {
  }

  static Tables.Table uploads(Results r) {
    return table(r, H2D);
  }

  static Tables.Table downloads(Results r) {
    return table(r, D2H);
  }

  /**
   * The PyTorch variant a host type is judged by: what makes a new host object each copy (a new
   * array; {@code download}'s Buffer) against {@code .cpu()}, everything else (uploads, downloads into
   * memory kept from copy to copy) against the pageable copy into a kept tensor.
   */
  private static String yardstick(String sweep, String variant) {
    boolean fresh = sweep.endsWith("d2h") && (variant.endsWith(" new") || variant.equals("lent buffer"));
    return fresh ? NEW_TENSOR : PAGEABLE;
  }

  /** How a row names a toolkit variant: the sweep's own points say what they are. */
  private static String label(String variant) {
    switch (variant) {
      case "heap":
        return "heap Buffer";
      case "lent buffer":
        return "Buffer (download, lent buffer handed back)";
      default:
        return variant;
    }
  }

  private static Tables.Table table(Results r, Direction dir) {
    List<String> paths = r.toolkitPaths();
    TreeSet<Double> sizes = new TreeSet<>();
    Set<String> variants = new LinkedHashSet<>();
    for (Results.Entry e : r.sweep(dir.byHost)) {
      if (paths.contains(e.path())) {
        variants.add(e.variant());
        e.points().forEach(p -> sizes.add(p.getDouble("x")));
      }
    }
    List<List<String>> rows = new ArrayList<>();
    if (sizes.isEmpty()) {
      return new Tables.Table(dir.title, null, List.of(), rows);
    }
    List<String> header = new ArrayList<>(List.of("host type", "judged by"));
    for (double x : sizes) {
      for (String path : paths) {
        header.add(Axis.bytes(x) + " " + mode(path));
      }
    }
    for (String v : dir.ownVariants) {
      rows.add(row(r, dir.sweep, dir.sweep, v, paths, sizes));
    }
    for (String v : variants) {
      rows.add(row(r, dir.byHost, dir.sweep, v, paths, sizes));
    }
    // A host type this run measured at none of the sizes (a transfer buffer it could not lend) has no row.
    rows.removeIf(cells -> cells.stream().skip(2).allMatch(String::isEmpty));
    // The yardsticks themselves, and raw JCuda's pageable copy beside them: one figure per size.
    List<String[]> references = new ArrayList<>();
    references.add(new String[] {"pytorch", PAGEABLE, "PyTorch: pageable tensor, kept"});
    if (dir == D2H) {
      references.add(new String[] {"pytorch", NEW_TENSOR, "PyTorch: .cpu(), a new tensor"});
    }
    references.add(new String[] {"raw-jcuda", PAGEABLE, "raw JCuda: pageable Java array"});
    for (String[] ref : references) {
      Optional<Results.Entry> e = r.find(dir.sweep, ref[0], ref[1]);
      if (e.isEmpty()) {
        continue;
      }
      List<String> cells = new ArrayList<>(List.of(ref[2], ""));
      for (double x : sizes) {
        String v = e.get().at(x).map(p -> value(p.getDouble("value"), "GB/s")).orElse("");
        paths.forEach(p -> cells.add(v));
      }
      rows.add(cells);
    }
    return new Tables.Table(dir.title, "one copy at a time, GB/s per host type, size and mode; in brackets the "
      + "toolkit's cost over its PyTorch yardstick (theirs over the toolkit's GB/s: 1 = the same, above 1 = slower): "
      + "uploads and downloads into memory kept from copy to copy against PyTorch's pageable copy between kept "
      + "tensors, downloads into new memory against .cpu(); the last rows are the yardsticks, the same for both modes",
      header, rows);
  }

  private static List<String> row(Results r, String sweep, String referenceSweep, String variant, List<String> paths,
                                  TreeSet<Double> sizes) {
    String yardstick = yardstick(referenceSweep, variant);
    List<String> cells = new ArrayList<>(List.of(label(variant), yardstick.equals(PAGEABLE)
      ? "PyTorch pageable" : "PyTorch .cpu()"));
    Optional<Results.Entry> reference = r.find(referenceSweep, "pytorch", yardstick);
    for (double x : sizes) {
      Optional<JsonObject> ref = reference.flatMap(e -> e.at(x));
      for (String path : paths) {
        Optional<JsonObject> p = r.find(sweep, path, variant).flatMap(e -> e.at(x));
        cells.add(p.map(point -> cell(point.getDouble("value"), ref)).orElse(""));
      }
    }
    return cells;
  }

  private static String cell(double gbps, Optional<JsonObject> reference) {
    String v = value(gbps, "GB/s");
    if (reference.isEmpty() || gbps <= 0) {
      return v;
    }
    return v + String.format(Locale.ROOT, " (%.2f)", reference.get().getDouble("value") / gbps);
  }

  private static String mode(String path) {
    return path.equals("vertx.in_process") ? "in-process" : "process";
  }
}
