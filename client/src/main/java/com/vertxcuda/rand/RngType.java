package com.vertxcuda.rand;

/**
 * cuRAND's generators. On the cuda backend each is cuRAND's own. On the host backend:
 * PHILOX4_32_10 and XORWOW are the algorithms cuRAND defines (Philox4x32-10 and xorwow with
 * cuRAND's seeding), MRG32K3A is L'Ecuyer's MRG32k3a, MTGP32 is stood in for by MT19937, SOBOL32 is
 * Sobol with Joe-Kuo direction numbers (up to 16 dimensions). None is promised to match cuRAND's
 * host-API output bit for bit: cuRAND orders the output of its parallel streams its own way.
 */
public enum RngType {
  PHILOX4_32_10(false), XORWOW(false), MRG32K3A(false), MTGP32(false), SOBOL32(true);

  private final boolean quasi;

  RngType(boolean quasi) {
    this.quasi = quasi;
  }

  /** Whether the generator is quasi-random (low discrepancy); seeds do not apply to it. */
  public boolean isQuasi() {
    return quasi;
  }
}
