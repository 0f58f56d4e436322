package com.vertxcuda.cli;

import com.vertxcuda.samples.QuietLogging;
import com.vertxcuda.samples.Quickstart;
import com.vertxcuda.samples.cluster.ClusterClient;
import com.vertxcuda.samples.cluster.GpuNode;
import java.util.concurrent.ExecutionException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParseResult;

import java.io.PrintWriter;

/**
 * The {@code vertx-cuda} command: one runnable jar with the toolkit's tools as subcommands. Logs are
 * warnings only unless {@code --verbose} (before the subcommand, or the quickstart's own). A bad
 * argument prints one line and a hint and exits 2; a failure prints one line and exits 1.
 */
@Command(name = "vertx-cuda", mixinStandardHelpOptions = true, version = "vertx-cuda 0.1.0-SNAPSHOT",
  description = "CUDA GPUs on the Vert.x event bus.",
  subcommands = {Doctor.class, Devices.class, Bench.class})
public final class VertxCuda implements Runnable {

  @Option(names = "--verbose", description = "keep every log line (Vert.x, Hazelcast, the device, netlib)")
  boolean verbose;

  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(commandLine().execute(args));
  }

  /** The command line with every subcommand and the error handling described above. */
  public static CommandLine commandLine() {
    VertxCuda top = new VertxCuda();
    CommandLine cmd = new CommandLine(top)
      .addSubcommand("node", new GpuNode())
      .addSubcommand("client", new ClusterClient())
      .addSubcommand("quickstart", new Quickstart())
      .setCaseInsensitiveEnumValuesAllowed(true);
    cmd.getSubcommands().get("bench").setUnmatchedArgumentsAllowed(true);
    cmd.setExecutionStrategy(parsed -> {
      if (!top.verbose && !matchedVerbose(parsed)) {
        QuietLogging.apply();
      }
      return new CommandLine.RunLast().execute(parsed);
    });
    cmd.setParameterExceptionHandler((e, args) -> {
      CommandLine c = e.getCommandLine();
      PrintWriter err = c.getErr();
      err.println(c.getCommandName().equals("vertx-cuda") ? "vertx-cuda: " + e.getMessage()
        : "vertx-cuda " + c.getCommandName() + ": " + e.getMessage());
      err.println("Try '" + c.getCommandSpec().qualifiedName() + " --help' for more information.");
      return 2;
    });
    cmd.setExecutionExceptionHandler((e, c, parsed) -> {
      c.getErr().println("vertx-cuda " + c.getCommandName() + ": " + message(e));
      return 1;
    });
    return cmd;
  }

  private static boolean matchedVerbose(ParseResult parsed) {
    for (ParseResult p = parsed; p != null; p = p.subcommand()) {
      if (p.hasMatchedOption("--verbose")) {
        return true;
      }
    }
    return false;
  }

  private static String message(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && (t.getMessage() == null || t instanceof ExecutionException)) {
      t = t.getCause();
    }
    return t.getMessage() != null ? t.getMessage() : t.toString();
  }

  @Override
  public void run() {
    spec.commandLine().usage(spec.commandLine().getOut());
  }
}
