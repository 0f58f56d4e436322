package com.vertxcuda.fft;

import com.vertxcuda.BufferHandle;
import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;

/**
 * One batched 1D, 2D or 3D FFT in cuFFT's plan-many terms. {@code n} are the logical sizes,
 * slowest dimension first. Element {@code (i0, i1, i2)} of batch {@code b} sits at
 * {@code b * idist + ((i0 * inembed[1] + i1) * inembed[2] + i2) * istride} input elements (complex
 * elements for complex data, reals for real data); the same with {@code onembed, ostride, odist}
 * for the output. Without {@code inembed} the layout is the logical one (R2C output and C2R input
 * have {@code n[last] / 2 + 1} along the last dimension); a zero dist means
 * {@code product(embed) * stride}. Input and output may be the same buffer (in place). Replied with
 * an {@link FftReply}.
 */
@DataObject
@JsonGen(publicConverter = false)
public class FftRequest {

  private FftType type;
  private FftDirection direction = FftDirection.FORWARD;
  private List<Integer> n = new ArrayList<>();
  private int batch = 1;
  private List<Integer> inembed;
  private long istride = 1;
  private long idist;
  private List<Integer> onembed;
  private long ostride = 1;
  private long odist;
  private BufferHandle input;
  private BufferHandle output;

  public FftRequest() {
  }

  public FftRequest(JsonObject json) {
    FftRequestConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    FftRequestConverter.toJson(this, json);
    return json;
  }

  /** The transform kind; it fixes the dtypes and which side is complex. */
  public FftType getType() { return type; }
  public FftRequest setType(FftType type) { this.type = type; return this; }

  /** FORWARD or INVERSE for C2C and Z2Z; R2C/D2Z are forward and C2R/Z2D inverse whatever this says. */
  public FftDirection getDirection() { return direction; }
  public FftRequest setDirection(FftDirection direction) { this.direction = direction; return this; }

  /** Logical sizes, 1 to 3 of them, slowest-varying first. */
  public List<Integer> getN() { return n; }
  public FftRequest setN(List<Integer> n) { this.n = n; return this; }

  /** Number of transforms. */
  public int getBatch() { return batch; }
  public FftRequest setBatch(int batch) { this.batch = batch; return this; }

  /** Storage sizes of the input, one per dimension; null for the logical layout. */
  public List<Integer> getInembed() { return inembed; }
  public FftRequest setInembed(List<Integer> inembed) { this.inembed = inembed; return this; }

  /** Distance between consecutive input elements of the innermost dimension, in elements. */
  public long getIstride() { return istride; }
  public FftRequest setIstride(long istride) { this.istride = istride; return this; }

  /** Distance between the first elements of consecutive input batches, in elements; 0 for the default. */
  public long getIdist() { return idist; }
  public FftRequest setIdist(long idist) { this.idist = idist; return this; }

  /** Storage sizes of the output; null for the logical layout. */
  public List<Integer> getOnembed() { return onembed; }
  public FftRequest setOnembed(List<Integer> onembed) { this.onembed = onembed; return this; }

  /** Output innermost stride, in elements. */
  public long getOstride() { return ostride; }
  public FftRequest setOstride(long ostride) { this.ostride = ostride; return this; }

  /** Output batch distance, in elements; 0 for the default. */
  public long getOdist() { return odist; }
  public FftRequest setOdist(long odist) { this.odist = odist; return this; }

  public BufferHandle getInput() { return input; }
  public FftRequest setInput(BufferHandle input) { this.input = input; return this; }

  public BufferHandle getOutput() { return output; }
  public FftRequest setOutput(BufferHandle output) { this.output = output; return this; }
}
