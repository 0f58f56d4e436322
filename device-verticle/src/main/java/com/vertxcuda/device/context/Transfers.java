package com.vertxcuda.device.context;

import com.vertxcuda.BufferHandle;
import com.vertxcuda.CudaException;
import com.vertxcuda.FailureCode;

/** The rules for host↔device transfers, in one place (the context and the device-host link use them). */
public final class Transfers {

  /** The most bytes one download moves (a Vert.x Buffer holds at most 2 GiB). */
  public static final long MAX_DOWNLOAD = Integer.MAX_VALUE;

  /** Why a recorded step cannot name a buffer: it is not lent memory the device may copy where it lies. */
  public static final String NOT_A_TRANSFER_BUFFER = "the buffer is not a transfer buffer of this device as "
    + "DeviceVerticle.allocateTransferBuffer lent it (not a slice, not released)";

  private Transfers() {
  }

  /**
   * Checks that a transfer's view is one a buffer can have: offset and length not negative, inside
   * the handle's count, and all of it addressable in bytes without overflow. These are the
   * handle's own claims; the context checks them against the buffer ({@code AllocationTable}).
   */
  public static void checkView(BufferHandle h) {
    if (h == null) {
      return;
    }
    if (h.offset() < 0 || h.length() < 0 || h.count() < 0 || h.offset() > h.count()
      || h.length() > h.count() - h.offset()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the handle's view [" + h.offset() + ", +" + h.length()
        + ") is not inside its count of " + h.count() + " elements");
    }
    if (h.count() > Long.MAX_VALUE / h.dtype().size()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "the handle's count of " + h.count() + " " + h.dtype()
        + " elements overflows in bytes");
    }
  }

  /** Checks that an upload of {@code bytes} bytes fits its target exactly. */
  public static void checkUpload(BufferHandle target, long bytes) {
    checkView(target);
    if (target != null && bytes != target.byteLength()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "data has " + bytes + " bytes; the target needs "
        + target.byteLength());
    }
  }

  /** Checks that host memory of {@code bytes} bytes matches a download's source exactly. */
  public static void checkDownload(BufferHandle source, long bytes) {
    checkView(source);
    if (source != null && source.byteLength() > MAX_DOWNLOAD) {
      throw new CudaException(FailureCode.BAD_REQUEST, "a download is at most 2 GiB; take a view");
    }
    if (source != null && bytes != source.byteLength()) {
      throw new CudaException(FailureCode.BAD_REQUEST, "host memory has " + bytes + " bytes; the source has "
        + source.byteLength());
    }
  }
}
