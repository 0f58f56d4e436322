package com.vertxcuda.fft;

import com.vertxcuda.device.TestDevices;
import com.vertxcuda.BufferHandle;
import com.vertxcuda.device.DeviceOptions;
import com.vertxcuda.library.HostDeviceTest;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** FFTs on the host backend against a direct DFT computed here (F32 to 1e-4, F64 to 1e-10, relative to n). */
class FftVerticleTest extends HostDeviceTest {

  @Override
  protected DeviceOptions options() {
    return TestDevices.options()
      .setLibraryOptions(new JsonObject().put("fft", new FftOptions().setPlanCacheSize(2).toJson()));
  }

  /** The unnormalised DFT of interleaved complex {@code z} of sizes {@code n} (slowest first). */
  static double[] dft(double[] z, int[] n, boolean forward) {
    int total = 1;
    for (int s : n) {
      total *= s;
    }
    double[] out = new double[2 * total];
    int[] k = new int[n.length];
    int[] j = new int[n.length];
    for (int kk = 0; kk < total; kk++) {
      unravel(kk, n, k);
      double re = 0;
      double im = 0;
      for (int jj = 0; jj < total; jj++) {
        unravel(jj, n, j);
        double phase = 0;
        for (int d = 0; d < n.length; d++) {
          phase += (double) j[d] * k[d] / n[d];
        }
        double angle = (forward ? -2 : 2) * Math.PI * phase;
        double c = Math.cos(angle);
        double s = Math.sin(angle);
        re += z[2 * jj] * c - z[2 * jj + 1] * s;
        im += z[2 * jj] * s + z[2 * jj + 1] * c;
      }
      out[2 * kk] = re;
      out[2 * kk + 1] = im;
    }
    return out;
  }

  static void unravel(int linear, int[] n, int[] idx) {
    for (int d = n.length - 1; d >= 0; d--) {
      idx[d] = linear % n[d];
      linear /= n[d];
    }
  }

  static double[] complexOf(double[] real) {
    double[] z = new double[2 * real.length];
    for (int i = 0; i < real.length; i++) {
      z[2 * i] = real[i];
    }
    return z;
  }

  /** The R2C half (last dimension n/2+1) of a full spectrum. */
  static double[] half(double[] full, int[] n) {
    int last = n[n.length - 1];
    int h = last / 2 + 1;
    int rows = full.length / 2 / last;
    double[] out = new double[2 * rows * h];
    for (int r = 0; r < rows; r++) {
      System.arraycopy(full, 2 * r * last, out, 2 * r * h, 2 * h);
    }
    return out;
  }

  @Test
  void c2cForwardAndInverse1d() {
    double[] z = widen(floats(values(16, 1)));
    BufferHandle in = f32(floats(z));
    BufferHandle out = f32(new float[16]);
    await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, in, out));
    assertClose(dft(z, new int[] {8}, true), widen(readF32(out)), 1e-4, "C2C forward");
    BufferHandle back = f32(new float[16]);
    await(fft.transform(FftType.C2C, FftDirection.INVERSE, List.of(8), 1, out, back));
    double[] scaled = z.clone();
    for (int i = 0; i < scaled.length; i++) {
      scaled[i] *= 8;
    }
    assertClose(scaled, widen(readF32(back)), 1e-4, "C2C inverse is unnormalised");
  }

  /** A complex buffer (C64, C128) serves a complex side as interleaved pairs would, views included. */
  @Test
  void complexDtypesServeTheComplexSides() {
    double[] z = widen(floats(values(16, 11)));
    BufferHandle in = await(device.alloc(com.vertxcuda.DType.C64, 8).compose(h -> device.upload(h, floats(z))));
    BufferHandle out = await(device.alloc(com.vertxcuda.DType.C64, 8));
    BufferHandle answered = await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, in, out));
    // The handle the transform answers is the caller's own, and downloads as it.
    assertEquals(out, answered, "the output handle comes back as it was given");
    assertClose(dft(z, new int[] {8}, true), widen(await(device.downloadFloats(answered))), 1e-4, "C2C on C64");

    double[] x = widen(floats(values(8, 12)));
    BufferHandle spectrum = await(device.alloc(com.vertxcuda.DType.C64, 5));
    await(fft.transform(FftType.R2C, FftDirection.FORWARD, List.of(8), 1, f32(floats(x)), spectrum));
    assertClose(half(dft(complexOf(x), new int[] {8}, true), new int[] {8}), widen(await(device.downloadFloats(spectrum))),
      1e-4, "R2C into C64");

    double[] w = values(2 * 10, 13);
    BufferHandle zz = await(device.alloc(com.vertxcuda.DType.C128, 10).compose(h -> device.upload(h, w)));
    BufferHandle view = zz.view(3, 4); // an odd complex offset: whole elements, so no pair to split
    await(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(4), 1, view, view));
    double[] expected = w.clone();
    System.arraycopy(dft(java.util.Arrays.copyOfRange(w, 6, 14), new int[] {4}, true), 0, expected, 6, 8);
    assertClose(expected, await(device.downloadDoubles(zz)), 1e-10, "Z2Z in place on a C128 view");

    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, in,
      await(device.alloc(com.vertxcuda.DType.C64, 7))), "output");
    assertBadRequest(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(4), 1, in, zz), "input");
    assertBadRequest(fft.transform(FftType.R2C, FftDirection.FORWARD, List.of(8), 1, in, spectrum), "input");
  }

  @Test
  void realTransforms1dSingle() {
    double[] x = widen(floats(values(8, 2)));
    BufferHandle in = f32(floats(x));
    BufferHandle spectrum = f32(new float[10]);
    await(fft.transform(FftType.R2C, FftDirection.FORWARD, List.of(8), 1, in, spectrum));
    assertClose(half(dft(complexOf(x), new int[] {8}, true), new int[] {8}), widen(readF32(spectrum)), 1e-4, "R2C");
    BufferHandle back = f32(new float[8]);
    await(fft.transform(FftType.C2R, FftDirection.INVERSE, List.of(8), 1, spectrum, back));
    double[] scaled = x.clone();
    for (int i = 0; i < 8; i++) {
      scaled[i] *= 8;
    }
    assertClose(scaled, widen(readF32(back)), 1e-4, "C2R");
  }

  @Test
  void z2z2dAndDoubleRealTransforms3d() {
    int[] n2 = {4, 6};
    double[] z = values(2 * 24, 3);
    BufferHandle out = f64(new double[48]);
    await(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(4, 6), 1, f64(z), out));
    assertClose(dft(z, n2, true), readF64(out), 1e-10, "Z2Z 2D");

    int[] n3 = {2, 3, 4};
    double[] x = values(24, 4);
    BufferHandle spectrum = f64(new double[2 * 2 * 3 * 3]);
    await(fft.transform(FftType.D2Z, FftDirection.FORWARD, List.of(2, 3, 4), 1, f64(x), spectrum));
    double[] expected = half(dft(complexOf(x), n3, true), n3);
    assertClose(expected, readF64(spectrum), 1e-10, "D2Z 3D");
    BufferHandle back = f64(new double[24]);
    await(fft.transform(FftType.Z2D, FftDirection.INVERSE, List.of(2, 3, 4), 1, spectrum, back));
    double[] scaled = x.clone();
    for (int i = 0; i < scaled.length; i++) {
      scaled[i] *= 24;
    }
    assertClose(scaled, readF64(back), 1e-10, "Z2D 3D");
  }

  @Test
  void batchedWithStridesAndDistances() {
    // Three length-4 signals interleaved element by element (istride 3, idist 1), output contiguous.
    int batch = 3;
    double[] interleaved = values(2 * 4 * batch, 5);
    BufferHandle out = f64(new double[2 * 4 * batch]);
    await(fft.execute(new FftRequest().setType(FftType.Z2Z).setN(List.of(4)).setBatch(batch)
      .setInembed(List.of(4)).setIstride(batch).setIdist(1).setInput(f64(interleaved)).setOutput(out)));
    double[] got = readF64(out);
    for (int b = 0; b < batch; b++) {
      double[] signal = new double[8];
      for (int i = 0; i < 4; i++) {
        signal[2 * i] = interleaved[2 * (i * batch + b)];
        signal[2 * i + 1] = interleaved[2 * (i * batch + b) + 1];
      }
      assertClose(dft(signal, new int[] {4}, true), java.util.Arrays.copyOfRange(got, 8 * b, 8 * b + 8), 1e-10,
        "batch " + b);
    }
  }

  @Test
  void inPlaceOnAView() {
    double[] whole = values(20, 6);
    BufferHandle buffer = f64(whole);
    BufferHandle view = buffer.view(4, 8);
    await(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(4), 1, view, view));
    double[] expected = whole.clone();
    System.arraycopy(dft(java.util.Arrays.copyOfRange(whole, 4, 12), new int[] {4}, true), 0, expected, 4, 8);
    assertClose(expected, readF64(buffer), 1e-10, "in place on a view");
  }

  @Test
  void sizeOneDimensionsAreTransformsOfTheOthers() {
    double[] z = values(8, 7);
    BufferHandle out = f64(new double[8]);
    await(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(1, 4), 1, f64(z), out));
    assertClose(dft(z, new int[] {4}, true), readF64(out), 1e-10, "n = [1, 4]");
    await(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(2, 2, 1), 1, f64(z), out));
    assertClose(dft(z, new int[] {2, 2}, true), readF64(out), 1e-10, "n = [2, 2, 1]");
    await(fft.transform(FftType.Z2Z, FftDirection.INVERSE, List.of(1), 1, f64(z), out));
    assertClose(java.util.Arrays.copyOf(z, 2), java.util.Arrays.copyOf(readF64(out), 2), 0, "n = [1]");
  }

  @Test
  void inPlaceRealTransformsUseThePaddedLayout() {
    // R2C in place: each row of 8 reals padded to 10, so the 5 complex outputs lie over it.
    int[] n = {8};
    double[] x = values(16, 8);
    double[] padded = new double[20];
    System.arraycopy(x, 0, padded, 0, 8);
    System.arraycopy(x, 8, padded, 10, 8);
    BufferHandle buffer = f64(padded);
    await(fft.execute(new FftRequest().setType(FftType.D2Z).setN(List.of(8)).setBatch(2).setInembed(List.of(10))
      .setInput(buffer).setOutput(buffer)));
    double[] got = readF64(buffer);
    for (int b = 0; b < 2; b++) {
      double[] expected = half(dft(complexOf(java.util.Arrays.copyOfRange(x, 8 * b, 8 * b + 8)), n, true), n);
      assertClose(expected, java.util.Arrays.copyOfRange(got, 10 * b, 10 * b + 10), 1e-10, "in-place D2Z batch " + b);
    }
    // Unpadded, the second batch's output would land on input the transform has not read yet.
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.D2Z).setN(List.of(8)).setBatch(2)
      .setInput(buffer).setOutput(buffer)), "in place, the output layout must lie over the input's");
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.Z2Z).setN(List.of(4)).setOstride(2)
      .setInput(buffer).setOutput(buffer)), "in place, the output layout must lie over the input's");
  }

  @Test
  void anOutputLayoutThatWritesAnElementTwiceIsRefused() {
    BufferHandle in = f32(new float[16]);
    BufferHandle out = f32(new float[16]);
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(4)).setBatch(2).setOdist(1)
      .setInput(in).setOutput(out)), "write some elements twice");
    // Interleaved batches (stride = batch, distance 1) write each element once.
    await(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(4)).setBatch(2).setOstride(2).setOdist(1)
      .setInput(in).setOutput(out)));
  }

  @Test
  void plansAreCachedLeastRecentlyUsedFirst() {
    BufferHandle in = f32(new float[32]);
    BufferHandle out = f32(new float[32]);
    FftRequest a = new FftRequest().setType(FftType.C2C).setN(List.of(16)).setInput(in).setOutput(out);
    FftRequest b = new FftRequest().setType(FftType.C2C).setN(List.of(8)).setInput(in).setOutput(out);
    FftRequest c = new FftRequest().setType(FftType.C2C).setN(List.of(4)).setInput(in).setOutput(out);
    assertFalse(await(fft.execute(a)).isPlanReused(), "first use makes a plan");
    assertTrue(await(fft.execute(a)).isPlanReused(), "second use reuses it");
    assertFalse(await(fft.execute(b)).isPlanReused());
    assertFalse(await(fft.execute(c)).isPlanReused(), "a third plan evicts the least recently used (a)");
    assertTrue(await(fft.execute(b)).isPlanReused());
    assertFalse(await(fft.execute(a)).isPlanReused(), "a was evicted");
  }

  /**
   * Sizes beyond what the wire format carries (17): BAD_REQUEST in both isolation modes (in
   * process isolation the device host cannot read the request and says so), and the device serves on.
   */
  @Test
  void aRequestTooLongForTheWireFailsAloneAndTheDeviceServesOn() {
    BufferHandle in = f32(new float[16]);
    List<Integer> seventeen = java.util.Collections.nCopies(17, 1);
    com.vertxcuda.CudaException e = failure(fft.execute(new FftRequest().setType(FftType.C2C)
      .setDirection(FftDirection.FORWARD).setN(seventeen).setInput(in).setOutput(in)));
    org.junit.jupiter.api.Assertions.assertEquals(com.vertxcuda.FailureCode.BAD_REQUEST, e.code(), e.getMessage());
    assertTrue(await(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, in, in)) != null);
  }

  @Test
  void badRequestsNameTheField() {
    BufferHandle in = f32(new float[16]);
    BufferHandle out = f32(new float[16]);
    BufferHandle d = f64(new double[16]);
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(), 1, in, out), "n must have");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(1, 2, 3, 4), 1, in, out), "n must have");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(0), 1, in, out), "n[0]");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 0, in, out), "batch");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(8), 1, d, out), "input has dtype F64");
    assertBadRequest(fft.transform(FftType.Z2Z, FftDirection.FORWARD, List.of(8), 1, d, out), "output has dtype F32");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(16), 1, in, out), "input holds 16");
    assertBadRequest(fft.transform(FftType.R2C, FftDirection.FORWARD, List.of(16), 1, in, out), "output holds 16");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(4), 1, in.view(1, 8), out), "even offset");
    assertBadRequest(fft.transform(FftType.C2C, FftDirection.FORWARD, List.of(4), 1, in.view(0, 8), in.view(2, 8)),
      "output overlaps input");
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(4)).setInembed(List.of(4, 4))
      .setInput(in).setOutput(out)), "inembed must have 1");
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(2, 4)).setOnembed(List.of(2, 3))
      .setInput(in).setOutput(out)), "onembed[1]");
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(4)).setIstride(0)
      .setInput(in).setOutput(out)), "istride");
    assertBadRequest(fft.execute(new FftRequest().setN(List.of(4)).setInput(in).setOutput(out)), "type is missing");
    assertBadRequest(fft.execute(new FftRequest().setType(FftType.C2C).setN(List.of(4)).setBatch(3)
      .setIdist(Long.MAX_VALUE / 2).setInput(in).setOutput(out)), "overflows");
  }
}
