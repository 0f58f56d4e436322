package com.vertxcuda.observability;

import com.vertxcuda.DeviceClient;
import com.vertxcuda.observability.impl.DeviceHealthProcedure;
import io.vertx.ext.healthchecks.HealthChecks;

/**
 * A vertx-health-check procedure per device, named by the device's address: UP while the device is
 * READY; DOWN while it starts, rebuilds its context, is LOST or stopped, or does not answer. The
 * data holds {@code state}, {@code generation} and, when DOWN, {@code reason}: why the device last
 * changed (the last GENERATION_CHANGED or LOST event's reason) or why it could not be asked. Works
 * from any node: it asks the device through {@link DeviceClient#describe()}.
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
