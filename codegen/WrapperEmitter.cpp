//===- WrapperEmitter.cpp - The generated host wrapper --------------------===//
//
// This file implements the emitter of wrapper.cpp (the package header is
// ModelHeaderEmitter.cpp's). The wrapper holds static signature tables, a
// kiln_model struct (the weight pointers, the prebuilt attributes of every
// reference step, the memory of load-time steps) and the entry points of the
// C ABI, each named with the package's prefix (<name>_create, <name>_run;
// codegen/PackageNames.h). The create entry binds the weights and runs the
// steps tagged kiln.load_time once; the run entry point executes the other
// steps in program order; every kernel is also exported on its own. How
// each step runs is in the IR (passes/LoweringPasses.h) and the target
// prints it (codegen/Target.h): this file decides nothing and has no target
// conditionals. Every step is commented with its ONNX
// nodes. Each step of a run sits between the calls of the profiler hooks
// that the set_profiler export installs for the calling thread
// (kiln_model_profiler, ModelABI.h), guarded by one branch on a pointer
// that is null unless a run is profiled.
//
//===----------------------------------------------------------------------===//

#include "codegen/WrapperEmitter.h"
#include "codegen/SymbolicShapes.h"
#include "codegen/Target.h"
#include "codegen/WrapperSupport.h"
#include "ir/KilnOps.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <set>

using namespace mlir;

namespace kiln {

using namespace wrapper;

/// The fixed part of wrapper.cpp after the includes: helpers used by steps.
static const char *kWrapperHelpers = R"cpp(
namespace {

/// The arena at a byte offset.
inline void *at(void *arena, size_t offset) {
  return static_cast<char *>(arena) + offset;
}

/// Writes `msg` into the caller's error buffer and returns 1.
int fail(char *err, size_t errlen, const std::string &msg) {
  if (err && errlen) {
    size_t n = msg.size() < errlen - 1 ? msg.size() : errlen - 1;
    std::memcpy(err, msg.data(), n);
    err[n] = '\0';
  }
  return 1;
}

/// A tensor viewing a contiguous buffer (no copy, not owned).
kiln::Tensor view(const void *data, kiln::DType dtype, kiln::Shape shape) {
  size_t bytes = kiln::numElements(shape) * kiln::dtypeSize(dtype);
  auto storage = kiln::Storage::wrap(const_cast<void *>(data), bytes,
                                     kiln::Device::CPU, nullptr);
  kiln::Shape strides = kiln::contiguousStrides(shape);
  return kiln::Tensor(std::move(storage), dtype, std::move(shape),
                      std::move(strides), 0);
}

/// A tensor attribute from its bytes.
kiln::Tensor tensorAttr(kiln::DType dtype, kiln::Shape shape,
                        const unsigned char *data, size_t bytes) {
  kiln::Tensor t = kiln::Tensor::empty(dtype, shape);
  if (bytes)
    std::memcpy(t.rawData(), data, bytes);
  return t;
}

/// Runs a reference kernel; a failure names the ONNX node.
int call(const char *op, const std::vector<kiln::Tensor> &in,
         const kiln::Attributes &attrs, std::vector<kiln::Tensor> &out,
         const char *node, char *err, size_t errlen) {
  kiln::Status status = kiln::Dispatcher::global().call(op, in, attrs, out);
  if (!status)
    return fail(err, errlen,
                std::string("node '") + node + "' (kiln." + op +
                    "): " + status.message());
  return 0;
}

/// Checks result `r` of a reference kernel against the static type the
/// compiler planned for.
int checkResult(const std::vector<kiln::Tensor> &out, size_t r,
                kiln::DType dtype, const kiln::Shape &shape, const char *node,
                char *err, size_t errlen) {
  if (r >= out.size() || !out[r].defined())
    return fail(err, errlen,
                std::string("node '") + node +
                    "': the reference kernel did not produce result " +
                    std::to_string(r));
  const kiln::Tensor &t = out[r];
  if (t.dtype() != dtype || t.shape() != shape)
    return fail(err, errlen,
                std::string("node '") + node + "': result " +
                    std::to_string(r) + " is " + t.typeString() +
                    " but the compiled graph expects " +
                    kiln::dtypeName(dtype) + kiln::shapeToString(shape) +
                    " (a shape inference mismatch: please report it)");
  return 0;
}

/// Copies result `r` of a reference kernel into its planned buffer after
/// checking it.
int store(const std::vector<kiln::Tensor> &out, size_t r, void *dst,
          kiln::DType dtype, const kiln::Shape &shape, const char *node,
          char *err, size_t errlen) {
  if (checkResult(out, r, dtype, shape, node, err, errlen))
    return 1;
  kiln::Tensor c = out[r].contiguous();
  if (c.nbytes())
    std::memcpy(dst, c.rawData(), c.nbytes());
  return 0;
}

} // namespace
)cpp";

/// Emits one signature table group (names, dtypes, ranks, shapes).
static void emitSignatureTables(llvm::raw_ostream &os, StringRef kind,
                                const std::vector<SignatureEntry> &entries) {
  size_t n = entries.size();
  os << "constexpr int kNum" << kind << "s = " << n << ";\n";
  os << "const char *const k" << kind << "Names[] = {";
  for (const auto &e : entries)
    os << quote(e.name) << ", ";
  os << (n ? "" : "nullptr") << "};\n";
  os << "const int k" << kind << "DTypes[] = {";
  for (const auto &e : entries)
    os << static_cast<int>(e.dtype) << ", ";
  os << (n ? "" : "0") << "};\n";
  os << "const int k" << kind << "Ranks[] = {";
  for (const auto &e : entries)
    os << e.shape.size() << ", ";
  os << (n ? "" : "0") << "};\n";
  for (auto [i, e] : llvm::enumerate(entries)) {
    // A dim that follows a size symbol is -1 (dynamic), named in the
    // comment.
    std::vector<int64_t> shape = e.shape;
    std::string dims;
    for (size_t d = 0; d < e.symbolicDims.size(); ++d) {
      if (!e.symbolicDims[d].empty())
        shape[d] = -1;
      dims += (d ? ", " : "[") +
              (e.symbolicDims[d].empty() ? std::to_string(e.shape[d])
                                         : e.symbolicDims[d]) +
              (d + 1 == e.symbolicDims.size() ? "]" : "");
    }
    os << "const int64_t k" << kind << "Shape" << i << "["
       << std::max<size_t>(shape.size(), 1)
       << "] = " << (shape.empty() ? std::string("{0}") : formatShape(shape))
       << "; // " << commentSafe(e.name) << ": "
       << (dims.empty() ? typeString(e.dtype, e.shape)
                        : std::string(dtypeName(e.dtype)) + dims)
       << "\n";
  }
  os << "const int64_t *const k" << kind << "Shapes[] = {";
  for (size_t i = 0; i < n; ++i)
    os << "k" << kind << "Shape" << i << ", ";
  os << (n ? "" : "nullptr") << "};\n\n";
}

/// Emits the extern "C" accessors of one signature group.
static void emitSignatureAccessors(llvm::raw_ostream &os,
                                   const PackageNames &names, StringRef kind,
                                   StringRef lower) {
  auto fn = [&](StringRef ret, StringRef what, StringRef table,
                StringRef dflt) {
    os << "KILN_EXPORT " << ret << " "
       << names.symbol((lower + "_" + what).str())
       << "(int i) {\n  return i >= 0 && i < kNum" << kind << "s ? k" << kind
       << table << "[i] : " << dflt << ";\n}\n";
  };
  fn("const char *", "name", "Names", "nullptr");
  fn("int", "dtype", "DTypes", "-1");
  fn("int", "rank", "Ranks", "-1");
  fn("const int64_t *", "shape", "Shapes", "nullptr");
}

namespace {

/// The steps of a graph, printed into the bodies of runGraph and
/// prepareWeights, and the attribute builders of its reference steps.
struct EmittedSteps {
  std::string run, prepare, attrs, globals;
  std::vector<std::string> attrBuilders;
  /// The kiln_model_step initializers of the run's steps (kSteps).
  std::vector<std::string> profiledSteps;
};

/// The profiler hooks around the run steps (not the load-time ones): the
/// step's entry in kSteps and the begin and end calls.
class StepHooks {
public:
  StepHooks(EmittedSteps &out, StringRef stream) : out_(out), stream_(stream) {}

  /// Before a step of the run: adds its kSteps entry and prints the begin
  /// call.
  void begin(llvm::raw_ostream &os, size_t index, StringRef kind,
             StringRef name, const std::vector<std::string> &nodes) {
    std::string joined;
    for (const std::string &node : nodes)
      joined += (joined.empty() ? "" : ", ") + node;
    current_ = out_.profiledSteps.size();
    out_.profiledSteps.push_back("{" + std::to_string(index) + ", " +
                                 quote(kind) + ", " + quote(name) + ", " +
                                 quote(joined) + "}");
    os << "  if (profiler)\n    profiler->begin(profiler->user, &kSteps["
       << current_ << "], " << stream_ << ");\n";
  }
  /// After it.
  void end(llvm::raw_ostream &os) {
    os << "  if (profiler)\n    profiler->end(profiler->user, &kSteps["
       << current_ << "], " << stream_ << ");\n";
  }

private:
  EmittedSteps &out_;
  std::string stream_;
  size_t current_ = 0;
};

/// Prints the steps of `plan.ops` in program order: load-time steps into
/// `prepare`, the others into `run`, between profiler hooks.
LogicalResult emitSteps(const MemoryPlan &plan, GraphCodegen &codegen,
                        const BufferNames &buffers, StringRef profilerStream,
                        EmittedSteps &out) {
  llvm::raw_string_ostream runSteps(out.run), prepareSteps(out.prepare),
      attrs(out.attrs), globals(out.globals);
  StepHooks hooks(out, profilerStream);
  for (size_t index = 0; index < plan.ops.size(); ++index) {
    // Not structured bindings: the lambdas below capture them (C++20).
    Operation *op = plan.ops[index];
    StepKind kind = classifyStep(op);
    bool loadTime = op->hasAttr(kLoadTimeAttr);
    llvm::raw_ostream &steps = loadTime ? prepareSteps : runSteps;
    // The hooks around a step of the run.
    auto begin = [&](StringRef kindName, StringRef name) {
      if (!loadTime)
        hooks.begin(steps, index, kindName, name, sourceNodeNames(op));
    };
    auto end = [&] {
      if (!loadTime)
        hooks.end(steps);
    };
    switch (kind) {
    case StepKind::Constant:
      break;
    case StepKind::Alias:
      steps << "  // step " << index << ": " << op->getName().stripDialect()
            << " of " << buffers.describe(op->getOperand(0))
            << ": the same bytes (an alias, no copy)\n";
      break;
    case StepKind::Return: {
      bool any = false;
      for (auto [v, slot] : llvm::zip(op->getOperands(), plan.returns)) {
        const BufferLocation &loc = plan.at(v);
        std::string destination, comment;
        // The value's bytes (a run-time size where it follows a symbol).
        std::string bytes = bytesExpr(valueType(v));
        if (slot.arenaValue >= 0) {
          const ArenaValue &handed = plan.arenaValues[slot.arenaValue];
          if (!handed.copied)
            continue;
          destination = "at(arena, " + std::to_string(handed.offset) + ")";
          comment = "arena value '" + commentSafe(handed.entry.name) + "'";
        } else {
          if (loc.kind == BufferKind::Output && loc.index == slot.output)
            continue;
          destination = "outputs[" + std::to_string(slot.output) + "]";
          comment = "output '" + commentSafe(plan.outputs[slot.output].name) +
                    "'";
        }
        if (!any)
          steps << "  // Outputs not written in place: copies.\n";
        any = true;
        if (!loadTime)
          hooks.begin(steps, index, "copy", "copy to " + comment, {});
        codegen.emitCopy(steps, destination, buffers.pointer(v), bytes,
                         comment + " <- " + buffers.describe(v));
        end();
      }
      break;
    }
    case StepKind::Kernel:
      begin("kernel", codegen.kernelName(op));
      codegen.emitKernelStep(steps, op, index, buffers);
      end();
      break;
    case StepKind::Library:
    case StepKind::Reference: {
      // A reference step reads the op's attributes at run time, and so does
      // a call of the runtime's own library kernels (its `params`).
      auto call = dyn_cast<LibraryCallOp>(op);
      int attrIndex = -1;
      if (call)
        begin("library", call.getCallee());
      else
        begin("reference", op->getName().getStringRef());
      if (call && call.getLibrary() != "runtime") {
        if (failed(codegen.emitLibraryCall(steps, call, index, attrIndex,
                                           buffers)))
          return failure();
        end();
        break;
      }
      attrIndex = static_cast<int>(out.attrBuilders.size());
      StringRef opName = op->getName().getStringRef();
      opName.consume_front("kiln.");
      std::string builder =
          "attrs" + std::to_string(attrIndex) + "_" + toIdentifier(opName);
      out.attrBuilders.push_back(builder);
      emitAttributeBuilder(op, builder, index, attrs, globals);
      if (!call)
        codegen.emitReferenceStep(steps, op, index, attrIndex, buffers);
      else if (failed(codegen.emitLibraryCall(steps, call, index, attrIndex,
                                              buffers)))
        return failure();
      end();
      break;
    }
    }
  }
  return success();
}

/// The step table of the profiler hooks and the thread's installed hooks.
void emitProfilerTables(llvm::raw_ostream &os,
                        const std::vector<std::string> &profiledSteps) {
  os << "/// The steps of a run, as the profiler hooks see them.\n"
     << "const kiln_model_step kSteps[] = {";
  for (const std::string &step : profiledSteps)
    os << "\n    " << step << ",";
  if (profiledSteps.empty())
    os << "{0, \"\", \"\", \"\"}";
  os << "};\n\n"
     << "/// The profiler hooks of the calling thread's runs (null: none).\n"
     << "thread_local const kiln_model_profiler *tProfiler = nullptr;\n\n";
}

/// The export that installs the profiler hooks: "<prefix>_set_profiler"
/// (kiln_model_set_profiler_fn, ModelABI.h). The one place that names it.
void emitProfilerExport(llvm::raw_ostream &os, StringRef symbolPrefix) {
  os << "\nKILN_EXPORT const kiln_model_profiler *" << symbolPrefix
     << "_set_profiler(\n    const kiln_model_profiler *profiler) {\n"
     << "  const kiln_model_profiler *previous = tProfiler;\n"
     << "  tProfiler = profiler;\n  return previous;\n}\n";
}

/// The banner and includes of wrapper.cpp.
void emitFileHead(llvm::raw_ostream &os, StringRef targetName,
                  GraphCodegen &codegen) {
  const PackageNames &names = codegen.names();
  os << "//===- wrapper.cpp - Kiln package '" << names.name
     << "' (generated) ---------------===//\n"
     << "//\n"
     << "// Generated by `kiln compile --target " << targetName
     << "`; do not edit. This file implements\n"
     << "// the C ABI of kiln/runtime/ModelABI.h for one graph, as "
     << names.library() << "\n"
     << "// exports it (every symbol prefixed '" << names.name << "_'; "
     << names.header() << " declares them): signature tables,\n"
     << "// " << names.symbol("create")
     << " (binds the weights, runs the load-time steps), the run\n"
     << "// entry point, which runs the steps in program order, and the "
        "kernels one by\n// one. Each step names its ONNX nodes.\n"
     << "//\n"
     << "//===-------------------------------------------------------------"
        "---------===//\n\n";
  os << "#include \"kiln/runtime/Attributes.h\"\n";
  codegen.emitIncludes(os);
  os << "#include \"kiln/runtime/Dispatcher.h\"\n"
     << "#include \"kiln/runtime/ModelABI.h\"\n"
     << "#include \"kiln/runtime/Tensor.h\"\n\n"
     << "#include <cstdint>\n#include <cstdlib>\n#include <cstring>\n"
        "#include <exception>\n"
     << "#include <limits>\n#include <memory>\n#include <string>\n"
        "#include <vector>\n\n"
     << "#define KILN_EXPORT extern \"C\" "
        "__attribute__((visibility(\"default\")))\n\n";
}

/// struct kiln_model and prepareWeights.
void emitModelStruct(llvm::raw_ostream &os, const MemoryPlan &plan,
                     const WrapperAbi &abi, const std::string &prepareText) {
  os << "/// A model handle: the bound weights, what the target binds, the\n"
     << "/// prebuilt attributes of the reference steps and the memory of\n"
     << "/// the load-time steps.\n"
     << "struct kiln_model {\n  std::vector<const void *> weights;\n"
     << abi.modelMembers << "  std::vector<kiln::Attributes> attrs;\n"
     << "  /// What prepareWeights computed from the weights ("
     << plan.preparedBytes << " bytes).\n"
     << "  void *prepared = nullptr;\n"
     << "  ~kiln_model() { " << abi.freePrepared << " }\n};\n\n";
  os << "namespace {\n\n"
     << "/// Bytes of the values computed once from the weights.\n"
     << "constexpr size_t kPreparedBytes = " << plan.preparedBytes << ";\n\n"
     << "/// The steps that read only weights, run once at creation.\n"
     << "int prepareWeights(const kiln_model *m" << abi.stepParameter
     << ", char *err, size_t errlen) {\n"
     << "  (void)m, (void)err, (void)errlen;\n"
     << (abi.stepParameter.empty() ? "" : "  (void)stream;\n") << prepareText
     << "  return 0;\n}\n\n} // namespace\n\n";
}

/// The signature accessors and the create/destroy entry points.
void emitCreate(llvm::raw_ostream &os, const PackageNames &names,
                const WrapperAbi &abi, StringRef targetName,
                const std::vector<std::string> &attrBuilders) {
  os << "KILN_EXPORT int " << names.symbol("abi_version") << "(void) {\n"
     << "  return KILN_MODEL_ABI_VERSION;\n}\n"
     << "KILN_EXPORT const char *" << names.symbol("target")
     << "(void) { return " << quote(targetName) << "; }\n"
     << "KILN_EXPORT int " << names.symbol("num_inputs")
     << "(void) { return kNumInputs; }\n"
     << "KILN_EXPORT int " << names.symbol("num_outputs")
     << "(void) { return kNumOutputs; }\n"
     << "KILN_EXPORT int " << names.symbol("num_weights")
     << "(void) { return kNumWeights; }\n";
  emitSignatureAccessors(os, names, "Input", "input");
  emitSignatureAccessors(os, names, "Output", "output");
  emitSignatureAccessors(os, names, "Weight", "weight");
  os << "KILN_EXPORT size_t " << names.symbol("arena_bytes")
     << "(void) { return kArenaBytes; }\n\n";

  std::string create = names.symbol(abi.createEntry);
  os << "KILN_EXPORT int " << create << "(const void *const *weights,\n"
     << abi.createParameters
     << "    kiln_model **out, char *err, size_t errlen) {\n"
     << "  if (!out)\n    return fail(err, errlen, \"" << create
     << ": out is null\");\n"
     << "  *out = nullptr;\n"
     << "  if (kNumWeights > 0 && !weights)\n"
     << "    return fail(err, errlen, \"" << create
     << ": weights is null\");\n"
     << abi.createChecks;
  os << "  try {\n    auto m = std::make_unique<kiln_model>();\n"
     << "    for (int i = 0; i < kNumWeights; ++i) {\n"
     << "      if (!weights[i]) {\n"
     << "        return fail(err, errlen, std::string(\"weight '\") + "
        "kWeightNames[i] +\n"
     << "                                         \"' is not bound (null "
        "pointer)\");\n      }\n"
     << "      m->weights.push_back(weights[i]);\n    }\n"
     << abi.createBindings;
  for (const std::string &builder : attrBuilders)
    os << "    m->attrs.push_back(" << builder << "());\n";
  os << abi.prepareWeights;
  os << "    *out = m.release();\n    return 0;\n"
     << "  } catch (const std::exception &e) {\n"
     << "    return fail(err, errlen, std::string(\"" << create
     << ": \") + e.what());\n"
     << "  } catch (...) {\n"
     << "    return fail(err, errlen, \"" << create
     << ": unknown exception\");\n  }\n}\n\n";
  os << "KILN_EXPORT void " << names.symbol("destroy")
     << "(kiln_model *model) { delete model; }\n\n";
}

/// The size symbols' table and accessors (<prefix>_num_size_symbols,
/// _size_symbol_name, _size_symbol_min, _size_symbol_max; none for a
/// package of static shapes).
void emitSizeSymbols(llvm::raw_ostream &os, const PackageNames &names,
                     const std::vector<SizeSymbol> &symbols) {
  os << "namespace {\n/// The size symbols and their ranges (a package "
        "compiled for ranges of\n/// sizes: "
     << names.symbol("run_sized") << " takes one size each).\n"
     << "constexpr int kNumSizeSymbols = " << symbols.size() << ";\n"
     << "const char *const kSizeSymbolNames[] = {";
  for (const SizeSymbol &s : symbols)
    os << quote(s.name) << ", ";
  os << (symbols.empty() ? "nullptr" : "") << "};\n"
     << "const int64_t kSizeSymbolMin[] = {";
  for (const SizeSymbol &s : symbols)
    os << s.min << ", ";
  os << (symbols.empty() ? "0" : "") << "};\n"
     << "const int64_t kSizeSymbolMax[] = {";
  for (const SizeSymbol &s : symbols)
    os << s.max << ", ";
  os << (symbols.empty() ? "0" : "") << "};\n} // namespace\n\n";
  os << "KILN_EXPORT int " << names.symbol("num_size_symbols")
     << "(void) { return kNumSizeSymbols; }\n"
     << "KILN_EXPORT const char *" << names.symbol("size_symbol_name")
     << "(int i) {\n  return i >= 0 && i < kNumSizeSymbols ? "
        "kSizeSymbolNames[i] : nullptr;\n}\n"
     << "KILN_EXPORT int64_t " << names.symbol("size_symbol_min")
     << "(int i) {\n  return i >= 0 && i < kNumSizeSymbols ? "
        "kSizeSymbolMin[i] : -1;\n}\n"
     << "KILN_EXPORT int64_t " << names.symbol("size_symbol_max")
     << "(int i) {\n  return i >= 0 && i < kNumSizeSymbols ? "
        "kSizeSymbolMax[i] : -1;\n}\n\n";
}

/// The guards of a run's sizes: each in its symbol's range, and each size
/// expression with a divisor a whole number.
std::string sizeGuards(const std::string &entry,
                       const std::vector<SizeSymbol> &symbols,
                       const std::set<std::string> &divisions) {
  std::string s;
  for (auto [i, sym] : llvm::enumerate(symbols))
    s += "  if (sizes[" + std::to_string(i) + "] < " + std::to_string(sym.min) +
         " || sizes[" + std::to_string(i) + "] > " + std::to_string(sym.max) +
         ")\n    return fail(err, errlen, \"" + entry + ": the size '" +
         sym.name + "' is \" + std::to_string(sizes[" + std::to_string(i) +
         "]) + \", outside the range " + std::to_string(sym.min) + ".." +
         std::to_string(sym.max) +
         " the package was compiled for (kiln compile --dim " + sym.name +
         "=LO..HI)\");\n";
  for (auto [i, sym] : llvm::enumerate(symbols))
    if (!divisions.empty())
      s += "  const int64_t " + sizeSymbolCName(sym.name) + " = sizes[" +
           std::to_string(i) + "];\n  (void)" + sizeSymbolCName(sym.name) +
           ";\n";
  for (const std::string &text : divisions) {
    SymbolicDim d = parseSizeExpr(text);
    SymbolicDim top = d, bottom;
    top.den = 1;
    bottom.num = d.den;
    top.factors.clear();
    for (const auto &[name, e] : d.factors)
      (e > 0 ? top : bottom).factors.push_back({name, e > 0 ? e : -e});
    s += "  if (" + top.cExpr() + " % " + bottom.cExpr() +
         " != 0)\n    return fail(err, errlen, \"" + entry +
         ": the sizes make " + text +
         " a fraction; the package assumes it is a whole number\");\n";
  }
  return s;
}

/// The symbolic sizes of the planned values that divide (need a guard).
std::set<std::string> sizeDivisions(const MemoryPlan &plan) {
  std::set<std::string> out;
  auto add = [&](mlir::Value v) {
    for (const std::string &text : symbolicDimsOf(v)) {
      if (text.empty())
        continue;
      SymbolicDim d = parseSizeExpr(text);
      if (d.den != 1 ||
          llvm::any_of(d.factors, [](const auto &f) { return f.second < 0; }))
        out.insert(text);
    }
  };
  for (Operation *op : plan.ops)
    for (mlir::Value r : op->getResults())
      if (isa<RankedTensorType>(r.getType()))
        add(r);
  for (const SignatureEntry &e : plan.inputs)
    add(e.value);
  return out;
}

/// runGraph and the run entry point (and, for a package compiled for
/// ranges of sizes, <prefix>_run_sized).
void emitRun(llvm::raw_ostream &os, const PackageNames &names,
             const WrapperAbi &abi, const std::string &stepsText,
             const std::vector<SizeSymbol> &symbols,
             const std::set<std::string> &divisions) {
  os << "namespace {\n\n/// The graph, in program order.\n"
     << "int runGraph(const kiln_model *m, const int64_t *sizes,\n"
     << "             const void *const *inputs, void *const *outputs, "
        "void *arena"
     << abi.stepParameter << ",\n             char *err, size_t errlen) {\n"
     << "  (void)m, (void)sizes, (void)inputs, (void)outputs, (void)arena, "
        "(void)err,\n      (void)errlen;\n"
     << (abi.stepParameter.empty() ? "" : "  (void)stream;\n");
  for (auto [i, s] : llvm::enumerate(symbols))
    os << "  const int64_t " << sizeSymbolCName(s.name) << " = sizes[" << i
       << "]; // '" << commentSafe(s.name) << "'\n";
  os << "  const kiln_model_profiler *profiler = tProfiler;\n"
     << "  (void)profiler;\n"
     << stepsText << "  return 0;\n}\n\n} // namespace\n\n";
  emitSizeSymbols(os, names, symbols);
  std::string run = names.symbol(abi.runEntry);
  std::string sized = names.symbol("run_sized");
  os << "KILN_EXPORT int " << run << "(kiln_model *model, const void *const "
     << "*inputs,\n    void *const *outputs, void *arena" << abi.stepParameter
     << ", char *err, size_t errlen) {\n";
  if (!symbols.empty()) {
    os << "  (void)model, (void)inputs, (void)outputs, (void)arena;\n"
       << (abi.stepParameter.empty() ? "" : "  (void)stream;\n")
       << "  return fail(err, errlen, \"" << run
       << ": the package is compiled for ranges of sizes; call " << sized
       << " with one size per size symbol\");\n}\n\n";
    os << "KILN_EXPORT int " << sized
       << "(kiln_model *model, const int64_t *sizes,\n    const void *const "
       << "*inputs, void *const *outputs, void *arena" << abi.stepParameter
       << ",\n    char *err, size_t errlen) {\n"
       << "  if (!sizes)\n    return fail(err, errlen, \"" << sized
       << ": sizes is null\");\n"
       << sizeGuards(sized, symbols, divisions);
    run = sized;
  }
  os << "  if (!model)\n    return fail(err, errlen, \"" << run
     << ": model is null\");\n"
     << "  if ((kNumInputs > 0 && !inputs) || (kNumOutputs > 0 && !outputs) "
        "||\n      (kArenaBytes > 0 && !arena))\n"
     << "    return fail(err, errlen, \"" << run
     << ": inputs, outputs or arena is null\");\n"
     << "  try {\n"
     << "    return runGraph(model, " << (symbols.empty() ? "nullptr" : "sizes")
     << ", inputs, outputs, arena" << abi.stepArgument << ", err, errlen);\n"
     << "  } catch (const std::exception &e) {\n"
     << "    return fail(err, errlen, std::string(\"" << run
     << ": \") + e.what());\n"
     << "  } catch (...) {\n"
     << "    return fail(err, errlen, \"" << run
     << ": unknown exception\");\n  }\n}\n";
  emitProfilerExport(os, names.name);
  os << abi.extraExports;
}

/// The kernels exported one by one: each step's kernel as its target
/// exports it (a forwarder on the CPU, a launcher on CUDA).
void emitKernelExports(llvm::raw_ostream &os, const MemoryPlan &plan,
                       GraphCodegen &codegen, const BufferNames &buffers) {
  bool any = false;
  for (Operation *op : plan.ops) {
    if (classifyStep(op) != StepKind::Kernel)
      continue;
    if (!any)
      os << "// The kernels, one by one (declared in "
         << codegen.names().header() << ").\n\n";
    any = true;
    KernelEntryPoint entry = codegen.kernelEntryPoint(op, buffers);
    os << "// " << entry.doc.front() << "\nKILN_EXPORT " << entry.returnType
       << " " << entry.symbol << "(";
    for (auto [i, p] : llvm::enumerate(entry.parameters))
      os << (i ? ",\n    " : "\n    ") << p.declaration;
    os << ") {\n" << entry.body << "}\n\n";
  }
}

} // namespace

FailureOr<std::string> emitWrapper(func::FuncOp graph, const MemoryPlan &plan,
                                   GraphCodegen &codegen) {
  BufferNames buffers(plan);
  EmittedSteps steps;
  WrapperAbi abi = codegen.wrapperAbi();
  if (failed(emitSteps(plan, codegen, buffers, abi.profilerStream, steps)))
    return failure();
  StringRef targetName = codegen.targetName();

  std::string text;
  llvm::raw_string_ostream os(text);
  emitFileHead(os, targetName, codegen);
  codegen.emitDeclarations(os);
  os << kWrapperHelpers;
  codegen.emitHelpers(os);
  os << "\n";

  os << "namespace {\n\n// The signature.\n";
  emitSignatureTables(os, "Input", plan.inputs);
  emitSignatureTables(os, "Output", plan.outputs);
  emitSignatureTables(os, "Weight", plan.weights);
  os << "/// The planned arena (" << plan.buffers.size() << " buffers).\n"
     << "constexpr size_t kArenaBytes = " << plan.arenaBytes << ";\n\n";
  codegen.emitTables(os);
  os << steps.globals << (steps.globals.empty() ? "" : "\n");
  emitProfilerTables(os, steps.profiledSteps);
  os << steps.attrs;
  os << "} // namespace\n\n";

  // The kernels' exports first: the steps of CUDA packages call them.
  emitKernelExports(os, plan, codegen, buffers);
  emitModelStruct(os, plan, abi, steps.prepare);
  emitCreate(os, codegen.names(), abi, targetName, steps.attrBuilders);
  emitRun(os, codegen.names(), abi, steps.run, sizeSymbolsOf(graph),
          sizeDivisions(plan));
  return text;
}

} // namespace kiln
