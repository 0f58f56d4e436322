package com.vertxcuda.library.fft;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.device.spi.DeviceBuffer;
import com.vertxcuda.device.spi.LibraryContext;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.library.impl.Operand;

import java.util.ArrayList;
import java.util.List;

import static com.vertxcuda.library.impl.RequestChecks.bad;
import static com.vertxcuda.library.impl.RequestChecks.fits;
import static com.vertxcuda.library.impl.RequestChecks.require;

/** An {@link FftRequest} that passed every check, with its plan key and resolved operands. */
public final class FftCall {

  private final FftPlanKey key;
  private final FftDirection direction;
  private final Operand input;
  private final Operand output;

  private FftCall(FftPlanKey key, FftDirection direction, Operand input, Operand output) {
    this.key = key;
    this.direction = direction;
    this.input = input;
    this.output = output;
  }

  public FftPlanKey key() { return key; }
  public FftType type() { return key.type(); }
  /** The direction in effect (R2C/D2Z forward, C2R/Z2D inverse). */
  public FftDirection direction() { return direction; }
  public Operand input() { return input; }
  public Operand output() { return output; }

  /** The buffers the transform reads. */
  public List<DeviceBuffer> reads() {
    return type().isComplexToReal() ? List.of() : List.of(input.buffer());
  }

  /**
   * The buffers it writes. cuFFT's complex-to-real transforms overwrite their input, out of place
   * too: it is ordered as written, and its contents afterwards are unspecified.
   */
  public List<DeviceBuffer> writes() {
    return type().isComplexToReal() ? List.of(input.buffer(), output.buffer()) : List.of(output.buffer());
  }

  /** Validates {@code r} against the buffers of {@code table}'s context; BAD_REQUEST names the field. */
  public static FftCall of(FftRequest r, LibraryContext table) {
    FftType type = r.getType();
    if (type == null) {
      throw bad("type is missing");
    }
    List<Integer> n = r.getN();
    require(n != null && n.size() >= 1 && n.size() <= 3, () -> "n must have 1 to 3 sizes, got "
      + (n == null ? "none" : n.size()));
    int rank = n.size();
    int[] dims = new int[rank];
    for (int i = 0; i < rank; i++) {
      Integer v = n.get(i);
      int at = i;
      require(v != null && v >= 1, () -> "n[" + at + "] must be >= 1, got " + v);
      dims[i] = v;
    }
    require(r.getBatch() >= 1, () -> "batch must be >= 1, got " + r.getBatch());
    FftDirection direction = type.isRealToComplex() ? FftDirection.FORWARD
      : type.isComplexToReal() ? FftDirection.INVERSE : r.getDirection();
    if (direction == null) {
      throw bad("direction is missing");
    }
    int[] half = dims.clone();
    half[rank - 1] = dims[rank - 1] / 2 + 1;
    int[] inDims = type.isComplexToReal() ? half : dims;
    int[] outDims = type.isRealToComplex() ? half : dims;
    FftLayout in = layout(r.getInembed(), r.getIstride(), r.getIdist(), inDims, "inembed", "istride", "idist");
    FftLayout out = layout(r.getOnembed(), r.getOstride(), r.getOdist(), outDims, "onembed", "ostride", "odist");
    DeviceBuffer ia = table.resolve(r.getInput(), "input", dtypes(type, type.isComplexInput()));
    DeviceBuffer oa = table.resolve(r.getOutput(), "output", dtypes(type, type.isComplexOutput()));
    Operand input = operand(ia, r.getInput(), "input", type.isComplexInput(), in.extent(inDims, r.getBatch()));
    Operand output = operand(oa, r.getOutput(), "output", type.isComplexOutput(), out.extent(outDims, r.getBatch()));
    require(out.touchesEachElementOnce(outDims, r.getBatch()),
      "ostride, odist and onembed make the output's transforms write some elements twice");
    if (input.overlaps(output)) {
      require(r.getInput().offset() == r.getOutput().offset(),
        "output overlaps input without starting at the same element (in-place transforms share the start)");
      require(inPlaceConsistent(type, in, out, rank), () -> "in place, the output layout must lie over the input's"
        + (type.isComplexInput() == type.isComplexOutput() ? " (same istride/ostride, idist/odist, inembed/onembed)"
        : " (strides equal; the real side's distance and innermost embed twice the complex side's)")
        + ": input " + in + ", output " + out);
    }
    return new FftCall(new FftPlanKey(type, List.copyOf(n), in, out, r.getBatch()), direction, input, output);
  }

  // In place, each output element must take the place of input the transform has already read:
  // complex-to-complex layouts equal; real/complex ones as in the padded layout, strides equal and
  // the real side's distance and innermost storage size twice the complex side's (a complex element
  // covers two reals), other storage sizes equal.
  private static boolean inPlaceConsistent(FftType type, FftLayout in, FftLayout out, int rank) {
    long scaleIn = type.isRealToComplex() ? 1 : 2;
    long scaleOut = type.isComplexToReal() ? 1 : 2;
    if (in.stride() != out.stride() || in.dist() * scaleIn != out.dist() * scaleOut) {
      return false;
    }
    for (int i = 1; i < rank; i++) {
      long inSize = in.embed().get(i);
      long outSize = out.embed().get(i);
      boolean innermost = i == rank - 1;
      if (innermost ? inSize * scaleIn != outSize * scaleOut : inSize != outSize) {
        return false;
      }
    }
    return true;
  }

  private static FftLayout layout(List<Integer> embed, long stride, long dist, int[] dims, String embedField,
                                  String strideField, String distField) {
    List<Integer> sizes = new ArrayList<>(dims.length);
    if (embed == null) {
      for (int d : dims) {
        sizes.add(d);
      }
    } else {
      require(embed.size() == dims.length, () -> embedField + " must have " + dims.length + " sizes, got " + embed.size());
      for (int i = 0; i < dims.length; i++) {
        Integer v = embed.get(i);
        int min = i == 0 ? 1 : dims[i];
        int at = i;
        require(v != null && v >= min, () -> embedField + "[" + at + "] must be >= " + min + ", got " + v);
        sizes.add(v);
      }
    }
    require(stride >= 1, () -> strideField + " must be >= 1, got " + stride);
    long given = dist;
    require(given >= 0, () -> distField + " must be >= 0, got " + given);
    if (dist == 0) {
      long product = stride;
      for (int s : sizes) {
        product = Math.multiplyExact(product, (long) s);
      }
      dist = product;
    }
    return new FftLayout(List.copyOf(sizes), stride, dist);
  }

  private static DType[] dtypes(FftType type, boolean complex) {
    return complex ? new DType[] {type.dtype(), type.complexDtype()} : new DType[] {type.dtype()};
  }

  private static Operand operand(DeviceBuffer a, BufferHandle h, String field, boolean complex, long extent) {
    if (h.dtype().isComplex()) {
      fits(h, field, extent, () -> extent + " complex elements of the layout");
      // The engines count every side in reals: a complex buffer is seen as its interleaved parts.
      BufferHandle parts = new BufferHandle(h.node(), h.device(), h.generation(), h.id(), h.dtype().component(),
        Math.multiplyExact(h.count(), 2L), h.tokenHigh(), h.tokenLow(), Math.multiplyExact(h.offset(), 2L),
        Math.multiplyExact(h.length(), 2L));
      return new Operand(a, parts, Math.multiplyExact(extent, 2L));
    }
    if (complex) {
      require(h.offset() % 2 == 0, () -> field + " must start on a whole complex element (an even offset), got "
        + h.offset());
    }
    long reals = complex ? Math.multiplyExact(extent, 2L) : extent;
    fits(h, field, reals, () -> extent + (complex ? " complex" : " real") + " elements of the layout");
    return new Operand(a, h, reals);
  }
}
