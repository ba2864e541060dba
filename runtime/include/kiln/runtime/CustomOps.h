//===- CustomOps.h - Custom-operator libraries (kiln/custom_op.h) -*- C++ -*-===//
//
// This file declares the process-wide registry of custom-operator libraries:
// loading a library (dlopen, its kiln_custom_op_library() table checked),
// finding an op by (domain, op type), and calling its shape function. The
// reference kernel of kiln.custom_call (runtime/kernels/CustomCall.cpp)
// runs the op's CPU kernel through it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_CUSTOMOPS_H
#define KILN_RUNTIME_CUSTOMOPS_H

#include "kiln/custom_op.h"
#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <string>
#include <vector>

namespace kiln {

/// A custom op found in a loaded library.
struct CustomOpEntry {
  const KilnCustomOp *op = nullptr;
  /// The library's path as it was loaded.
  std::string library;
};

/// Loads the custom-op library at `path` (once per resolved path; later
/// loads of the same file succeed without reloading). Errors name the file
/// and what is wrong (not found, no kiln_custom_op_library, another ABI
/// version, an op without a shape function or CPU kernel, an op that
/// another library already provides).
Status loadCustomOpLibrary(const std::string &path);

/// The op registered for (`domain`, `opType`); `op` is null when none.
/// `domain` is "ai.onnx" for ONNX's default domain.
CustomOpEntry findCustomOp(const std::string &domain,
                           const std::string &opType);

/// The node attributes of a kiln.custom_call (its attributes named
/// "attr.<ONNX name>") in the C ABI's form; the strings and arrays point
/// into `attrs`, which must outlive the result.
std::vector<KilnAttribute> customOpAttributes(const Attributes &attrs);

/// The types of `numOutputs` results of `entry`'s op for inputs of `inputs`
/// types, from its shape function. `where` prefixes errors.
Expected<std::vector<KilnTensorType>>
inferCustomOpTypes(const CustomOpEntry &entry,
                   const std::vector<KilnTensorType> &inputs,
                   const std::vector<KilnAttribute> &attrs, int numOutputs,
                   const std::string &where);

/// A buffer in device memory handed to a custom op's CUDA kernel.
struct CustomOpDeviceArg {
  void *data = nullptr;
  DType dtype = DType::F32;
  Shape shape;
};

/// Runs the CUDA kernel of the custom op that the kiln.custom_call's
/// attributes `attrs` name ("domain", "op_type", "attr.<name>") on device
/// buffers, enqueued on `stream` (a CUstream): the step of a CUDA package
/// whose compiler marked it `kiln.reference = "device"`. The results'
/// buffers are the package's (planned for the types traced); the op's shape
/// function must give those types for these inputs. Errors name the op and
/// the library (not loaded, no CUDA kernel, another type, a failed kernel).
Status runCustomOpOnDevice(const Attributes &attrs,
                           const std::vector<CustomOpDeviceArg> &inputs,
                           const std::vector<CustomOpDeviceArg> &outputs,
                           void *stream);

/// The C ABI type of (`dtype`, `shape`); an error when the rank is above
/// KILN_CUSTOM_OP_MAX_RANK.
Expected<KilnTensorType> customOpType(DType dtype, const Shape &shape);

} // namespace kiln

#endif // KILN_RUNTIME_CUSTOMOPS_H
