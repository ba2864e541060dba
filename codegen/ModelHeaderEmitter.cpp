//===- ModelHeaderEmitter.cpp - The generated package header --------------===//
//
// This file implements the emitter of <name>.h, the C and C++ API of one
// package. It declares, extern "C", every symbol the package's library
// exports (<name>_create, <name>_run, ..., and each generated kernel on its
// own with its parameters documented), and adds, in namespace <name>, the
// static signature as constexpr tables, typed Inputs/Outputs structs, run()
// and the target's helpers that create a model without kiln::Model. Names
// are the package's (codegen/PackageNames.h), so the headers of several
// packages can be included into one program.
//
//===----------------------------------------------------------------------===//

#include "codegen/ModelHeaderEmitter.h"
#include "codegen/FillWeights.h"
#include "codegen/Target.h"
#include "codegen/WrapperSupport.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln {

namespace {

/// Field names: identifiers, unique within each struct.
std::vector<std::string>
fieldNames(const std::vector<SignatureEntry> &entries) {
  std::vector<std::string> names;
  llvm::StringSet<> used;
  for (const auto &e : entries) {
    std::string id = toIdentifier(e.name), base = id;
    for (int k = 1; !used.insert(id).second; ++k)
      id = base + "_" + std::to_string(k);
    names.push_back(id);
  }
  return names;
}

/// The extern "C" declarations of the package's entry points.
void emitEntryPoints(llvm::raw_ostream &os, const PackageNames &names,
                     const WrapperAbi &abi, bool sized) {
  auto sym = [&](StringRef entry) { return names.symbol(entry); };
  os << "/// KILN_MODEL_ABI_VERSION of the kiln that generated the package, "
        "and its\n/// target (\"cpu\", \"cuda\").\n"
     << "int " << sym("abi_version") << "(void);\n"
     << "const char *" << sym("target") << "(void);\n\n"
     << "/// The signature: counts, names, dtypes (kiln::DType codes), "
        "ranks and\n/// shapes of the inputs, outputs and weights, in "
        "order.\n";
  for (StringRef kind : {"input", "output", "weight"})
    os << "int " << sym(("num_" + kind + "s").str()) << "(void);\n";
  for (StringRef kind : {"input", "output", "weight"})
    os << "const char *" << sym((kind + "_name").str()) << "(int i);\n"
       << "int " << sym((kind + "_dtype").str()) << "(int i);\n"
       << "int " << sym((kind + "_rank").str()) << "(int i);\n"
       << "const int64_t *" << sym((kind + "_shape").str()) << "(int i);\n";
  os << "/// Bytes of scratch memory one run needs (the planned arena, "
        "64-byte aligned).\n"
     << "size_t " << sym("arena_bytes") << "(void);\n\n"
     << "/// Binds the weights (pointers in weight order, kept alive by the "
        "caller\n/// until "
     << sym("destroy")
     << ") and returns a handle. 0 on success, else\n/// nonzero with a "
        "message in `err`.\n"
     << "int " << sym(abi.createEntry) << "(const void *const *weights,\n"
     << abi.createParameters
     << "    kiln_model **out, char *err, size_t "
        "errlen);\n"
     << "/// Runs the model: one pointer per input and per output "
        "(contiguous, of the\n/// declared types) and an arena of "
     << sym("arena_bytes")
     << "() bytes. Several\n/// threads may run one "
        "handle at once, each with its own arena.\n"
     << "int " << sym(abi.runEntry)
     << "(kiln_model *model, const void *const *inputs,\n"
     << "    void *const *outputs, void *arena" << abi.stepParameter
     << ", char *err, size_t errlen);\n"
     << "/// The size symbols of a package compiled for ranges of sizes "
        "(kiln compile\n/// --dim NAME=LO..HI; none otherwise): names and "
        "ranges.\n"
     << "int " << sym("num_size_symbols") << "(void);\n"
     << "const char *" << sym("size_symbol_name") << "(int i);\n"
     << "int64_t " << sym("size_symbol_min") << "(int i);\n"
     << "int64_t " << sym("size_symbol_max") << "(int i);\n";
  if (sized)
    os << "/// Runs the model at `sizes` (one per size symbol, in order; "
          "the inputs and\n/// outputs have the shapes they give). "
       << sym(abi.runEntry) << " refuses to run this package.\n"
       << "int " << sym("run_sized")
       << "(kiln_model *model, const int64_t *sizes,\n"
       << "    const void *const *inputs, void *const *outputs, void *arena"
       << abi.stepParameter << ",\n    char *err, size_t errlen);\n";
  os << "/// Releases a handle.\n"
     << "void " << sym("destroy") << "(kiln_model *model);\n"
     << abi.extraDeclarations << "\n";
}

/// The declarations of the kernels, each callable on its own.
void emitKernelDeclarations(llvm::raw_ostream &os, const MemoryPlan &plan,
                            GraphCodegen &codegen) {
  wrapper::BufferNames buffers(plan);
  bool any = false;
  for (Operation *op : plan.ops) {
    if (classifyStep(op) != StepKind::Kernel)
      continue;
    if (!any)
      os << "/*===-- The kernels, one by one, in the order the model runs "
            "them ------------===*/\n\n";
    any = true;
    KernelEntryPoint entry = codegen.kernelEntryPoint(op, buffers);
    for (const std::string &line : entry.doc)
      os << "/// " << line << "\n";
    for (const KernelParameter &p : entry.parameters)
      if (!p.doc.empty())
        os << "///   " << p.doc << "\n";
    os << entry.returnType << " " << entry.symbol << "(";
    for (auto [i, p] : llvm::enumerate(entry.parameters))
      os << (i ? ",\n    " : "\n    ") << p.declaration;
    os << ");\n\n";
  }
}

/// The fill weights of the header (codegen/FillWeights.h): a table of
/// their elements and fillWeight(), which writes one into caller storage
/// (the CPU target's createFromWeightsFileAndFills binds them so).
void emitFillWeightSection(llvm::raw_ostream &os, const MemoryPlan &plan) {
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
     << "/// in weights.bin, so kWeightOffsets holds -1 for them: the "
        "caller binds them\n/// to memory that fillWeight() fills.\n"
     << "struct FillWeight {\n"
     << "  int index;                 ///< the weight, in weight order\n"
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
     << "/// Bytes of storage that holds every fill weight.\n"
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
     << "    done += n;\n  }\n}\n\n";
}

/// The signature's constants in the header's namespace.
void emitConstants(llvm::raw_ostream &os, StringRef kind,
                   const std::vector<SignatureEntry> &entries,
                   const std::vector<std::string> &ids) {
  for (auto [i, e] : llvm::enumerate(entries)) {
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
       << "constexpr int64_t k" << kind << "Numel_" << ids[i] << " = " << numel
       << ";\n"
       << "constexpr int k" << kind << "DType_" << ids[i] << " = "
       << static_cast<int>(e.dtype) << "; // " << dtypeName(e.dtype) << "\n\n";
  }
}

} // namespace

std::string emitModelHeader(const MemoryPlan &plan, GraphCodegen &codegen) {
  const PackageNames &names = codegen.names();
  WrapperAbi abi = codegen.wrapperAbi();
  std::string text;
  llvm::raw_string_ostream os(text);
  std::string ns = names.name;
  std::string guard = "KILN_PACKAGE_" + StringRef(ns).upper() + "_H";

  os << "//===- " << names.header() << " - Kiln package '" << ns
     << "' (generated) -------*- C++ -*-===//\n"
     << "//\n"
     << "// Generated by `kiln compile --target " << codegen.targetName()
     << "`; do not edit. The API of " << names.library() << ":\n"
     << "// every symbol it exports (extern \"C\", prefixed '" << ns
     << "_'): the model's entry\n"
     << "// points and each generated kernel on its own; and, in namespace "
     << ns << ",\n"
     << "// the static signature (constexpr shapes), run() over typed "
        "Inputs/Outputs\n"
     << "// structs and helpers that create a model. f16/bf16 buffers are "
        "uint16_t bits.\n"
     << "//\n"
     << "//===-------------------------------------------------------------"
        "---------===//\n\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include \"kiln/runtime/ModelABI.h\"\n"
     << abi.headerIncludes << "\n#include <cstddef>\n"
     << "#include <cstdint>\n\n"
     << "extern \"C\" {\n\n";
  // A package compiled for ranges of sizes has -1 dims in its signature.
  bool sized = llvm::any_of(plan.inputs, [](const SignatureEntry &e) {
    return !e.symbolicDims.empty();
  });
  emitEntryPoints(os, names, abi, sized);
  emitKernelDeclarations(os, plan, codegen);
  os << "} // extern \"C\"\n\nnamespace " << ns << " {\n\n";

  std::vector<std::string> inNames = fieldNames(plan.inputs);
  std::vector<std::string> outNames = fieldNames(plan.outputs);
  emitConstants(os, "Input", plan.inputs, inNames);
  emitConstants(os, "Output", plan.outputs, outNames);

  os << "constexpr int kNumInputs = " << plan.inputs.size() << ";\n"
     << "constexpr int kNumOutputs = " << plan.outputs.size() << ";\n"
     << "/// Weights, in the order " << names.symbol(abi.createEntry)
     << " takes them:\n";
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

  os << "/// Runs the model; `arena` holds kArenaBytes (64-byte aligned)"
     << (abi.stepParameter.empty()
             ? ""
             : "; all pointers\n/// are device pointers and the run is "
               "enqueued on `stream`")
     << ". Returns 0\n/// on success, else nonzero with a message in "
        "`err`.\n"
     << (sized ? "/// `sizes`: one per size symbol (" +
                     names.symbol("size_symbol_name") +
                     "), giving the inputs' and\n/// outputs' -1 dims.\n"
               : std::string())
     << (sized ? "inline int run(kiln_model *model, const int64_t *sizes, "
                 "const Inputs &in,\n               const Outputs &out, "
                 "void *arena"
               : "inline int run(kiln_model *model, const Inputs &in, "
                 "const Outputs &out,\n               void *arena")
     << abi.stepParameter << ", char *err = nullptr, size_t errlen = 0) {\n"
     << "  const void *inputs[] = {";
  for (size_t i = 0; i < inNames.size(); ++i)
    os << "in." << inNames[i] << ", ";
  os << (inNames.empty() ? "nullptr" : "") << "};\n  void *outputs[] = {";
  for (size_t i = 0; i < outNames.size(); ++i)
    os << "out." << outNames[i] << ", ";
  os << (outNames.empty() ? "nullptr" : "") << "};\n"
     << "  return " << names.symbol(sized ? "run_sized" : abi.runEntry)
     << "(model, " << (sized ? "sizes, " : "")
     << "inputs, outputs, arena" << abi.stepArgument
     << ", err, errlen);\n}\n\n"
     << abi.headerHelpers << "} // namespace " << ns << "\n\n#endif // "
     << guard << "\n";
  return text;
}

} // namespace kiln
