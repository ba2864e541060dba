/*===- myops.c - An example custom-op library (kiln/custom_op.h) ----------===*
 *
 * This file implements two custom operators of domain com.example for
 * Kiln's custom-op ABI (docs/custom-ops.md):
 *   - Swish(x; beta: float = 1.0) = x * sigmoid(beta * x), f32, any shape;
 *   - RowL2Norm(x) = the L2 norm of each row of a f32 [rows, cols] matrix,
 *     shape [rows].
 * Build: cc -shared -fPIC -O2 -I<kiln>/runtime/include myops.c -o libmyops.so -lm
 * With -DKILN_MYOPS_CUDA and myops_cuda.cu (built by nvcc, see there) the
 * ops also have CUDA kernels, which CUDA packages call on the device.
 *
 *===----------------------------------------------------------------------===*/

#include "kiln/custom_op.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int64_t numel(const KilnTensorType *t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t->rank; ++i)
    n *= t->shape[i];
  return n;
}

static double float_attr(const KilnAttribute *attrs, int32_t n,
                         const char *name, double dflt) {
  for (int32_t i = 0; i < n; ++i)
    if (!strcmp(attrs[i].name, name) && attrs[i].kind == KILN_ATTR_FLOAT)
      return attrs[i].f;
  return dflt;
}

static int swish_types(const KilnTensorType *in, int32_t nin,
                       const KilnAttribute *attrs, int32_t nattrs,
                       KilnTensorType *out, int32_t nout, char *err,
                       size_t errlen) {
  (void)attrs, (void)nattrs;
  if (nin != 1 || nout != 1 || in[0].dtype != KILN_DTYPE_F32) {
    snprintf(err, errlen, "Swish takes one f32 tensor and gives one");
    return 1;
  }
  out[0] = in[0];
  return 0;
}

static int swish_cpu(const KilnTensor *in, int32_t nin,
                     const KilnAttribute *attrs, int32_t nattrs,
                     KilnTensor *out, int32_t nout, char *err, size_t errlen) {
  (void)nin, (void)nout, (void)err, (void)errlen;
  float beta = (float)float_attr(attrs, nattrs, "beta", 1.0);
  const float *x = (const float *)in[0].data;
  float *y = (float *)out[0].data;
  for (int64_t i = 0, n = numel(&in[0].type); i < n; ++i)
    y[i] = x[i] / (1.0f + expf(-beta * x[i]));
  return 0;
}

static int rownorm_types(const KilnTensorType *in, int32_t nin,
                         const KilnAttribute *attrs, int32_t nattrs,
                         KilnTensorType *out, int32_t nout, char *err,
                         size_t errlen) {
  (void)attrs, (void)nattrs;
  if (nin != 1 || nout != 1 || in[0].dtype != KILN_DTYPE_F32 ||
      in[0].rank != 2) {
    snprintf(err, errlen, "RowL2Norm takes one f32 matrix [rows, cols]");
    return 1;
  }
  out[0].dtype = KILN_DTYPE_F32;
  out[0].rank = 1;
  out[0].shape[0] = in[0].shape[0];
  return 0;
}

static int rownorm_cpu(const KilnTensor *in, int32_t nin,
                       const KilnAttribute *attrs, int32_t nattrs,
                       KilnTensor *out, int32_t nout, char *err,
                       size_t errlen) {
  (void)nin, (void)attrs, (void)nattrs, (void)nout, (void)err, (void)errlen;
  int64_t rows = in[0].type.shape[0], cols = in[0].type.shape[1];
  const float *x = (const float *)in[0].data;
  float *y = (float *)out[0].data;
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for (int64_t c = 0; c < cols; ++c)
      s += (double)x[r * cols + c] * x[r * cols + c];
    y[r] = (float)sqrt(s);
  }
  return 0;
}

#ifdef KILN_MYOPS_CUDA
/* myops_cuda.cu */
int kiln_example_swish_cuda(const KilnTensor *, int32_t, const KilnAttribute *,
                            int32_t, KilnTensor *, int32_t, void *, char *,
                            size_t);
int kiln_example_rownorm_cuda(const KilnTensor *, int32_t,
                              const KilnAttribute *, int32_t, KilnTensor *,
                              int32_t, void *, char *, size_t);
#define SWISH_CUDA kiln_example_swish_cuda
#define ROWNORM_CUDA kiln_example_rownorm_cuda
#else
#define SWISH_CUDA NULL
#define ROWNORM_CUDA NULL
#endif

static const KilnCustomOp kOps[] = {
    {"com.example", "Swish", swish_types, swish_cpu, SWISH_CUDA},
    {"com.example", "RowL2Norm", rownorm_types, rownorm_cpu, ROWNORM_CUDA},
};

static const KilnCustomOpLibrary kLibrary = {KILN_CUSTOM_OP_ABI_VERSION, 2,
                                             kOps};

__attribute__((visibility("default"))) const KilnCustomOpLibrary *
kiln_custom_op_library(void) {
  return &kLibrary;
}
