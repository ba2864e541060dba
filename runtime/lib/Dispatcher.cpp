//===- Dispatcher.cpp - Kernels keyed by (op, device, dtype) --------------===//
//
// This file implements the kernel registry: registration, lookup, the
// process-wide instance (which registers every built-in kernel family once,
// under C++ thread-safe static initialisation) and call(), which picks the
// kernel by the first input's dtype and reports what is missing when none
// fits.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Dispatcher.h"

namespace kiln {

Dispatcher &Dispatcher::global() {
  static Dispatcher *instance = [] {
    auto *d = new Dispatcher();
    registerElementwiseKernels(*d);
    registerReductionKernels(*d);
    registerLinalgKernels(*d);
    registerNormalizationKernels(*d);
    registerDataMovementKernels(*d);
    registerRecurrentKernels(*d);
    registerResizeKernels(*d);
    registerNonZeroKernels(*d);
    registerDeterminantKernels(*d);
    registerGridSampleKernels(*d);
    registerCol2ImKernels(*d);
    registerNonMaxSuppressionKernels(*d);
    registerDftKernels(*d);
    registerRoiAlignKernels(*d);
    registerDeformConvKernels(*d);
    registerStftKernels(*d);
    registerUniqueKernels(*d);
    registerRandomKernels(*d);
    registerBitCastKernels(*d);
    registerCustomCallKernels(*d);
    return d;
  }();
  return *instance;
}

void Dispatcher::add(const std::string &op, Device device, DType dtype,
                     KernelFn fn) {
  kernels_[std::make_tuple(op, device, dtype)] = std::move(fn);
}

void Dispatcher::add(const std::string &op, Device device,
                     std::initializer_list<DType> dtypes, const KernelFn &fn) {
  for (DType t : dtypes)
    add(op, device, t, fn);
}

const KernelFn *Dispatcher::find(const std::string &op, Device device,
                                 DType dtype) const {
  auto it = kernels_.find(std::make_tuple(op, device, dtype));
  return it == kernels_.end() ? nullptr : &it->second;
}

bool Dispatcher::hasOp(const std::string &op, Device device) const {
  auto it = kernels_.lower_bound(std::make_tuple(op, device, DType::F32));
  return it != kernels_.end() && std::get<0>(it->first) == op &&
         std::get<1>(it->first) == device;
}

Status Dispatcher::call(const std::string &op,
                        const std::vector<Tensor> &inputs,
                        const Attributes &attrs,
                        std::vector<Tensor> &outputs) const {
  DType dtype = DType::Bool;
  Device device = Device::CPU;
  if (!inputs.empty()) {
    if (!inputs[0].defined())
      return Status::error(
          strCat("op '", op, "': input 0 is absent (no tensor)"));
    dtype = inputs[0].dtype();
    device = inputs[0].device();
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined())
      return Status::error(
          strCat("op '", op, "': input ", i, " is absent (no tensor)"));
  // A kernel runs on one device: every input must be there. The built-in
  // kernels are CPU reference kernels.
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].device() != device || (device != Device::CPU &&
                                         !hasOp(op, device)))
      return Status::error(strCat(
          "op '", op, "': input ", i, " is a ", deviceName(inputs[i].device()),
          " tensor but the reference kernels run on the CPU",
          device == Device::CPU ? strCat(" (input 0 is on the CPU)") : "",
          ": copy it with Tensor::to(Device::CPU) first"));
  const KernelFn *fn = find(op, device, dtype);
  if (!fn) {
    if (!hasOp(op, device))
      return Status::error(strCat(
          "no kernel for op '", op, "' on ", deviceName(device), " for dtype ",
          dtypeName(dtype), " (the runtime does not know this op)"));
    std::string have;
    for (const auto &entry : kernels_)
      if (std::get<0>(entry.first) == op && std::get<1>(entry.first) == device)
        have += strCat(have.empty() ? "" : ", ",
                       dtypeName(std::get<2>(entry.first)));
    return Status::error(strCat("no kernel for op '", op, "' on ",
                                deviceName(device), " for dtype ",
                                dtypeName(dtype), " (supported: ", have, ")"));
  }
  KernelContext ctx{inputs, attrs, outputs};
  return (*fn)(ctx);
}

} // namespace kiln
