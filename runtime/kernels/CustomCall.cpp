//===- CustomCall.cpp - Reference kernel of kiln.custom_call --------------===//
//
// This file implements the reference kernel of kiln.custom_call: it finds
// the op of the node's (domain, op_type) in the loaded custom-op libraries
// (kiln/runtime/CustomOps.h), asks its shape function for the result types
// of this run's inputs, allocates the results and calls its CPU kernel on
// contiguous copies of the inputs. The compiled CPU path calls the same
// kernel as a reference step of the generated wrapper.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/CustomOps.h"
#include "kiln/runtime/Dispatcher.h"

namespace kiln {

namespace {

Status runCustomCall(KernelContext &ctx) {
  std::string domain = ctx.attrs.getString("domain");
  std::string opType = ctx.attrs.getString("op_type");
  std::string where = strCat("custom op ", domain, ":", opType);
  CustomOpEntry entry = findCustomOp(domain, opType);
  if (!entry.op)
    return Status::error(strCat(
        where, ": no loaded custom-op library provides it; load one with "
               "--custom-ops libNAME.so (a package loads the libraries it "
               "records; docs/custom-ops.md)"));
  std::vector<Tensor> inputs;
  std::vector<KilnTensorType> inputTypes;
  for (const Tensor &t : ctx.inputs) {
    inputs.push_back(t.contiguous());
    Expected<KilnTensorType> type = customOpType(t.dtype(), t.shape());
    if (!type)
      return type.status().withContext(where);
    inputTypes.push_back(*type);
  }
  std::vector<KilnAttribute> attrs = customOpAttributes(ctx.attrs);
  int numOutputs = static_cast<int>(ctx.outputs.size());
  Expected<std::vector<KilnTensorType>> types =
      inferCustomOpTypes(entry, inputTypes, attrs, numOutputs, where);
  if (!types)
    return types.status();
  std::vector<KilnTensor> in(inputs.size()), out(numOutputs);
  for (size_t i = 0; i < inputs.size(); ++i)
    in[i] = KilnTensor{inputTypes[i], inputs[i].rawData()};
  for (int i = 0; i < numOutputs; ++i) {
    const KilnTensorType &t = (*types)[i];
    ctx.outputs[i] = Tensor::empty(static_cast<DType>(t.dtype),
                                   Shape(t.shape, t.shape + t.rank));
    out[i] = KilnTensor{t, ctx.outputs[i].rawData()};
  }
  char error[512] = {0};
  int rc = entry.op->cpu_kernel(in.data(), static_cast<int32_t>(in.size()),
                                attrs.data(), static_cast<int32_t>(attrs.size()),
                                out.data(), numOutputs, error, sizeof(error));
  error[sizeof(error) - 1] = 0;
  if (rc != 0)
    return Status::error(strCat(where, ": the CPU kernel of '", entry.library,
                                "' failed: ", *error ? error : "(no message)"));
  return Status::ok();
}

} // namespace

void registerCustomCallKernels(Dispatcher &d) {
  d.add("custom_call", Device::CPU, kAllTypes, runCustomCall);
}

} // namespace kiln
