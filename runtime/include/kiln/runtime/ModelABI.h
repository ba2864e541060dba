/*===- ModelABI.h - The C ABI of a compiled Kiln model ------------*- C -*-===//
 *
 * This file declares the C ABI that every compiled model (model.so in a Kiln
 * package) exports and that the runtime's loader (kiln::Model) calls. The
 * generated wrapper implements it; nothing else does. All shapes are static
 * (a package is compiled for fixed shapes). Dtype codes are kiln::DType's
 * values (0 f32, 1 f16, 2 bf16, 3 f64, 4 i64, 5 i32, 6 i8, 7 u8, 8 bool).
 *
 * Lifetime: kiln_model_create binds the weights (pointers the caller keeps
 * alive, in weight order) and returns a handle; kiln_model_run may be called
 * from several threads at once on one handle provided each call passes its
 * own arena of kiln_model_arena_bytes() bytes (64-byte aligned); outputs are
 * written to caller-owned buffers of the declared sizes.
 *
 * Errors: functions returning int return 0 on success and nonzero on error,
 * with a message written to `err` (at most `errlen` bytes, NUL-terminated).
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_MODELABI_H
#define KILN_RUNTIME_MODELABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The ABI version implemented by this header (with the services of
 *  CudaServices.h a model.so calls). 2: kiln_cuda_conv and
 *  kiln_cuda_conv_relu take a layout. */
#define KILN_MODEL_ABI_VERSION 2

typedef struct kiln_model kiln_model;

/** Returns KILN_MODEL_ABI_VERSION of the wrapper that was generated. */
int kiln_model_abi_version(void);

/** Signature queries: counts, names, dtypes (kiln::DType codes), ranks and
 *  shapes of the inputs, outputs and weights, in order. */
int kiln_model_num_inputs(void);
int kiln_model_num_outputs(void);
int kiln_model_num_weights(void);
const char *kiln_model_input_name(int i);
const char *kiln_model_output_name(int i);
const char *kiln_model_weight_name(int i);
int kiln_model_input_dtype(int i);
int kiln_model_output_dtype(int i);
int kiln_model_weight_dtype(int i);
int kiln_model_input_rank(int i);
int kiln_model_output_rank(int i);
int kiln_model_weight_rank(int i);
const int64_t *kiln_model_input_shape(int i);
const int64_t *kiln_model_output_shape(int i);
const int64_t *kiln_model_weight_shape(int i);

/** Bytes of scratch memory one run needs (the planned arena). */
size_t kiln_model_arena_bytes(void);

/** Binds the weights (one pointer per weight, in order; the caller keeps
 *  them alive until kiln_model_destroy) and returns a model handle. */
int kiln_model_create(const void *const *weights, kiln_model **out, char *err,
                      size_t errlen);

/** Runs the model: one pointer per input and per output (contiguous, of the
 *  declared dtype and shape), and an arena of kiln_model_arena_bytes(). */
int kiln_model_run(kiln_model *model, const void *const *inputs,
                   void *const *outputs, void *arena, char *err,
                   size_t errlen);

/** Releases a handle from kiln_model_create (or kiln_model_create_cuda). */
void kiln_model_destroy(kiln_model *model);

/*===-- Targets and CUDA packages (docs/cuda-backend.md) -----------------===*/

/** "cpu" or "cuda". Optional: a model.so without it is a CPU package. */
const char *kiln_model_target(void);

/** CUDA packages only (they export these instead of kiln_model_create and
 *  kiln_model_run): the number of kernels in the package's kernels.cubin
 *  and their names, in order; the loader resolves each name to a
 *  CUfunction. */
int kiln_model_num_kernels(void);
const char *kiln_model_kernel_name(int i);

/** Binds the weights (device pointers, in weight order, kept alive by the
 *  caller until kiln_model_destroy) and the kernels (one CUfunction per
 *  kernel, in kiln_model_kernel_name order) and returns a handle. */
int kiln_model_create_cuda(const void *const *weights,
                           void *const *functions, kiln_model **out,
                           char *err, size_t errlen);

/** Enqueues the whole model on `stream` (a CUstream): inputs, outputs and
 *  the arena (kiln_model_arena_bytes() bytes) are device pointers. Returns
 *  without waiting for the stream, except where an op runs on the host. May
 *  be called from several threads at once with distinct arenas and
 *  streams. */
int kiln_model_run_cuda(kiln_model *model, const void *const *inputs,
                        void *const *outputs, void *arena, void *stream,
                        char *err, size_t errlen);

/*===-- Profiling (docs/runtime-api.md, "Profiling") ---------------------===*/

/** One step of a compiled graph's run, as the wrapper describes it to a
 *  profiler: static data of model.so. */
typedef struct kiln_model_step {
  /** The step's number in the lowered graph ("Step N" in wrapper.cpp). */
  int index;
  /** "kernel", "library", "reference" or "copy". */
  const char *kind;
  /** The kernel, the library routine ("runtime.matmul",
   *  "cublaslt.matmul"), the kiln op ("kiln.nonzero") or the copied output
   *  ("output 'y'"). */
  const char *name;
  /** The ONNX nodes it computes, ", "-separated ("" when none). */
  const char *nodes;
} kiln_model_step;

/** Profiler hooks. While installed on a thread, every run entry point
 *  called on that thread calls begin just before each step of the run
 *  (not the load-time steps) and end just after it, on that thread, with
 *  the run's stream (a CUstream; null in a cpu package). A step that fails
 *  gets no end call. The hooks must not call into the model. */
typedef struct kiln_model_profiler {
  void *user;
  void (*begin)(void *user, const kiln_model_step *step, void *stream);
  void (*end)(void *user, const kiln_model_step *step, void *stream);
} kiln_model_profiler;

/** The type of the optional export "<symbol prefix>_set_profiler" (today
 *  "kiln_model_set_profiler"; packages of older Kilns lack it): installs
 *  `profiler` for the runs that the calling thread makes from now on (null:
 *  none, the default, at the cost of one predictable branch per step) and
 *  returns the one installed before. The hooks struct must outlive its
 *  installation. Other threads are not affected. */
typedef const kiln_model_profiler *(*kiln_model_set_profiler_fn)(
    const kiln_model_profiler *profiler);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_MODELABI_H */
