package com.vertxcuda.library.impl;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;

import java.util.function.Supplier;

/**
 * Shape checks shared by the library verticles. Every failure is BAD_REQUEST and names the field.
 * Handles themselves are validated by the allocation table; these check what a call touches.
 */
public final class RequestChecks {

  private RequestChecks() {
  }

  public static CudaException bad(String message) {
    return new CudaException(FailureCode.BAD_REQUEST, message);
  }

  public static void require(boolean ok, String message) {
    if (!ok) {
      throw bad(message);
    }
  }

  /** As {@link #require(boolean, String)}, building the message only on failure (checks run per request). */
  public static void require(boolean ok, Supplier<String> message) {
    if (!ok) {
      throw bad(message.get());
    }
  }

  public static int nonNegative(int v, String field) {
    require(v >= 0, () -> field + " must be >= 0, got " + v);
    return v;
  }

  public static int positive(int v, String field) {
    require(v >= 1, () -> field + " must be >= 1, got " + v);
    return v;
  }

  /** Elements from the first touched by {@code n} elements spaced {@code inc} apart. */
  public static long vectorExtent(long n, long inc) {
    return n == 0 ? 0 : Math.addExact(Math.multiplyExact(n - 1, inc), 1);
  }

  /** Elements from the first touched by a column-major {@code rows x cols} matrix with leading dimension {@code ld}. */
  public static long matrixExtent(long rows, long cols, long ld) {
    return rows == 0 || cols == 0 ? 0 : Math.addExact(Math.multiplyExact(cols - 1, ld), rows);
  }

  /** Checks a vector argument and returns the elements it touches. */
  public static long vector(BufferHandle h, String field, int n, int inc, String incField) {
    require(inc >= 1, () -> incField + " must be >= 1, got " + inc);
    return fits(h, field, vectorExtent(n, inc), () -> n + " elements with " + incField + " " + inc);
  }

  /** Checks a matrix argument (rows x cols as stored) and returns the elements it touches. */
  public static long matrix(BufferHandle h, String field, int rows, int cols, int ld, String ldField) {
    require(ld >= Math.max(1, rows), () -> ldField + " must be >= max(1, " + rows + "), got " + ld);
    return fits(h, field, matrixExtent(rows, cols, ld), () -> rows + "x" + cols + " with " + ldField + " " + ld);
  }

  /** Checks {@code batch} matrices {@code stride} elements apart and returns the elements they touch. */
  public static long stridedMatrices(BufferHandle h, String field, int rows, int cols, int ld, String ldField,
                                     long stride, String strideField, int batch) {
    require(ld >= Math.max(1, rows), () -> ldField + " must be >= max(1, " + rows + "), got " + ld);
    require(stride >= 0, () -> strideField + " must be >= 0, got " + stride);
    long one = matrixExtent(rows, cols, ld);
    long extent = batch == 0 || one == 0 ? 0 : Math.addExact(Math.multiplyExact(batch - 1L, stride), one);
    return fits(h, field, extent, () -> batch + " matrices of " + rows + "x" + cols + " with " + ldField + " " + ld
      + " and " + strideField + " " + stride);
  }

  /** Fails unless {@code extent} elements fit in the handle's range. */
  public static long fits(BufferHandle h, String field, long extent, Supplier<String> what) {
    require(extent <= h.length(), () -> field + " holds " + h.length() + " elements but " + what.get()
      + " needs " + extent);
    return extent;
  }

  public static void noOverlap(Operand written, String writtenField, Operand read, String readField) {
    require(!written.overlaps(read), () -> writtenField + " overlaps " + readField);
  }
}
