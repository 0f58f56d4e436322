package com.vertxcuda.library;

import com.vertxcuda.FailureCode;
import com.vertxcuda.device.host.HostBackend;
import com.vertxcuda.device.spi.BackendException;
import com.vertxcuda.device.spi.DeviceContext;
import com.vertxcuda.library.impl.CudaPointers;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Without the cuda backend's context the cuda engines are refused with UNSUPPORTED, not a crash. */
class CudaPointersTest {

  @Test
  void aHostContextHasNoCudaPointers() throws Exception {
    DeviceContext host = new HostBackend(1 << 20).open(0);
    try {
      BackendException e = assertThrows(BackendException.class, () -> CudaPointers.of(host));
      assertEquals(FailureCode.UNSUPPORTED, e.code());
    } finally {
      host.close(false);
    }
  }
}
