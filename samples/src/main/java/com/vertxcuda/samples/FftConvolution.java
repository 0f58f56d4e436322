package com.vertxcuda.samples;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.DeviceClient;
import com.vertxcuda.DeviceScope;
import com.vertxcuda.Library;
import com.vertxcuda.PipelineHandle;
import com.vertxcuda.fft.FftClient;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import com.vertxcuda.kernel.KernelOp;
import com.vertxcuda.kernel.KernelRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;

import java.util.List;

/**
 * Linear convolution of signals with one filter through the FFT, as a recorded pipeline: the
 * filter's spectrum is computed once, and each {@link #convolve} uploads the zero-padded signal,
 * replays forward FFT (R2C) → pointwise complex product with the filter's spectrum (the built-in
 * MULTIPLY kernel) → inverse FFT (C2R) → scale by 1/n, and downloads the result. The device checks
 * and prepares the four steps once (on cuda it captures them as one CUDA graph), so a convolution
 * is three requests: upload, replay, download.
 *
 * <p>Requests sent from one context keep their order, so the three are sent back to back. The
 * pipeline's buffers are shared: call {@link #convolve} from one context (or thread) at a time, or
 * wait for each result before the next. {@link #close} frees everything.
 */
public final class FftConvolution {

  private final DeviceClient device;
  private final DeviceScope scope;
  private final int taps;
  private final int maxSignal;
  private final int n;
  private final BufferHandle signal;
  private final BufferHandle result;
  private final PipelineHandle pipeline;

  private FftConvolution(DeviceClient device, DeviceScope scope, int taps, int maxSignal, BufferHandle signal,
                         BufferHandle result, PipelineHandle pipeline) {
    this.device = device;
    this.scope = scope;
    this.taps = taps;
    this.maxSignal = maxSignal;
    this.n = maxSignal + taps - 1;
    this.signal = signal;
    this.result = result;
    this.pipeline = pipeline;
  }

  /**
   * Prepares convolutions with {@code filter} of signals of at most {@code maxSignal} values on
   * {@code device}: uploads the filter, transforms it, and records the pipeline.
   */
  public static Future<FftConvolution> create(Vertx vertx, DeviceClient device, float[] filter, int maxSignal) {
    if (filter.length == 0 || maxSignal < 1) {
      return Future.failedFuture(new IllegalArgumentException("a filter of at least one tap and signals of at least one value"));
    }
    int n = maxSignal + filter.length - 1;
    int bins = n / 2 + 1;
    FftClient fft = FftClient.create(vertx);
    DeviceScope scope = device.scope();
    Future<FftConvolution> made = Future.all(List.of(scope.alloc(DType.F32, n), scope.alloc(DType.F32, n),
      scope.alloc(DType.C64, bins), scope.alloc(DType.C64, bins))).compose(all -> {
        BufferHandle signal = all.resultAt(0);
        BufferHandle result = all.resultAt(1);
        BufferHandle spectrum = all.resultAt(2);
        BufferHandle filterSpectrum = all.resultAt(3);
        float[] padded = new float[n];
        System.arraycopy(filter, 0, padded, 0, filter.length);
        // The filter's spectrum, once, through the signal buffer.
        return device.upload(signal, padded)
          .compose(v -> fft.execute(r2c(n, signal, filterSpectrum)))
          .compose(v -> device.record()
            .step(Library.FFT, r2c(n, signal, spectrum))
            .step(Library.KERNEL, new KernelRequest(KernelOp.MULTIPLY).setX(spectrum).setY(filterSpectrum)
              .setOutput(spectrum))
            .step(Library.FFT, new FftRequest().setType(FftType.C2R).setN(List.of(n)).setInput(spectrum)
              .setOutput(result))
            // cuFFT's inverse is unnormalised: n times the convolution.
            .step(Library.KERNEL, new KernelRequest(KernelOp.SCALE).setX(result).setScalar(1.0 / n).setOutput(result))
            .build())
          .map(p -> new FftConvolution(device, scope, filter.length, maxSignal, signal, result, p));
      });
    return made.recover(e -> scope.close().transform(closed -> Future.failedFuture(e)));
  }

  private static FftRequest r2c(int n, BufferHandle in, BufferHandle out) {
    return new FftRequest().setType(FftType.R2C).setDirection(FftDirection.FORWARD).setN(List.of(n)).setInput(in)
      .setOutput(out);
  }

  /** The linear convolution of {@code values} (at most {@code maxSignal} of them) with the filter. */
  public Future<float[]> convolve(float[] values) {
    if (values.length == 0 || values.length > maxSignal) {
      return Future.failedFuture(new IllegalArgumentException("signals of 1 to " + maxSignal + " values, not "
        + values.length));
    }
    float[] padded = new float[n];
    System.arraycopy(values, 0, padded, 0, values.length);
    Future<BufferHandle> uploaded = device.upload(signal, padded);
    Future<Void> replayed = device.replay(pipeline);
    Future<float[]> downloaded = device.downloadFloats(result.view(0, values.length + taps - 1));
    return Future.all(uploaded, replayed, downloaded).map(all -> downloaded.result());
  }

  /** Releases the pipeline and frees the buffers. */
  public Future<Void> close() {
    return device.release(pipeline).eventually(scope::close);
  }
}
