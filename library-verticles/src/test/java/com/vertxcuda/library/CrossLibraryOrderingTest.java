package com.vertxcuda.library;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import com.vertxcuda.FailureCode;
import com.vertxcuda.blas.BlasReply;
import com.vertxcuda.blas.BlasRequest;
import com.vertxcuda.blas.Transpose;
import com.vertxcuda.fft.FftDirection;
import com.vertxcuda.fft.FftRequest;
import com.vertxcuda.fft.FftType;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One library's output feeding another's input with no synchronisation by the user: the FFT
 * verticle's stream waits for the BLAS stream's GEMM, and the download waits for the FFT.
 */
class CrossLibraryOrderingTest extends HostDeviceTest {

  private static double[] dft(double[] z) {
    int n = z.length / 2;
    double[] out = new double[z.length];
    for (int k = 0; k < n; k++) {
      for (int j = 0; j < n; j++) {
        double angle = -2 * Math.PI * j * k / n;
        out[2 * k] += z[2 * j] * Math.cos(angle) - z[2 * j + 1] * Math.sin(angle);
        out[2 * k + 1] += z[2 * j] * Math.sin(angle) + z[2 * j + 1] * Math.cos(angle);
      }
    }
    return out;
  }

  /** The first {@code count} elements of A B (both n x n, column-major). */
  private static double[] leading(double[] a, double[] b, int n, int count) {
    double[] c = new double[count];
    for (int e = 0; e < count; e++) {
      int i = e % n;
      int j = e / n;
      for (int p = 0; p < n; p++) {
        c[e] += a[i + p * n] * b[p + j * n];
      }
    }
    return c;
  }

  @Test
  void gemmThenFftThenDownloadWithoutWaiting() {
    // Large enough that the host GEMM takes far longer than a round trip: unordered, the FFT would read zeros.
    int n = 384;
    double[] a = values(n * n, 1);
    double[] b = values(n * n, 2);
    BufferHandle ha = f64(a);
    BufferHandle hb = f64(b);
    BufferHandle hc = await(device.alloc(DType.F64, (long) n * n));
    BufferHandle spectrum = await(device.alloc(DType.F64, 16));

    Future<BufferHandle> product = blas.gemm(Transpose.N, Transpose.N, n, n, n, 1, ha, n, hb, n, 0, hc, n);
    Future<BufferHandle> transformed = fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(8), 1,
      hc.view(0, 16), spectrum);
    Buffer bytes = await(device.download(spectrum));
    double[] got = new double[16];
    for (int i = 0; i < 16; i++) {
      got[i] = bytes.getDoubleLE(i * 8);
    }
    assertClose(dft(leading(a, b, n, 16)), got, 1e-9, "FFT of the GEMM's output");
    await(Future.all(product, transformed));
  }

  @Test
  void composedFuturesAcrossLibraries() {
    int n = 8;
    double[] a = values(n * n, 3);
    double[] b = values(n * n, 4);
    BufferHandle hc = await(device.alloc(DType.F64, n * n));
    BufferHandle spectrum = await(device.alloc(DType.F64, 2 * n));
    BufferHandle ha = f64(a);
    BufferHandle hb = f64(b);
    Buffer bytes = await(blas.execute(new BlasRequest(com.vertxcuda.blas.BlasOp.GEMM).setM(n).setN(n).setK(n)
        .setA(ha).setLda(n).setB(hb).setLdb(n).setC(hc).setLdc(n))
      .map(BlasReply::getOutput)
      .compose(c -> fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(n), 1, c.view(0, 2 * n), spectrum))
      .compose(device::download));
    double[] got = new double[2 * n];
    for (int i = 0; i < got.length; i++) {
      got[i] = bytes.getDoubleLE(i * 8);
    }
    assertClose(dft(leading(a, b, n, 2 * n)), got, 1e-12, "composed");
  }
}
