// Built-in elementwise kernels of the vertx-cuda kernel verticle. The PTX next to this file is
// generated from it by regenerate-ptx.sh (nvcc -ptx); both are committed, so builds need no nvcc.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define GRID_STRIDE(i, n) \
  for (unsigned long long i = blockIdx.x * (unsigned long long) blockDim.x + threadIdx.x; i < (n); \
       i += (unsigned long long) blockDim.x * gridDim.x)

extern "C" {

__global__ void vc_fill_f32(float* y, float v, unsigned long long n) { GRID_STRIDE(i, n) y[i] = v; }
__global__ void vc_fill_f64(double* y, double v, unsigned long long n) { GRID_STRIDE(i, n) y[i] = v; }

__global__ void vc_scale_f32(const float* x, float* y, float a, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a * x[i]; }
__global__ void vc_scale_f64(const double* x, double* y, double a, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a * x[i]; }

__global__ void vc_add_f32(const float* a, const float* b, float* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a[i] + b[i]; }
__global__ void vc_add_f64(const double* a, const double* b, double* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a[i] + b[i]; }

__global__ void vc_mul_f32(const float* a, const float* b, float* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a[i] * b[i]; }
__global__ void vc_mul_f64(const double* a, const double* b, double* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = a[i] * b[i]; }
// Complex products of interleaved (real, imaginary) pairs; y may be a or b (each pair is read before it is written).
__global__ void vc_mul_c64(const float2* a, const float2* b, float2* y, unsigned long long n) {
  GRID_STRIDE(i, n) { float2 p = a[i], q = b[i]; y[i] = make_float2(p.x * q.x - p.y * q.y, p.x * q.y + p.y * q.x); }
}
__global__ void vc_mul_c128(const double2* a, const double2* b, double2* y, unsigned long long n) {
  GRID_STRIDE(i, n) { double2 p = a[i], q = b[i]; y[i] = make_double2(p.x * q.x - p.y * q.y, p.x * q.y + p.y * q.x); }
}

__global__ void vc_f32_to_f16(const float* x, __half* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __float2half_rn(x[i]); }
__global__ void vc_f16_to_f32(const __half* x, float* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __half2float(x[i]); }
__global__ void vc_f32_to_bf16(const float* x, __nv_bfloat16* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(x[i]); }
__global__ void vc_bf16_to_f32(const __nv_bfloat16* x, float* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __bfloat162float(x[i]); }
__global__ void vc_f16_to_bf16(const __half* x, __nv_bfloat16* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __float2bfloat16_rn(__half2float(x[i])); }
__global__ void vc_bf16_to_f16(const __nv_bfloat16* x, __half* y, unsigned long long n) { GRID_STRIDE(i, n) y[i] = __float2half_rn(__bfloat162float(x[i])); }

}
