package com.vertxcuda.device.impl;

import com.vertxcuda.device.BackendKind;
import com.vertxcuda.device.DeviceOptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** How many devices a node serving "every visible device" deploys, counted without natives. */
@Tag("runs-once")
class VisibleDevicesTest {

  @Test
  void cudaVisibleDevicesIsReadAsTheDriverReadsIt() {
    assertEquals(2, Backends.gpusVisible("0,1"));
    assertEquals(2, Backends.gpusVisible("GPU-8f3a,GPU-11c2"));
    assertEquals(1, Backends.gpusVisible("1,-1,2"), "the driver stops at the first invalid entry");
    assertEquals(0, Backends.gpusVisible(""), "empty: no GPU");
  }

  @Test
  void theHostBackendSimulatesTheDevicesAskedFor() {
    assertEquals(4, Backends.visibleDevices(new DeviceOptions().setBackend(BackendKind.HOST), 4));
  }
}
