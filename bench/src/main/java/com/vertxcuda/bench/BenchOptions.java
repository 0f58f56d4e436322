package com.vertxcuda.bench;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.Isolation;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * BenchMain's command line.
 *
 * @param backend host, cuda or auto (cuda where a GPU is usable)
 * @param mode where the context tier runs: in_process or process
 * @param size small or full; null: full on cuda, small on host
 * @param out folder for {@code bench-<mode>.json}
 * @param only sweeps to run (empty: all)
 * @param raw measure raw JCuda beside the toolkit (on cuda, in the in_process run)
 * @param budgetSeconds stop starting new points after this long; 0: the size's own budget
 * @param commit the commit the run is of, for the record
 */
public record BenchOptions(BackendKind backend, Isolation mode, String size, Path out, Set<String> only, boolean raw,
                    double budgetSeconds, String commit) {

  public static final String USAGE = String.join("\n",
    "usage: BenchMain [--backend host|cuda|auto] [--mode in_process|process] [--size small|full]",
    "                 [--out DIR] [--only SWEEP,...] [--no-raw] [--budget SECONDS] [--commit ID]",
    "  sweeps: " + String.join(", ", BenchMain.SECTIONS),
    "  writes DIR/bench-<mode>.json (bench/SCHEMA.md); BenchReport turns it into Markdown, HTML and PNGs");

  public static BenchOptions parse(String... args) {
    BackendKind backend = BackendKind.AUTO;
    Isolation mode = Isolation.IN_PROCESS;
    String size = null;
    Path out = Path.of("bench-out");
    Set<String> only = Set.of();
    boolean raw = true;
    double budget = 0;
    String commit = "unknown";
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--no-raw")) {
        raw = false;
        continue;
      }
      if (a.equals("--help") || a.equals("-h")) {
        throw new IllegalArgumentException(USAGE);
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(a + " needs a value\n" + USAGE);
      }
      String v = args[++i];
      switch (a) {
        case "--backend":
          backend = BackendKind.valueOf(v.toUpperCase(Locale.ROOT));
          break;
        case "--mode":
          mode = Isolation.valueOf(v.toUpperCase(Locale.ROOT));
          if (mode == Isolation.AUTO) {
            throw new IllegalArgumentException("--mode is in_process or process\n" + USAGE);
          }
          break;
        case "--size":
          size = SweepSizes.named(v).name();
          break;
        case "--out":
          out = Path.of(v);
          break;
        case "--only":
          only = Set.copyOf(List.of(v.split(",")));
          List<String> unknown = new ArrayList<>(only);
          unknown.removeAll(BenchMain.SECTIONS);
          if (!unknown.isEmpty()) {
            throw new IllegalArgumentException("unknown sweep " + unknown + "\n" + USAGE);
          }
          break;
        case "--budget":
          budget = Double.parseDouble(v);
          break;
        case "--commit":
          commit = v;
          break;
        default:
          throw new IllegalArgumentException("unknown option " + a + "\n" + USAGE);
      }
    }
    return new BenchOptions(backend, mode, size, out, only, raw, budget, commit);
  }

  boolean runs(String section) {
    return only.isEmpty() || only.contains(section);
  }

  /** The mode as the record and the file name spell it. */
  public String modeName() {
    return mode.name().toLowerCase(Locale.ROOT);
  }
}
