package com.vertxcuda.bench;

/** How many runs of a point go untimed ({@code warmup}, first) and how many are timed. */
record Plan(int warmup, int runs) {

  int total() {
    return warmup + runs;
  }
}
