package com.vertxcuda.observability;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.observability.impl.DeviceHealthProcedure;
import io.vertx.ext.healthchecks.HealthChecks;

/**
 * A vertx-health-check procedure per device, named by the device's address: UP while the device is
 * READY; DOWN while it starts, rebuilds its context, is LOST or stopped, or does not answer. The
 * data holds {@code state}, {@code generation} and, when DOWN, {@code reason}: why the device last
 * changed (the last GENERATION_CHANGED or LOST event's reason) or why it could not be asked. Works
 * from any node: it asks the device through {@link DeviceClient#describe()}. Where the serving node
 * reads the GPU's own meters (NVML), a READY device's data also holds {@code health}: DEGRADED once the
 * GPU reported an XID or an uncorrected ECC error since it was first watched (with {@code xidErrors},
 * {@code lastXid}, {@code eccUncorrectedErrors} and a {@code reason}), HEALTHY otherwise. A DEGRADED
 * device is still UP, since it still serves: alert on {@code health} or on the
 * {@code vertxcuda.gpu.xid.errors} counter.
 */
public interface DeviceHealth {

  /** Registers {@code client}'s device in {@code checks}. */
  static DeviceHealth register(HealthChecks checks, DeviceClient client) {
    DeviceHealthProcedure procedure = new DeviceHealthProcedure(client);
    checks.register(procedure.name(), procedure);
    return new DeviceHealth() {
      @Override
      public String name() {
        return procedure.name();
      }

      @Override
      public void unregister() {
        checks.unregister(procedure.name());
        procedure.close();
      }
    };
  }

  /** The procedure's name in the health checks: the device's address. */
  String name();

  /** Removes the procedure and stops listening to the device's events. */
  void unregister();
}
