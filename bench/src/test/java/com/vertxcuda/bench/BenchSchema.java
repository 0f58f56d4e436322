package com.vertxcuda.bench;

import com.vertxcuda.bench.result.BenchRecord;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Checks a benchmark result file against the JSON Schema the toolkit ships (tests here and in bench-jmh). */
public final class BenchSchema {

  private static final Schema SCHEMA = load();

  private BenchSchema() {
  }

  /** What is wrong with the document in {@code file}; empty when it conforms. */
  public static List<String> problems(Path file) throws IOException {
    return problems(Files.readString(file, StandardCharsets.UTF_8));
  }

  public static List<String> problems(String json) {
    return SCHEMA.validate(json, InputFormat.JSON).stream().map(Error::toString).toList();
  }

  private static Schema load() {
    try (InputStream in = BenchRecord.class.getResourceAsStream(BenchRecord.SCHEMA_RESOURCE)) {
      String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      return SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12).getSchema(text, InputFormat.JSON);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
