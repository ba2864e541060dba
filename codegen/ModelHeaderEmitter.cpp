//===- ModelHeaderEmitter.cpp - The generated model.h ---------------------===//
//
// This file implements the emitter of model.h, the typed C++ API of a
// package: it includes the C ABI (kiln/runtime/ModelABI.h) and adds, in a
// namespace named after the model, the static signature as constexpr tables
// and a run() over typed Inputs/Outputs structs.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModelHeaderEmitter.h"
#include "codegen/FillWeights.h"
#include "codegen/WrapperEmitter.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {

/// The fill weights of model.h (codegen/FillWeights.h): a table of their
/// elements, fillWeight() and createFromWeightsFileAndFills(), which binds
/// weights.bin's weights and fills the fill weights into caller storage.
static void emitFillWeightSection(llvm::raw_ostream &os,
                                  const MemoryPlan &plan) {
  int64_t storageBytes = 0;
  std::string table;
  llvm::raw_string_ostream rows(table);
  int count = 0;
  for (auto [i, w] : llvm::enumerate(plan.weights)) {
    std::optional<std::vector<uint8_t>> element = fillWeightElement(w);
    if (!element)
      continue;
    rows << "    {" << i << ", " << w.bytes << ", " << element->size() << ", {";
    for (uint8_t byte : *element)
      rows << llvm::format("0x%02x, ", byte);
    rows << "}, " << storageBytes << "}, // '" << commentSafe(w.name) << "'\n";
    storageBytes = alignBuffer(storageBytes + w.bytes);
    ++count;
  }
  if (!count)
    rows << "    {-1, 0, 0, {}, 0}, // none\n";
  os << "/// Fill weights: constants whose elements all equal one element. "
        "The package\n"
     << "/// records the element (manifest.json \"fill\") instead of "
        "storing the weight\n"
     << "/// in weights.bin, so kWeightOffsets holds -1 for them and "
        "createFromWeightsFile\n"
     << "/// leaves them unbound (kiln_model_create then fails naming "
        "one): use\n"
     << "/// createFromWeightsFileAndFills, which writes them into "
        "caller storage.\n"
     << "struct FillWeight {\n"
     << "  int index;                 ///< the weight, in kiln_model_create's "
        "order\n"
     << "  int64_t bytes;             ///< its dense size\n"
     << "  int elementBytes;          ///< its dtype's size\n"
     << "  unsigned char element[8];  ///< the element's bytes, "
        "little-endian\n"
     << "  int64_t storageOffset;     ///< where it goes in the fill storage "
        "(64-byte aligned)\n"
     << "};\n"
     << "constexpr int kNumFillWeights = " << count << ";\n"
     << "constexpr FillWeight kFillWeights[] = {\n"
     << table << "};\n"
     << "/// Bytes of the storage createFromWeightsFileAndFills fills.\n"
     << "constexpr int64_t kFillStorageBytes = " << storageBytes << ";\n\n"
     << "/// Writes fill weight `f` (kFillWeights[f].bytes bytes) at "
        "`storage`.\n"
     << "inline void fillWeight(int f, void *storage) {\n"
     << "  const FillWeight &w = kFillWeights[f];\n"
     << "  char *out = static_cast<char *>(storage);\n"
     << "  if (w.bytes < w.elementBytes)\n    return;\n"
     << "  __builtin_memcpy(out, w.element, w.elementBytes);\n"
     << "  for (int64_t done = w.elementBytes; done < w.bytes;) {\n"
     << "    int64_t n = done < w.bytes - done ? done : w.bytes - done;\n"
     << "    __builtin_memcpy(out + done, out, n);\n"
     << "    done += n;\n  }\n}\n\n"
     << "/// Creates a model like createFromWeightsFile, the fill weights "
        "written first\n"
     << "/// into `fillStorage`: kFillStorageBytes of caller memory, "
        "64-byte aligned, kept\n"
     << "/// alive until kiln_model_destroy (may be null when "
        "kFillStorageBytes is 0).\n"
     << "/// Returns 0 on success.\n"
     << "inline int createFromWeightsFileAndFills(const void *weightsFile, "
        "void *fillStorage,\n"
     << "                                         kiln_model **out, char "
        "*err = nullptr,\n"
     << "                                         size_t errlen = 0) {\n"
     << "  const void *weights[kNumWeights > 0 ? kNumWeights : 1] = {};\n"
     << "  for (int i = 0; i < kNumWeights; ++i)\n"
     << "    if (kWeightOffsets[i] >= 0)\n"
     << "      weights[i] = static_cast<const char *>(weightsFile) + "
        "kWeightOffsets[i];\n"
     << "  for (int f = 0; f < kNumFillWeights; ++f) {\n"
     << "    char *at = static_cast<char *>(fillStorage) + "
        "kFillWeights[f].storageOffset;\n"
     << "    fillWeight(f, at);\n"
     << "    weights[kFillWeights[f].index] = at;\n  }\n"
     << "  return kiln_model_create(weights, out, err, errlen);\n}\n\n";
}

std::string emitModelHeader(const MemoryPlan &plan, StringRef modelName) {
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string ns = toIdentifier(modelName);
  std::string guard = "KILN_MODEL_" + StringRef(ns).upper() + "_H";

  os << "//===- model.h - Kiln model '" << modelName
     << "' (generated) -------------*- C++ -*-===//\n"
     << "//\n"
     << "// Generated by `kiln compile`; do not edit. The typed C++ API of "
        "this model:\n"
     << "// the C ABI (kiln/runtime/ModelABI.h, implemented by model.so) "
        "plus, in\n"
     << "// namespace " << ns
     << ", the static signature (constexpr shapes) and run()\n"
     << "// over typed Inputs/Outputs structs. f16/bf16 buffers are "
        "uint16_t bits.\n"
     << "//\n"
     << "//===-------------------------------------------------------------"
        "---------===//\n\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"kiln/runtime/ModelABI.h\"\n\n#include <cstddef>\n"
     << "#include <cstdint>\n\n"
     << "namespace " << ns << " {\n\n";

  // Field names: identifiers, unique within each struct.
  auto fieldNames = [](const std::vector<SignatureEntry> &entries) {
    std::vector<std::string> names;
    llvm::StringSet<> used;
    for (const auto &e : entries) {
      std::string id = toIdentifier(e.name), base = id;
      for (int k = 1; !used.insert(id).second; ++k)
        id = base + "_" + std::to_string(k);
      names.push_back(id);
    }
    return names;
  };
  std::vector<std::string> inNames = fieldNames(plan.inputs);
  std::vector<std::string> outNames = fieldNames(plan.outputs);

  auto constants = [&](StringRef kind, const std::vector<SignatureEntry> &es,
                       const std::vector<std::string> &ids) {
    for (auto [i, e] : llvm::enumerate(es)) {
      int64_t numel = 1;
      for (int64_t d : e.shape)
        numel *= d;
      os << "/// " << kind << " " << i << " '" << commentSafe(e.name)
         << "': " << typeString(e.dtype, e.shape) << ".\n"
         << "constexpr int64_t k" << kind << "Rank_" << ids[i] << " = "
         << e.shape.size() << ";\n"
         << "constexpr int64_t k" << kind << "Shape_" << ids[i] << "[] = "
         << (e.shape.empty() ? std::string("{1}") : formatShape(e.shape)) << ";"
         << (e.shape.empty() ? " // rank 0 (a scalar)" : "") << "\n"
         << "constexpr int64_t k" << kind << "Numel_" << ids[i] << " = "
         << numel << ";\n"
         << "constexpr int k" << kind << "DType_" << ids[i] << " = "
         << static_cast<int>(e.dtype) << "; // " << dtypeName(e.dtype)
         << "\n\n";
    }
  };
  constants("Input", plan.inputs, inNames);
  constants("Output", plan.outputs, outNames);

  os << "constexpr int kNumInputs = " << plan.inputs.size() << ";\n"
     << "constexpr int kNumOutputs = " << plan.outputs.size() << ";\n"
     << "/// Weights, in the order kiln_model_create takes them:\n";
  for (auto [i, w] : llvm::enumerate(plan.weights))
    os << "///   " << i << ": '" << commentSafe(w.name) << "' "
       << typeString(w.dtype, w.shape) << "\n";
  os << "constexpr int kNumWeights = " << plan.weights.size() << ";\n"
     << "/// Offset of each weight in weights.bin (-1: not in the package, "
        "bound by\n/// the caller).\n"
     << "constexpr int64_t kWeightOffsets[] = {";
  for (const SignatureEntry &w : plan.weights)
    os << w.fileOffset << ", ";
  os << (plan.weights.empty() ? "-1" : "") << "};\n"
     << "/// Bytes of weights.bin.\n"
     << "constexpr int64_t kWeightsFileBytes = " << plan.weightFileBytes
     << ";\n"
     << "/// Bytes of the scratch arena one run needs (64-byte aligned).\n"
     << "constexpr size_t kArenaBytes = " << plan.arenaBytes << ";\n\n";
  emitFillWeightSection(os, plan);

  os << "/// The inputs (contiguous, row-major).\nstruct Inputs {\n";
  for (auto [i, e] : llvm::enumerate(plan.inputs))
    os << "  const " << publicCType(e.dtype) << " *" << inNames[i] << " = "
       << "nullptr; ///< '" << commentSafe(e.name)
       << "': " << typeString(e.dtype, e.shape) << "\n";
  os << "};\n\n/// The outputs: caller-owned buffers of the declared "
        "sizes.\nstruct Outputs {\n";
  for (auto [i, e] : llvm::enumerate(plan.outputs))
    os << "  " << publicCType(e.dtype) << " *" << outNames[i] << " = "
       << "nullptr; ///< '" << commentSafe(e.name)
       << "': " << typeString(e.dtype, e.shape) << "\n";
  os << "};\n\n";

  os << "/// Runs the model; `arena` holds kArenaBytes (64-byte aligned). "
        "Returns 0\n/// on success, else nonzero with a message in `err`.\n"
     << "inline int run(kiln_model *model, const Inputs &in, const Outputs "
        "&out,\n"
     << "               void *arena, char *err = nullptr, size_t errlen = 0) "
        "{\n"
     << "  const void *inputs[] = {";
  for (size_t i = 0; i < inNames.size(); ++i)
    os << "in." << inNames[i] << ", ";
  os << (inNames.empty() ? "nullptr" : "") << "};\n  void *outputs[] = {";
  for (size_t i = 0; i < outNames.size(); ++i)
    os << "out." << outNames[i] << ", ";
  os << (outNames.empty() ? "nullptr" : "") << "};\n"
     << "  return kiln_model_run(model, inputs, outputs, arena, err, "
        "errlen);\n}\n\n"
     << "/// Creates a model whose weights all live in weights.bin, given "
        "its\n/// contents (64-byte aligned, e.g. mmap'd). Returns 0 on "
        "success.\n"
     << "inline int createFromWeightsFile(const void *weightsFile, "
        "kiln_model **out,\n"
     << "                                 char *err = nullptr, size_t errlen "
        "= 0) {\n"
     << "  const void *weights[kNumWeights > 0 ? kNumWeights : 1] = {};\n"
     << "  for (int i = 0; i < kNumWeights; ++i)\n"
     << "    if (kWeightOffsets[i] >= 0)\n"
     << "      weights[i] = static_cast<const char *>(weightsFile) + "
        "kWeightOffsets[i];\n"
     << "  return kiln_model_create(weights, out, err, errlen);\n}\n\n"
     << "} // namespace " << ns << "\n\n#endif // " << guard << "\n";
  return text;
}

} // namespace kiln
