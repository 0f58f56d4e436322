#!/usr/bin/env bash
# Regenerates the built-in kernels' PTX from elementwise.cu. The PTX is committed, so builds need
# no nvcc. PTX ISA 7.0 is declared so that drivers of CUDA 11 and later JIT it (the kernels use
# nothing newer); the target is sm_80 (bf16 conversion instructions).
set -euo pipefail
cd "$(dirname "$0")"
out=../resources/com/vertxcuda/library/kernel/elementwise.ptx
nvcc -ptx -arch=compute_80 -o "$out" elementwise.cu
sed -i 's/^\.version .*/.version 7.0/' "$out"
echo "wrote $out"
