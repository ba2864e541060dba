/*===- ModelABI.h - The C ABI of a compiled Kiln package -----------*- C
 *-*-===//
 *
 * This file declares the C ABI that every compiled package's library
 * (lib<name>.so) exports and that the runtime's loader (kiln::Model) calls.
 * Every symbol is prefixed with the package's name (`kiln compile --name`,
 * default: the model file's stem; the manifest's "symbol_prefix"): a package
 * named tiny_mlp exports tiny_mlp_create, tiny_mlp_run, ..., so any number of
 * packages link into one program. The package's own header (<name>.h)
 * declares them with their names and adds each generated kernel; this header
 * gives the handle type, the ABI version and, for callers that resolve the
 * symbols themselves (dlsym of "<prefix>_<entry>"), the type of each entry
 * point. The generated wrapper implements them; nothing else does. Shapes
 * are static, except in a package compiled for ranges of sizes, whose
 * signature has -1 where a dim follows a size symbol. Dtype codes are
 * kiln::DType's values (0 f32, 1 f16, 2 bf16, 3 f64, 4 i64, 5 i32, 6 i8, 7
 * u8, 8 bool, 9 u16, 10 u32, 11 u64, 12 i16).
 *
 * Lifetime: <prefix>_create binds the weights (pointers the caller keeps
 * alive, in weight order) and returns a handle; <prefix>_run may be called
 * from several threads at once on one handle provided each call passes its
 * own arena of <prefix>_arena_bytes() bytes (64-byte aligned); outputs are
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
 *  CudaServices.h and the descriptors of OneDnn.h a package library uses).
 *  2: kiln_cuda_conv and kiln_cuda_conv_relu take a layout. 3:
 *  kiln::OneDnnConvDesc has `panels` (a cpu package of an older kiln
 *  would pass the runtime a descriptor of another layout; `winograd` was
 *  added under 2, which later packages of 2 have).
 *  Packages of kilns before
 *  per-package names (no "symbol_prefix" in the manifest) export the same
 *  entry points as kiln_model_<entry> from model.so. */
#define KILN_MODEL_ABI_VERSION 3

/** A model handle, opaque (each package defines its own). */
typedef struct kiln_model kiln_model;

/** <prefix>_abi_version: KILN_MODEL_ABI_VERSION of the generated wrapper. */
typedef int (*kiln_model_abi_version_fn)(void);

/** <prefix>_num_inputs, _num_outputs, _num_weights; then, of input,
 *  output and weight i: <prefix>_input_name, _input_dtype (kiln::DType
 *  code), _input_rank and _input_shape (and the same for output_ and
 *  weight_); out-of-range i gives null or -1. */
typedef int (*kiln_model_count_fn)(void);
typedef const char *(*kiln_model_name_fn)(int i);
typedef int (*kiln_model_dtype_fn)(int i);
typedef int (*kiln_model_rank_fn)(int i);
typedef const int64_t *(*kiln_model_shape_fn)(int i);

/** <prefix>_arena_bytes: bytes of scratch memory one run needs. */
typedef size_t (*kiln_model_arena_bytes_fn)(void);

/** <prefix>_create (CPU packages): binds the weights (one pointer per
 *  weight, in order; the caller keeps them alive until <prefix>_destroy)
 *  and returns a model handle. */
typedef int (*kiln_model_create_fn)(const void *const *weights,
                                    kiln_model **out, char *err, size_t errlen);

/** <prefix>_run (CPU packages): one pointer per input and per output
 *  (contiguous, of the declared dtype and shape), and an arena of
 *  <prefix>_arena_bytes(). */
typedef int (*kiln_model_run_fn)(kiln_model *model, const void *const *inputs,
                                 void *const *outputs, void *arena, char *err,
                                 size_t errlen);

/** <prefix>_run_sized (CPU packages compiled for ranges of sizes,
 *  docs/dynamic-shapes.md, whose <prefix>_run refuses to run): like
 *  <prefix>_run, with one size per size symbol (in the order of
 *  <prefix>_size_symbol_name) in `sizes`; inputs and outputs have the
 *  shapes those sizes give (the manifest's "dims"). Sizes outside the
 *  symbols' ranges (<prefix>_size_symbol_min / _max) are an error. */
typedef int (*kiln_model_run_sized_fn)(kiln_model *model, const int64_t *sizes,
                                       const void *const *inputs,
                                       void *const *outputs, void *arena,
                                       char *err, size_t errlen);

/** <prefix>_destroy: releases a handle. */
typedef void (*kiln_model_destroy_fn)(kiln_model *model);

/** <prefix>_target: "cpu" or "cuda". */
typedef const char *(*kiln_model_target_fn)(void);

/** <prefix>_set_threads (CPU packages, optional): the OpenMP threads the
 *  calling thread's runs use from now on (0: OpenMP's default). */
typedef void (*kiln_model_set_threads_fn)(int n);

/*===-- CUDA packages (docs/cuda-backend.md) ------------------------------===*/

/** <prefix>_num_kernels and <prefix>_kernel_name: the kernels of the
 *  package's kernels.cubin, in the order <prefix>_create_cuda binds them
 *  (kiln_cuda_load_kernel gives each its CUfunction). */
typedef int (*kiln_model_num_kernels_fn)(void);
typedef const char *(*kiln_model_kernel_name_fn)(int i);

/** <prefix>_create_cuda: binds the weights (device pointers, in weight
 *  order, kept alive by the caller until <prefix>_destroy) and the kernels
 *  (one CUfunction per kernel, in <prefix>_kernel_name order). */
typedef int (*kiln_model_create_cuda_fn)(const void *const *weights,
                                         void *const *functions,
                                         kiln_model **out, char *err,
                                         size_t errlen);

/** <prefix>_run_cuda: enqueues the whole model on `stream` (a CUstream):
 *  inputs, outputs and the arena are device pointers. Returns without
 *  waiting for the stream, except where an op runs on the host. May be
 *  called from several threads at once with distinct arenas and streams. */
typedef int (*kiln_model_run_cuda_fn)(kiln_model *model,
                                      const void *const *inputs,
                                      void *const *outputs, void *arena,
                                      void *stream, char *err, size_t errlen);

/** <prefix>_run_sized of a CUDA package compiled for ranges of sizes
 *  (whose <prefix>_run_cuda refuses to run): like <prefix>_run_cuda, with
 *  one size per size symbol in `sizes` (as kiln_model_run_sized_fn). */
typedef int (*kiln_model_run_sized_cuda_fn)(kiln_model *model,
                                            const int64_t *sizes,
                                            const void *const *inputs,
                                            void *const *outputs, void *arena,
                                            void *stream, char *err,
                                            size_t errlen);

/*===-- Profiling (docs/runtime-api.md, "Profiling") ---------------------===*/

/** One step of a compiled graph's run, as the wrapper describes it to a
 *  profiler: static data of the package library. */
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

/** <prefix>_set_profiler (optional: packages of older Kilns lack it):
 *  installs `profiler` for the runs that the calling thread makes from now
 *  on (null: none, the default, at the cost of one predictable branch per
 *  step) and returns the one installed before. The hooks struct must outlive
 * its installation. Other threads are not affected. */
typedef const kiln_model_profiler *(*kiln_model_set_profiler_fn)(
    const kiln_model_profiler *profiler);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_MODELABI_H */
