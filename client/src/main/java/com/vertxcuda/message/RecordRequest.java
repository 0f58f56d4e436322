package com.vertxcuda.message;

import com.vertxcuda.Library;
import com.vertxcuda.codec.CudaCodecs;
import com.vertxcuda.codec.WireType;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.List;

/**
 * Record a pipeline: its steps, in order, each a request body of the device or of one library.
 * Replied with a {@link com.vertxcuda.PipelineHandle}. Sent by {@link com.vertxcuda.PipelineRecorder#build()}.
 */
public class RecordRequest {

  /** Most steps one pipeline holds. */
  public static final int MAX_STEPS = 1024;

  private final List<PipelineStep> steps;

  public RecordRequest(List<PipelineStep> steps) {
    this.steps = steps;
  }

  /** The JSON form: {@code {"steps": [{"library": "blas", "type": "vertx-cuda.BlasRequest", "body": {...}}]}}. */
  public RecordRequest(JsonObject json) {
    JsonArray array = json.getJsonArray("steps");
    List<PipelineStep> list = new ArrayList<>();
    if (array != null) {
      for (int i = 0; i < array.size(); i++) {
        JsonObject s = array.getJsonObject(i);
        String lib = s.getString("library");
        WireType<?> type = typeNamed(s.getString("type"));
        Object body;
        try {
          body = type.type().getConstructor(JsonObject.class).newInstance(s.getJsonObject("body", new JsonObject()));
        } catch (NoSuchMethodException | InstantiationException | IllegalAccessException | InvocationTargetException e) {
          throw new IllegalArgumentException("steps[" + i + "]: " + type.name() + " has no JSON form", e);
        }
        list.add(new PipelineStep(lib == null ? null : Library.of(lib), body));
      }
    }
    this.steps = list;
  }

  public JsonObject toJson() {
    JsonArray array = new JsonArray();
    if (steps != null) {
      for (PipelineStep s : steps) {
        JsonObject step = new JsonObject();
        if (s.library() != null) {
          step.put("library", s.library().suffix());
        }
        if (s.body() != null) {
          step.put("type", typeOf(s.body()).name());
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

  public List<PipelineStep> getSteps() { return steps; }

  /** The wire type of a step's body; IllegalArgumentException when it has none. */
  public static WireType<?> typeOf(Object body) {
    for (WireType<?> t : CudaCodecs.wireTypes()) {
      if (t.type() == body.getClass()) {
        return t;
      }
    }
    throw new IllegalArgumentException(body.getClass().getName() + " is not a vertx-cuda request");
  }

  /** The wire type called {@code name}; IllegalArgumentException when there is none. */
  public static WireType<?> typeNamed(String name) {
    for (WireType<?> t : CudaCodecs.wireTypes()) {
      if (t.name().equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("no message type " + name);
  }
}
