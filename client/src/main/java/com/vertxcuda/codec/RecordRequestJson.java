package com.vertxcuda.codec;

import com.vertxcuda.Library;
import com.vertxcuda.message.PipelineStep;
import com.vertxcuda.message.RecordRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;

/**
 * The JSON form of a {@link RecordRequest}:
 * {@code {"steps": [{"library": "blas", "type": "vertx-cuda.BlasRequest", "body": {...}}]}}. Each
 * step names its body by its wire type, so the form is read and written here, beside the table of
 * wire types ({@link CudaCodecs#wireTypes()}), and the message package depends on no codec.
 */
public final class RecordRequestJson {

  private RecordRequestJson() {
  }

  /** {@code record}'s JSON form; IllegalArgumentException for a step body without a wire type or a JSON form. */
  public static JsonObject toJson(RecordRequest record) {
    JsonArray array = new JsonArray();
    List<PipelineStep> steps = record.getSteps();
    if (steps != null) {
      for (PipelineStep s : steps) {
        JsonObject step = new JsonObject();
        if (s.library() != null) {
          step.put("library", s.library().suffix());
        }
        if (s.body() != null) {
          step.put("type", CudaCodecs.wireTypeOf(s.body()).name());
          try {
            step.put("body", s.body().getClass().getMethod("toJson").invoke(s.body()));
          } catch (ReflectiveOperationException e) {
            throw new IllegalArgumentException(s.body().getClass().getSimpleName() + " has no JSON form", e);
          }
        }
        array.add(step);
      }
    }
    return new JsonObject().put("steps", array);
  }

  /**
   * The RecordRequest of a JSON form: each step's body made by its wire type's JSON constructor;
   * IllegalArgumentException for a type that is not a vertx-cuda message or has no JSON form.
   */
  public static RecordRequest fromJson(JsonObject json) {
    JsonArray array = json.getJsonArray("steps");
    List<PipelineStep> list = new ArrayList<>();
    if (array != null) {
      for (int i = 0; i < array.size(); i++) {
        JsonObject s = array.getJsonObject(i);
        String lib = s.getString("library");
        WireType<?> type = CudaCodecs.wireTypeNamed(s.getString("type"));
        Object body;
        try {
          body = type.type().getConstructor(JsonObject.class).newInstance(s.getJsonObject("body", new JsonObject()));
        } catch (NoSuchMethodException | InstantiationException | IllegalAccessException | InvocationTargetException e) {
          throw new IllegalArgumentException("steps[" + i + "]: " + type.name() + " has no JSON form", e);
        }
        list.add(new PipelineStep(lib == null ? null : Library.of(lib), body));
      }
    }
    return new RecordRequest(list);
  }
}
