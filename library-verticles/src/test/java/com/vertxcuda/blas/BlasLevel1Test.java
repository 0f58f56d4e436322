package com.vertxcuda.blas;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.DType;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Every level-1 routine on F32, F64, C64 and C128 with strided vectors and complex scalars (AXPY,
 * DOT and DOTC, NRM2, SCAL with a complex and a real alpha, ASUM, IAMAX, IAMIN, COPY, SWAP, ROT with a
 * real and a complex sine) against references computed here; and the requests they refuse.
 */
class BlasLevel1Test extends BlasTypesFixture {

  private static final int N = 5;
  private static final int INCX = 2;
  private static final int INCY = 3;

  private BlasRequest vectors(BlasOp op, BufferHandle x, BufferHandle y) {
    return new BlasRequest(op).setN(N).setX(x).setIncx(INCX).setY(y).setIncy(INCY);
  }

  @Test
  void everyRoutineOnEveryType() {
    for (DType t : ALL) {
      boolean cx = t.isComplex();
      double ai = cx ? 0.5 : 0;
      double[] x = general(t, N, 1, 1);
      double[] y = general(t, N, 1, 2);
      String at = t + " ";

      BufferHandle hy = upload(t, storeVector(y, INCY));
      await(blas.execute(vectors(BlasOp.AXPY, upload(t, storeVector(x, INCX)), hy).setAlpha(1.5).setAlphaImag(ai)));
      assertHolds(t, storeVector(axpby(1.5, ai, x, 1, 0, y), INCY), hy, "axpy");

      for (BlasOp dot : cx ? new BlasOp[] {BlasOp.DOT, BlasOp.DOTC} : new BlasOp[] {BlasOp.DOT}) {
        double sr = 0;
        double si = 0;
        for (int i = 0; i < N; i++) {
          double xi = dot == BlasOp.DOTC ? -im(x, i) : im(x, i);
          sr += re(x, i) * re(y, i) - xi * im(y, i);
          si += re(x, i) * im(y, i) + xi * re(y, i);
        }
        BlasReply reply = await(blas.execute(vectors(dot, upload(t, storeVector(x, INCX)),
          upload(t, storeVector(y, INCY)))));
        assertClose(new double[] {sr, si}, new double[] {reply.getValue(), reply.getValueImag()}, tolerance(t),
          at + dot);
      }

      double norm = 0;
      double sum = 0;
      int largest = 0;
      int smallest = 0;
      for (int i = 0; i < N; i++) {
        norm += re(x, i) * re(x, i) + im(x, i) * im(x, i);
        double abs = Math.abs(re(x, i)) + Math.abs(im(x, i));
        sum += abs;
        largest = abs > Math.abs(re(x, largest)) + Math.abs(im(x, largest)) ? i : largest;
        smallest = abs < Math.abs(re(x, smallest)) + Math.abs(im(x, smallest)) ? i : smallest;
      }
      BufferHandle hx = upload(t, storeVector(x, INCX));
      assertClose(new double[] {Math.sqrt(norm)}, new double[] {await(blas.execute(vectors(BlasOp.NRM2, hx, null)))
        .getValue()}, tolerance(t), at + "nrm2");
      assertClose(new double[] {sum}, new double[] {await(blas.execute(vectors(BlasOp.ASUM, hx, null)).map(
        BlasReply::getValue))}, tolerance(t), at + "asum");
      assertEquals(largest + 1, await(blas.execute(vectors(BlasOp.IAMAX, hx, null))).getIndex(), at + "iamax");
      assertEquals(smallest + 1, await(blas.execute(vectors(BlasOp.IAMIN, hx, null))).getIndex(), at + "iamin");

      // A complex alpha, and a real one (CSSCAL / ZDSCAL on complex data).
      for (double alphaImag : cx ? new double[] {ai, 0} : new double[] {0}) {
        BufferHandle scaled = upload(t, storeVector(x, INCX));
        await(blas.execute(vectors(BlasOp.SCAL, scaled, null).setAlpha(-2).setAlphaImag(alphaImag)));
        assertHolds(t, storeVector(axpby(-2, alphaImag, x, 0, 0, null), INCX), scaled, "scal " + alphaImag);
      }

      BufferHandle copied = upload(t, storeVector(y, INCY));
      await(blas.execute(vectors(BlasOp.COPY, hx, copied)));
      assertHolds(t, storeVector(x, INCY), copied, "copy");

      BufferHandle sx = upload(t, storeVector(x, INCX));
      BufferHandle sy = upload(t, storeVector(y, INCY));
      await(blas.execute(vectors(BlasOp.SWAP, sx, sy)));
      assertHolds(t, storeVector(y, INCX), sx, "swap x");
      assertHolds(t, storeVector(x, INCY), sy, "swap y");

      // x = c x + s y, y = c y - conj(s) x: a real sine (CSROT / ZDROT on complex data) and a complex one.
      for (double sineImag : cx ? new double[] {0, -0.25} : new double[] {0}) {
        double c = 0.6;
        double s = 0.8;
        BufferHandle rx = upload(t, storeVector(x, INCX));
        BufferHandle ry = upload(t, storeVector(y, INCY));
        await(blas.execute(vectors(BlasOp.ROT, rx, ry).setCosine(c).setSine(s).setSineImag(sineImag)));
        assertHolds(t, storeVector(axpby(c, 0, x, s, sineImag, y), INCX), rx, "rot x " + sineImag);
        assertHolds(t, storeVector(axpby(c, 0, y, -s, sineImag, x), INCY), ry, "rot y " + sineImag);
      }
    }
  }

  @Test
  void refusalsNameTheProblem() {
    BufferHandle s = upload(DType.F64, general(DType.F64, 8, 1, 1));
    BufferHandle z = upload(DType.C128, general(DType.C128, 8, 1, 2));
    BufferHandle z2 = upload(DType.C128, general(DType.C128, 8, 1, 3));
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.DOTC).setN(4).setX(s).setY(s)), "x has dtype F64");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.DOT).setN(4).setX(z).setY(s)), "y has dtype F64");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.ROT).setN(4).setX(s).setY(s.view(4, 4)).setSineImag(0.5)),
      "sineImag");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SCAL).setN(4).setX(s).setAlphaImag(1)), "alphaImag");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.AXPY).setN(5).setX(z).setIncx(2).setY(z2)), "x holds 8");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.SWAP).setN(4).setX(z).setY(z.view(3, 4))), "y overlaps x");
    assertBadRequest(blas.execute(new BlasRequest(BlasOp.COPY).setN(4).setX(z).setY(z2).setIncy(0)), "incy");
    assertHolds(DType.C128, general(DType.C128, 8, 1, 3), z2, "y after refusals");
  }
}
