//===- Dispatcher.h - Kernels keyed by (op, device, dtype) -----*- C++ -*-===//
//
// This file declares the kernel registry of the runtime. A kernel is a plain
// function over a KernelContext (input tensors, attributes, output slots). It
// is registered under the kiln op name without the dialect prefix ("add",
// "conv", "layer_norm"), a device and the dtype of the op's first operand.
// Kernels compute their output shapes themselves from the actual inputs, so
// the reference runtime needs no static shapes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_DISPATCHER_H
#define KILN_RUNTIME_DISPATCHER_H

#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/Status.h"
#include "kiln/runtime/Tensor.h"

#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace kiln {

/// What a kernel sees: its inputs, attributes, and the outputs it must set.
struct KernelContext {
  const std::vector<Tensor> &inputs;
  const Attributes &attrs;
  /// Sized to the op's result count by the caller; the kernel assigns each.
  std::vector<Tensor> &outputs;

  size_t numInputs() const { return inputs.size(); }
  const Tensor &input(size_t i) const { return inputs[i]; }
};

using KernelFn = std::function<Status(KernelContext &)>;

/// The registry of kernels.
class Dispatcher {
public:
  /// The process-wide dispatcher with every built-in CPU kernel registered.
  static Dispatcher &global();

  /// Registers `fn` for (op, device, dtype); a later registration replaces.
  void add(const std::string &op, Device device, DType dtype, KernelFn fn);
  /// Registers `fn` for each listed dtype.
  void add(const std::string &op, Device device,
           std::initializer_list<DType> dtypes, const KernelFn &fn);
  /// Finds the kernel; nullptr when none.
  const KernelFn *find(const std::string &op, Device device, DType dtype) const;
  /// True when some kernel is registered for `op` on `device`.
  bool hasOp(const std::string &op, Device device) const;

  /// Runs `op` on `inputs`; the dtype key is the first input's dtype (Bool
  /// when there is none). Errors name the op, device and dtype.
  Status call(const std::string &op, const std::vector<Tensor> &inputs,
              const Attributes &attrs, std::vector<Tensor> &outputs) const;

private:
  std::map<std::tuple<std::string, Device, DType>, KernelFn> kernels_;
};

/// Dtype groups for registration.
inline constexpr std::initializer_list<DType> kFloatTypes = {
    DType::F32, DType::F16, DType::BF16, DType::F64};
inline constexpr std::initializer_list<DType> kIntTypes = {
    DType::I64, DType::I32, DType::I16, DType::I8,
    DType::U8,  DType::U16, DType::U32, DType::U64};
inline constexpr std::initializer_list<DType> kNumericTypes = {
    DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64, DType::I32,
    DType::I16, DType::I8,  DType::U8,   DType::U16, DType::U32, DType::U64};
/// Every dtype, the storage-only ones (float8, sub-byte integers) included:
/// the data movement kernels, cast and the comparisons take them.
inline constexpr std::initializer_list<DType> kAllTypes = {
    DType::F32,        DType::F16,      DType::BF16,       DType::F64,
    DType::I64,        DType::I32,      DType::I16,        DType::I8,
    DType::U8,         DType::U16,      DType::U32,        DType::U64,
    DType::Bool,       DType::F8E4M3FN, DType::F8E4M3FNUZ, DType::F8E5M2,
    DType::F8E5M2FNUZ, DType::I4,       DType::U4,         DType::I2,
    DType::U2};

// Registration entry points, one per kernel family (runtime/kernels/*.cpp).
// Dispatcher::global() calls each once.
void registerElementwiseKernels(Dispatcher &d);
void registerReductionKernels(Dispatcher &d);
void registerLinalgKernels(Dispatcher &d);
void registerNormalizationKernels(Dispatcher &d);
void registerDataMovementKernels(Dispatcher &d);
void registerRecurrentKernels(Dispatcher &d);
void registerResizeKernels(Dispatcher &d);
void registerNonZeroKernels(Dispatcher &d);
void registerDeterminantKernels(Dispatcher &d);
void registerGridSampleKernels(Dispatcher &d);
void registerCol2ImKernels(Dispatcher &d);
void registerNonMaxSuppressionKernels(Dispatcher &d);
void registerDftKernels(Dispatcher &d);
void registerRoiAlignKernels(Dispatcher &d);
void registerDeformConvKernels(Dispatcher &d);
void registerStftKernels(Dispatcher &d);
void registerUniqueKernels(Dispatcher &d);
void registerRandomKernels(Dispatcher &d);
void registerBitCastKernels(Dispatcher &d);
void registerCustomCallKernels(Dispatcher &d);

} // namespace kiln

#endif // KILN_RUNTIME_DISPATCHER_H
