//===- FakeCudaModel.cpp - The model.so of the GPU tests' fake package ----===//
//
// This file implements a hand-written cuda package library, y = x + w (x, w,
// y: f32[1000]) with the kernel k0 of CudaGpuTest.cpp's kAddPtx, built with
// the tests (fake_cuda_model.so next to kiln-runtime-gpu-tests) so that they
// need no host compiler or source tree where they run.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/ModelABI.h"
#include "kiln/runtime/CudaServices.h"
struct kiln_model { const void *w; void *k0; };
static const int64_t kShape[1] = {1000};
extern "C" {
int kiln_model_abi_version(void) { return KILN_MODEL_ABI_VERSION; }
const char *kiln_model_target(void) { return "cuda"; }
int kiln_model_num_inputs(void) { return 1; }
int kiln_model_num_outputs(void) { return 1; }
int kiln_model_num_weights(void) { return 1; }
const char *kiln_model_input_name(int) { return "x"; }
const char *kiln_model_output_name(int) { return "y"; }
const char *kiln_model_weight_name(int) { return "w"; }
int kiln_model_input_dtype(int) { return 0; }
int kiln_model_output_dtype(int) { return 0; }
int kiln_model_weight_dtype(int) { return 0; }
int kiln_model_input_rank(int) { return 1; }
int kiln_model_output_rank(int) { return 1; }
int kiln_model_weight_rank(int) { return 1; }
const int64_t *kiln_model_input_shape(int) { return kShape; }
const int64_t *kiln_model_output_shape(int) { return kShape; }
const int64_t *kiln_model_weight_shape(int) { return kShape; }
size_t kiln_model_arena_bytes(void) { return 4096; }
int kiln_model_num_kernels(void) { return 1; }
const char *kiln_model_kernel_name(int) { return "k0"; }
int kiln_model_create_cuda(const void *const *weights, void *const *functions,
                           kiln_model **out, char *, size_t) {
  *out = new kiln_model{weights[0], functions[0]};
  return 0;
}
int kiln_model_run_cuda(kiln_model *m, const void *const *inputs,
                        void *const *outputs, void *arena, void *stream,
                        char *err, size_t errlen) {
  const void *x = inputs[0];
  const void *w = m->w;
  void *y = outputs[0];
  int n = 1000;
  void *args[] = {&x, &w, &y, &n};
  if (kiln_cuda_memset(arena, 0, 4096, stream, err, errlen))
    return 1;
  return kiln_cuda_launch(m->k0, 8, 1, 1, 128, 1, 1, 0, stream, args, err,
                          errlen);
}
void kiln_model_destroy(kiln_model *m) { delete m; }
}
