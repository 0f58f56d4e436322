package com.vertxcuda;

/**
 * The CUDA libraries a device can serve, each as its own verticle at its own address.
 */
public enum Library {
  BLAS("blas"), FFT("fft"), RAND("rand"), KERNEL("kernel");

  private final String suffix;

  Library(String suffix) {
    this.suffix = suffix;
  }

  /** The address suffix of this library under its device's address. */
  public String suffix() {
    return suffix;
  }

  /** The library named by {@code name}, case-insensitive (e.g. "blas"). */
  public static Library of(String name) {
    for (Library l : values()) {
      if (l.suffix.equalsIgnoreCase(name) || l.name().equalsIgnoreCase(name)) {
        return l;
      }
    }
    throw new IllegalArgumentException("unknown library: " + name);
  }
}
