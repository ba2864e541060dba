/*===- kiln/custom_op.h - The C ABI of custom-operator libraries ----------===*
 *
 * This file declares the C interface between Kiln and a user's library of
 * custom operators (docs/custom-ops.md). A library is a shared object that
 * exports one function, kiln_custom_op_library(), returning a table of ops.
 * Each op names the ONNX (domain, op type) it implements, a shape/type
 * function, a CPU kernel and optionally a CUDA kernel. `kiln compile
 * --custom-ops libmyops.so` (also run, explain, dump) loads it while tracing:
 * a node of that (domain, op type) becomes kiln.custom_call, typed by the
 * shape function, and a compiled graph calls the CPU kernel (a CUDA
 * package: the CUDA kernel when there is one) as one of its steps (no graph
 * break). The package records the library (a copy under
 * custom_ops/) and the runtime loads it when the package is loaded.
 *
 * Plain C, no Kiln or C++ headers: a library needs only this file.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_CUSTOM_OP_H
#define KILN_CUSTOM_OP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of this interface; a library built against another version
 *  is refused when loaded. */
#define KILN_CUSTOM_OP_ABI_VERSION 1

/** The largest rank a custom op's operand or result may have. */
#define KILN_CUSTOM_OP_MAX_RANK 8

/** Element types (the runtime's kiln::DType codes). */
enum KilnCustomDType {
  KILN_DTYPE_F32 = 0,
  KILN_DTYPE_F16 = 1,
  KILN_DTYPE_BF16 = 2,
  KILN_DTYPE_F64 = 3,
  KILN_DTYPE_I64 = 4,
  KILN_DTYPE_I32 = 5,
  KILN_DTYPE_I8 = 6,
  KILN_DTYPE_U8 = 7,
  KILN_DTYPE_BOOL = 8,
  KILN_DTYPE_U16 = 9,
  KILN_DTYPE_U32 = 10,
  KILN_DTYPE_U64 = 11,
  KILN_DTYPE_I16 = 12,
  KILN_DTYPE_F8E4M3FN = 13,   /**< storage only: 1 byte */
  KILN_DTYPE_F8E4M3FNUZ = 14, /**< storage only: 1 byte */
  KILN_DTYPE_F8E5M2 = 15,     /**< storage only: 1 byte */
  KILN_DTYPE_F8E5M2FNUZ = 16, /**< storage only: 1 byte */
  KILN_DTYPE_I4 = 17,         /**< one byte per element */
  KILN_DTYPE_U4 = 18,         /**< one byte per element */
  KILN_DTYPE_I2 = 19,         /**< one byte per element */
  KILN_DTYPE_U2 = 20          /**< one byte per element */
};

/** A tensor's type: element type and static shape. */
typedef struct KilnTensorType {
  int32_t dtype; /**< a KilnCustomDType */
  int32_t rank;  /**< 0 .. KILN_CUSTOM_OP_MAX_RANK */
  int64_t shape[KILN_CUSTOM_OP_MAX_RANK];
} KilnTensorType;

/** A dense, contiguous (row-major) tensor in the memory of the kernel's
 *  device. Inputs are read-only; outputs are allocated by Kiln with the
 *  type the shape function gave. */
typedef struct KilnTensor {
  KilnTensorType type;
  void *data;
} KilnTensor;

/** Kinds of node attributes passed to the op. */
enum KilnAttributeKind {
  KILN_ATTR_INT = 0,    /**< `i` */
  KILN_ATTR_FLOAT = 1,  /**< `f` */
  KILN_ATTR_STRING = 2, /**< `s` (NUL-terminated) */
  KILN_ATTR_INTS = 3,   /**< `count` values at `ints` */
  KILN_ATTR_FLOATS = 4  /**< `count` values at `floats` */
};

/** One attribute of the ONNX node, by its ONNX name. */
typedef struct KilnAttribute {
  const char *name;
  int32_t kind; /**< a KilnAttributeKind */
  int64_t i;
  double f;
  const char *s;
  int64_t count;
  const int64_t *ints;
  const double *floats;
} KilnAttribute;

/** Gives the types of the op's `num_outputs` results from its inputs' types
 *  and the node's attributes. Returns 0 on success; otherwise writes a
 *  NUL-terminated message (at most `error_size` bytes) to `error`. Called
 *  when the model is traced and before each eager run of the op. */
typedef int (*KilnCustomShapeFn)(const KilnTensorType *inputs,
                                 int32_t num_inputs,
                                 const KilnAttribute *attrs, int32_t num_attrs,
                                 KilnTensorType *outputs, int32_t num_outputs,
                                 char *error, size_t error_size);

/** Computes the op on the CPU. Returns 0 on success, else writes `error`. */
typedef int (*KilnCustomCpuKernelFn)(const KilnTensor *inputs,
                                     int32_t num_inputs,
                                     const KilnAttribute *attrs,
                                     int32_t num_attrs, KilnTensor *outputs,
                                     int32_t num_outputs, char *error,
                                     size_t error_size);

/** Computes the op on the GPU (device pointers) on `stream` (a CUstream).
 *  Optional: a CUDA package calls it on its device buffers (without it, the
 *  CPU kernel on the host). It must not allocate or synchronize: a package
 *  run is captured in a CUDA graph. */
typedef int (*KilnCustomCudaKernelFn)(const KilnTensor *inputs,
                                      int32_t num_inputs,
                                      const KilnAttribute *attrs,
                                      int32_t num_attrs, KilnTensor *outputs,
                                      int32_t num_outputs, void *stream,
                                      char *error, size_t error_size);

/** One custom operator. */
typedef struct KilnCustomOp {
  const char *domain;  /**< the ONNX domain, e.g. "com.example" */
  const char *op_type; /**< the ONNX op type, e.g. "Swish" */
  KilnCustomShapeFn infer_types;     /**< required */
  KilnCustomCpuKernelFn cpu_kernel;  /**< required */
  KilnCustomCudaKernelFn cuda_kernel; /**< optional (NULL) */
} KilnCustomOp;

/** What a library exports, through kiln_custom_op_library(). */
typedef struct KilnCustomOpLibrary {
  int32_t abi_version; /**< KILN_CUSTOM_OP_ABI_VERSION */
  int32_t num_ops;
  const KilnCustomOp *ops;
} KilnCustomOpLibrary;

/** The one symbol a library exports (its name: KILN_CUSTOM_OP_ENTRY). */
typedef const KilnCustomOpLibrary *(*KilnCustomOpLibraryFn)(void);
#define KILN_CUSTOM_OP_ENTRY "kiln_custom_op_library"

#ifdef __cplusplus
}
#endif

#endif /* KILN_CUSTOM_OP_H */
