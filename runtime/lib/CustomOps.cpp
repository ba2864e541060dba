//===- CustomOps.cpp - The registry of custom-operator libraries ----------===//
//
// This file implements the process-wide registry of custom-operator
// libraries (kiln/custom_op.h): each library is opened once with dlopen
// (RTLD_NOW | RTLD_LOCAL) and stays loaded for the life of the process, its
// table is checked when it is loaded (ABI version, names, required
// functions, no op provided twice), and the ops are found by (domain, op
// type). It also converts kiln.custom_call's attributes and types to the C
// ABI's structs and calls shape functions with their errors named.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/CustomOps.h"

#include <dlfcn.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

namespace kiln {

// kiln/custom_op.h's dtype codes are the runtime's.
static_assert(static_cast<int>(DType::Bool) == KILN_DTYPE_BOOL &&
                  static_cast<int>(DType::I16) == KILN_DTYPE_I16 &&
                  static_cast<int>(DType::F8E5M2FNUZ) ==
                      KILN_DTYPE_F8E5M2FNUZ &&
                  static_cast<int>(DType::U2) == KILN_DTYPE_U2,
              "kiln/custom_op.h's KilnCustomDType must follow kiln::DType");

namespace {

struct Registry {
  std::mutex mutex;
  /// Resolved library paths already loaded.
  std::map<std::string, std::string> loaded;
  /// (domain, op type) -> entry.
  std::map<std::pair<std::string, std::string>, CustomOpEntry> ops;
};

Registry &registry() {
  static Registry *r = new Registry();
  return *r;
}

/// The attribute name prefix of an ONNX node attribute on kiln.custom_call.
constexpr const char *kAttrPrefix = "attr.";

} // namespace

Status loadCustomOpLibrary(const std::string &path) {
  std::error_code ec;
  std::filesystem::path resolved = std::filesystem::canonical(path, ec);
  if (ec)
    return Status::error(strCat("custom-op library '", path,
                                "': not found (", ec.message(), ")"));
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.loaded.count(resolved.string()))
    return Status::ok();
  void *handle = dlopen(resolved.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return Status::error(
        strCat("custom-op library '", path, "': cannot be loaded: ",
               dlerror()));
  auto entry = reinterpret_cast<KilnCustomOpLibraryFn>(
      dlsym(handle, KILN_CUSTOM_OP_ENTRY));
  if (!entry)
    return Status::error(strCat("custom-op library '", path,
                                "' does not export " KILN_CUSTOM_OP_ENTRY
                                "() (kiln/custom_op.h, docs/custom-ops.md)"));
  const KilnCustomOpLibrary *lib = entry();
  if (!lib || lib->abi_version != KILN_CUSTOM_OP_ABI_VERSION)
    return Status::error(strCat(
        "custom-op library '", path, "' was built for custom-op ABI version ",
        lib ? lib->abi_version : -1, "; this Kiln implements version ",
        KILN_CUSTOM_OP_ABI_VERSION, ": rebuild it against kiln/custom_op.h"));
  if (lib->num_ops < 0 || (lib->num_ops > 0 && !lib->ops))
    return Status::error(strCat("custom-op library '", path,
                                "' lists an invalid table of ops"));
  std::map<std::pair<std::string, std::string>, CustomOpEntry> added;
  for (int32_t i = 0; i < lib->num_ops; ++i) {
    const KilnCustomOp &op = lib->ops[i];
    if (!op.domain || !op.op_type || !*op.op_type)
      return Status::error(strCat("custom-op library '", path, "': op #", i,
                                  " has no domain or op type"));
    std::string domain = *op.domain ? op.domain : "ai.onnx";
    std::string name = strCat(domain, ":", op.op_type);
    if (!op.infer_types || !op.cpu_kernel)
      return Status::error(strCat("custom-op library '", path, "': ", name,
                                  " needs a shape function and a CPU kernel"));
    auto key = std::make_pair(domain, std::string(op.op_type));
    if (auto it = r.ops.find(key); it != r.ops.end())
      return Status::error(strCat("custom-op library '", path, "': ", name,
                                  " is already provided by '",
                                  it->second.library, "'"));
    added[key] = CustomOpEntry{&op, path};
  }
  r.ops.insert(added.begin(), added.end());
  r.loaded[resolved.string()] = path;
  return Status::ok();
}

CustomOpEntry findCustomOp(const std::string &domain,
                           const std::string &opType) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.ops.find({domain.empty() ? "ai.onnx" : domain, opType});
  return it == r.ops.end() ? CustomOpEntry{} : it->second;
}

std::vector<KilnAttribute> customOpAttributes(const Attributes &attrs) {
  std::vector<KilnAttribute> out;
  for (const auto &[key, value] : attrs.all()) {
    if (key.rfind(kAttrPrefix, 0) != 0)
      continue;
    KilnAttribute a{};
    a.name = key.c_str() + std::char_traits<char>::length(kAttrPrefix);
    if (auto *i = std::get_if<int64_t>(&value)) {
      a.kind = KILN_ATTR_INT;
      a.i = *i;
    } else if (auto *f = std::get_if<double>(&value)) {
      a.kind = KILN_ATTR_FLOAT;
      a.f = *f;
    } else if (auto *s = std::get_if<std::string>(&value)) {
      a.kind = KILN_ATTR_STRING;
      a.s = s->c_str();
    } else if (auto *is = std::get_if<std::vector<int64_t>>(&value)) {
      a.kind = KILN_ATTR_INTS;
      a.count = static_cast<int64_t>(is->size());
      a.ints = is->data();
    } else if (auto *fs = std::get_if<std::vector<double>>(&value)) {
      a.kind = KILN_ATTR_FLOATS;
      a.count = static_cast<int64_t>(fs->size());
      a.floats = fs->data();
    } else {
      continue; // dtypes and tensors are not passed (kiln/custom_op.h)
    }
    out.push_back(a);
  }
  return out;
}

Expected<KilnTensorType> customOpType(DType dtype, const Shape &shape) {
  if (shape.size() > KILN_CUSTOM_OP_MAX_RANK)
    return Status::error(strCat("rank ", shape.size(),
                                " is above the custom-op limit of ",
                                KILN_CUSTOM_OP_MAX_RANK));
  KilnTensorType t{};
  t.dtype = static_cast<int32_t>(dtype);
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    t.shape[i] = shape[i];
  return t;
}

Expected<std::vector<KilnTensorType>>
inferCustomOpTypes(const CustomOpEntry &entry,
                   const std::vector<KilnTensorType> &inputs,
                   const std::vector<KilnAttribute> &attrs, int numOutputs,
                   const std::string &where) {
  std::vector<KilnTensorType> outputs(static_cast<size_t>(numOutputs));
  char error[512] = {0};
  int rc = entry.op->infer_types(
      inputs.data(), static_cast<int32_t>(inputs.size()), attrs.data(),
      static_cast<int32_t>(attrs.size()), outputs.data(), numOutputs, error,
      sizeof(error));
  error[sizeof(error) - 1] = 0;
  if (rc != 0)
    return Status::error(strCat(where, ": the shape function of '",
                                entry.library, "' failed: ",
                                *error ? error : "(no message)"));
  for (int i = 0; i < numOutputs; ++i) {
    const KilnTensorType &t = outputs[i];
    bool ok = t.dtype >= 0 && t.dtype < kNumDTypes && t.rank >= 0 &&
              t.rank <= KILN_CUSTOM_OP_MAX_RANK;
    for (int32_t d = 0; ok && d < t.rank; ++d)
      ok = t.shape[d] >= 0;
    if (!ok)
      return Status::error(strCat(where, ": the shape function of '",
                                  entry.library, "' gave output #", i,
                                  " an invalid type (dtype code ", t.dtype,
                                  ", rank ", t.rank, ")"));
  }
  return outputs;
}

Status runCustomOpOnDevice(const Attributes &attrs,
                           const std::vector<CustomOpDeviceArg> &inputs,
                           const std::vector<CustomOpDeviceArg> &outputs,
                           void *stream) {
  std::string domain = attrs.getString("domain");
  std::string opType = attrs.getString("op_type");
  std::string where = strCat("custom op ", domain, ":", opType);
  CustomOpEntry entry = findCustomOp(domain, opType);
  if (!entry.op)
    return Status::error(strCat(
        where, ": no loaded custom-op library provides it; load one with "
               "--custom-ops libNAME.so (a package loads the libraries it "
               "records; docs/custom-ops.md)"));
  if (!entry.op->cuda_kernel)
    return Status::error(strCat(
        where, ": '", entry.library,
        "' has no CUDA kernel for it, but the package was compiled with a "
        "library that had one; recompile the package with this library"));
  std::vector<KilnTensor> in, out;
  std::vector<KilnTensorType> inputTypes;
  for (const CustomOpDeviceArg &a : inputs) {
    Expected<KilnTensorType> type = customOpType(a.dtype, a.shape);
    if (!type)
      return type.status().withContext(where);
    inputTypes.push_back(*type);
    in.push_back(KilnTensor{*type, a.data});
  }
  std::vector<KilnAttribute> attributes = customOpAttributes(attrs);
  int numOutputs = static_cast<int>(outputs.size());
  Expected<std::vector<KilnTensorType>> types = inferCustomOpTypes(
      entry, inputTypes, attributes, numOutputs, where);
  if (!types)
    return types.status();
  for (int i = 0; i < numOutputs; ++i) {
    Expected<KilnTensorType> planned =
        customOpType(outputs[i].dtype, outputs[i].shape);
    if (!planned)
      return planned.status().withContext(where);
    const KilnTensorType &t = (*types)[i];
    bool same = t.dtype == planned->dtype && t.rank == planned->rank;
    for (int32_t d = 0; same && d < t.rank; ++d)
      same = t.shape[d] == planned->shape[d];
    if (!same)
      return Status::error(strCat(
          where, ": the shape function of '", entry.library,
          "' gives output #", i, " another type than the package planned for "
          "(it was compiled with another version of the library?)"));
    out.push_back(KilnTensor{*planned, outputs[i].data});
  }
  char error[512] = {0};
  int rc = entry.op->cuda_kernel(
      in.data(), static_cast<int32_t>(in.size()), attributes.data(),
      static_cast<int32_t>(attributes.size()), out.data(), numOutputs, stream,
      error, sizeof(error));
  error[sizeof(error) - 1] = 0;
  if (rc != 0)
    return Status::error(strCat(where, ": the CUDA kernel of '",
                                entry.library,
                                "' failed: ", *error ? error : "(no message)"));
  return Status::ok();
}

} // namespace kiln
