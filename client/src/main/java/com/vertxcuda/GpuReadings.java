package com.vertxcuda;

import io.vertx.codegen.annotations.DataObject;
import io.vertx.codegen.json.annotations.JsonGen;
import io.vertx.core.json.JsonObject;

/**
 * A GPU's own meters as NVIDIA's driver reports them (NVML), read by the node that serves the device
 * off its event loop and carried in {@link DeviceStats#getGpu()}. They cover the whole GPU, every
 * process on it, not only this device's work. A reading the GPU does not support reads -1.
 */
@DataObject
@JsonGen(publicConverter = false)
public class GpuReadings {

  private long readAt;
  private String pciBusId;
  private int utilizationPercent = -1;
  private int memoryUtilizationPercent = -1;
  private long memoryUsedBytes = -1;
  private long memoryTotalBytes = -1;
  private double powerWatts = -1;
  private double energyJoules = -1;
  private int temperatureCelsius = -1;
  private long smClockHz = -1;
  private long memoryClockHz = -1;
  private long throttleReasons = -1;
  private long xidErrors;
  private long lastXid;
  private long eccCorrectedErrors = -1;
  private long eccUncorrectedErrors = -1;

  public GpuReadings() {
  }

  public GpuReadings(GpuReadings other) {
    this(other.toJson());
  }

  public GpuReadings(JsonObject json) {
    this();
    GpuReadingsConverter.fromJson(json, this);
  }

  public JsonObject toJson() {
    JsonObject json = new JsonObject();
    GpuReadingsConverter.toJson(this, json);
    return json;
  }

  /** When these values were read, in ms since the epoch on the serving node's clock. */
  public long getReadAt() { return readAt; }
  public GpuReadings setReadAt(long v) { this.readAt = v; return this; }

  /** The GPU's PCI bus id, e.g. "00000000:3B:00.0", by which the CUDA device was matched to NVML's. */
  public String getPciBusId() { return pciBusId; }
  public GpuReadings setPciBusId(String v) { this.pciBusId = v; return this; }

  /** Percent of the last sample period in which one kernel or more ran on the GPU. */
  public int getUtilizationPercent() { return utilizationPercent; }
  public GpuReadings setUtilizationPercent(int v) { this.utilizationPercent = v; return this; }

  /** Percent of the last sample period in which device memory was read or written. */
  public int getMemoryUtilizationPercent() { return memoryUtilizationPercent; }
  public GpuReadings setMemoryUtilizationPercent(int v) { this.memoryUtilizationPercent = v; return this; }

  /** Device memory in use by every process and the driver, in bytes. */
  public long getMemoryUsedBytes() { return memoryUsedBytes; }
  public GpuReadings setMemoryUsedBytes(long v) { this.memoryUsedBytes = v; return this; }

  /** The GPU's device memory, in bytes. */
  public long getMemoryTotalBytes() { return memoryTotalBytes; }
  public GpuReadings setMemoryTotalBytes(long v) { this.memoryTotalBytes = v; return this; }

  /** The board's power draw, in watts. */
  public double getPowerWatts() { return powerWatts; }
  public GpuReadings setPowerWatts(double v) { this.powerWatts = v; return this; }

  /** Energy the GPU has used since its driver was loaded, in joules. */
  public double getEnergyJoules() { return energyJoules; }
  public GpuReadings setEnergyJoules(double v) { this.energyJoules = v; return this; }

  /** The GPU die's temperature, in degrees Celsius. */
  public int getTemperatureCelsius() { return temperatureCelsius; }
  public GpuReadings setTemperatureCelsius(int v) { this.temperatureCelsius = v; return this; }

  /** The SM clock, in Hz. */
  public long getSmClockHz() { return smClockHz; }
  public GpuReadings setSmClockHz(long v) { this.smClockHz = v; return this; }

  /** The memory clock, in Hz. */
  public long getMemoryClockHz() { return memoryClockHz; }
  public GpuReadings setMemoryClockHz(long v) { this.memoryClockHz = v; return this; }

  /**
   * Why the clocks are held below their maximum, as NVML's bit mask
   * ({@code nvmlClocksThrottleReason*}: 0x1 idle, 0x2 application clocks, 0x4 software power cap,
   * 0x8 hardware slowdown, 0x10 sync boost, 0x20 software thermal, 0x40 hardware thermal, 0x80
   * hardware power brake, 0x100 display clocks); 0 when not held back.
   */
  public long getThrottleReasons() { return throttleReasons; }
  public GpuReadings setThrottleReasons(long v) { this.throttleReasons = v; return this; }

  /** XID (critical driver) errors the GPU reported since the serving node began watching it. */
  public long getXidErrors() { return xidErrors; }
  public GpuReadings setXidErrors(long v) { this.xidErrors = v; return this; }

  /** The last XID error's number (e.g. 79: the GPU fell off the bus), 0 when there was none. */
  public long getLastXid() { return lastXid; }
  public GpuReadings setLastXid(long v) { this.lastXid = v; return this; }

  /** Corrected ECC memory errors since the serving node began watching the GPU (-1: ECC off or unsupported). */
  public long getEccCorrectedErrors() { return eccCorrectedErrors; }
  public GpuReadings setEccCorrectedErrors(long v) { this.eccCorrectedErrors = v; return this; }

  /** Uncorrected ECC memory errors since the serving node began watching the GPU (-1: ECC off or unsupported). */
  public long getEccUncorrectedErrors() { return eccUncorrectedErrors; }
  public GpuReadings setEccUncorrectedErrors(long v) { this.eccUncorrectedErrors = v; return this; }

  /** Whether the GPU reported an XID or an uncorrected ECC error since it was first watched. */
  public boolean errorsSeen() {
    return xidErrors > 0 || eccUncorrectedErrors > 0;
  }

  @Override
  public String toString() {
    return toJson().encode();
  }
}
