package com.vertxcuda.kernel;

/** How a kernel uses a buffer argument; it decides how the launch is ordered against other work. */
public enum Access {
  /** The kernel only reads it. */
  READ,
  /** The kernel only writes it. */
  WRITE,
  /** The kernel reads and writes it. */
  READ_WRITE
}
