//===- OneDnnSteps.cpp - The wrapper code of oneDNN calls -----------------===//
//
// This file implements OneDnnSteps (OneDnnSteps.h): for each kiln.library_call
// "onednn.matmul", "onednn.conv" or "onednn.max_pool" (and the recurrences,
// "onednn.gru_recurrence" and "onednn.lstm_recurrence", whose run step fills
// a kiln::OneDnnRecurrenceArgs with their operands and results), the creation
// of its primitive from what the call says (its params, epilogue, transposes
// and operand types; a packed operand read through its pointer at create time,
// when weights and load-time results are in place) and its run step, one call
// of runOneDnn on the planned buffers: operands from the inputs, weights,
// prepared memory or arena, the result straight into its arena slot or output.
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/OneDnnSteps.h"
#include "codegen/WrapperSupport.h"
#include "passes/LibraryCalls.h"
#include "passes/LoweringPasses.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cassert>

using namespace mlir;

namespace kiln {

using namespace wrapper;

namespace {

int64_t intParam(LibraryCallOp call, StringRef name) {
  auto attr = call.getParams().getAs<IntegerAttr>(name);
  assert(attr && "kiln-lower-cpu sets every oneDNN integer param");
  return attr.getInt();
}

bool boolParam(LibraryCallOp call, StringRef name) {
  auto attr = call.getParams().getAs<BoolAttr>(name);
  return attr && attr.getValue();
}

ArrayRef<int64_t> listParam(LibraryCallOp call, StringRef name) {
  auto attr = call.getParams().getAs<DenseI64ArrayAttr>(name);
  assert(attr && "kiln-lower-cpu sets every oneDNN list param");
  return attr.asArrayRef();
}

std::string list(ArrayRef<int64_t> values) {
  std::string s = "{";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "}";
}

/// The epilogue's statements on `d.epilogue`.
std::string epilogueStatements(LibraryCallOp call) {
  StringRef e = call.getEpilogue();
  std::string s;
  if (call.getOperandByRole("bias"))
    s += "    d.epilogue.bias = true;\n";
  if (Value residual = call.getOperandByRole("residual")) {
    s += "    d.epilogue.residual = true;\n";
    // kiln-mark-in-place gave the result the residual's buffer.
    if (std::optional<std::pair<unsigned, unsigned>> pair = inPlacePair(call);
        pair && call->getOperand(pair->second) == residual)
      s += "    d.epilogue.residualInPlace = true;\n";
  }
  // The activation: what follows "bias_" and "residual_" ("gelu_tanh"
  // before "tanh").
  const char *act = e.ends_with("gelu_tanh")    ? "GeluTanh"
                    : e.ends_with("gelu_erf")   ? "GeluErf"
                    : e.ends_with("hard_swish") ? "HardSwish"
                    : e.ends_with("relu6")      ? "Relu6"
                    : e.ends_with("relu")       ? "Relu"
                    : e.ends_with("sigmoid")    ? "Sigmoid"
                    : e.ends_with("tanh")       ? "Tanh"
                                                : nullptr;
  if (act)
    s += std::string("    d.epilogue.activation = kiln::OneDnnActivation::") +
         act + ";\n";
  return s;
}

/// The matmul's descriptor statements; its packed operand's role in
/// `packedRole`.
std::string matmulDesc(LibraryCallOp call, StringRef &packedRole) {
  std::string s = "    kiln::OneDnnMatmulDesc d;\n";
  s += "    d.batch = " + std::to_string(intParam(call, "batch")) +
       ", d.m = " + std::to_string(intParam(call, "m")) +
       ", d.n = " + std::to_string(intParam(call, "n")) +
       ", d.k = " + std::to_string(intParam(call, "k")) + ";\n";
  s += "    d.strideA = " + std::to_string(intParam(call, "stride_a")) +
       ", d.strideB = " + std::to_string(intParam(call, "stride_b")) + ";\n";
  if (call.getTransposeA())
    s += "    d.transA = true;\n";
  if (call.getTransposeB())
    s += "    d.transB = true;\n";
  if (boolParam(call, "pack_b")) {
    s += "    d.packB = true;\n";
    packedRole = "b";
  }
  return s;
}

/// Whether a convolution or pooling call runs channels last.
bool isChannelsLast(LibraryCallOp call) {
  return call.getParams().getAs<StringAttr>("layout").getValue() == "nhwc";
}

/// The window statements convolution and pooling descriptors share: batch
/// and channels, in and out sizes, kernel, strides, dilations and leading
/// pads, for `desc` (the descriptor's type) of a call whose x and y read
/// channels first are `x` and `y`.
std::string windowDesc(LibraryCallOp call, StringRef desc, ArrayRef<int64_t> x,
                       ArrayRef<int64_t> y, ArrayRef<int64_t> kernel) {
  size_t nsp = x.size() - 2;
  std::string s = "    kiln::" + desc.str() + " d;\n";
  s += "    d.batch = " + std::to_string(x[0]) +
       ", d.channels = " + std::to_string(x[1]) + ";\n";
  s += "    d.inSize = " + list(x.drop_front(2)) +
       ";\n    d.outSize = " + list(y.drop_front(2)) +
       ";\n    d.kernel = " + list(kernel) +
       ";\n    d.strides = " + list(listParam(call, "strides")) +
       ";\n    d.dilations = " + list(listParam(call, "dilations")) +
       ";\n    d.padsBegin = " + list(listParam(call, "pads").take_front(nsp)) +
       ";\n";
  if (isChannelsLast(call))
    s += "    d.channelsLast = true;\n";
  return s;
}

/// The convolution's descriptor statements.
std::string convDesc(LibraryCallOp call, StringRef &packedRole) {
  bool channelsLast = isChannelsLast(call);
  auto wLayout = call.getParams().getAs<StringAttr>("w_layout");
  bool wFirst = channelsLast && wLayout && wLayout.getValue() == "oihw";
  SmallVector<int64_t> x = channelsFirstShape(
                           call.getOperandByRole("x").getType(), channelsLast),
                       y = channelsFirstShape(call->getResult(0).getType(),
                                              channelsLast),
                       w = channelsFirstShape(
                           call.getOperandByRole("w").getType(),
                           channelsLast && !wFirst);
  size_t nsp = x.size() - 2;
  std::string s =
      windowDesc(call, "OneDnnConvDesc", x, y, ArrayRef(w).drop_front(2));
  s += "    d.outChannels = " + std::to_string(y[1]) +
       ", d.group = " + std::to_string(intParam(call, "group")) + ";\n";
  s += "    d.padsEnd = " + list(listParam(call, "pads").drop_front(nsp)) +
       ";\n";
  if (wFirst)
    s += "    d.weightsChannelsFirst = true;\n";
  if (boolParam(call, "pack_w")) {
    s += "    d.packWeights = true;\n";
    packedRole = "w";
  }
  if (auto a = call.getParams().getAs<StringAttr>("algorithm")) {
    if (a.getValue() == "winograd")
      s += "    d.winograd = true;\n";
    else if (a.getValue() == "panels")
      s += "    d.panels = true;\n";
  }
  return s;
}

/// The max pooling's descriptor statements.
std::string poolDesc(LibraryCallOp call) {
  bool channelsLast = isChannelsLast(call);
  return windowDesc(
      call, "OneDnnPoolDesc",
      channelsFirstShape(call.getOperandByRole("x").getType(), channelsLast),
      channelsFirstShape(call->getResult(0).getType(), channelsLast),
      listParam(call, "kernel_shape"));
}

/// The recurrence's descriptor statements.
std::string recurrenceDesc(LibraryCallOp call) {
  StringRef direction =
      call.getParams().getAs<StringAttr>("direction").getValue();
  bool lstm = call.getRoutine() == "lstm_recurrence";
  std::string s = "    kiln::OneDnnRecurrenceDesc d;\n";
  s += "    d.seq = " + std::to_string(intParam(call, "seq")) +
       ", d.batch = " + std::to_string(intParam(call, "batch")) +
       ", d.hidden = " + std::to_string(intParam(call, "hidden_size")) + ";\n";
  if (lstm)
    s += "    d.lstm = true;\n";
  if (direction == "bidirectional")
    s += "    d.directions = 2;\n";
  if (direction == "reverse")
    s += "    d.reverse = true;\n";
  float clip = call.getParams().getAs<FloatAttr>("clip").getValueAsDouble();
  if (clip > 0.f)
    s += "    d.clip = " + std::to_string(clip) + "f;\n";
  if (!lstm && intParam(call, "linear_before_reset") != 0)
    s += "    d.linearBeforeReset = true;\n";
  if (lstm && intParam(call, "input_forget") != 0)
    s += "    d.inputForget = true;\n";
  if (call.getOperandByRole("lengths"))
    s += "    d.hasLengths = true;\n";
  if (!boolParam(call, "pack_r"))
    s += "    d.packR = false;\n";
  return s;
}

} // namespace

std::string OneDnnSteps::createBlock(LibraryCallOp call, size_t index,
                                     const std::string &desc,
                                     const std::string &add, StringRef object) {
  std::string node = firstNode(call);
  return "  { // Step " + std::to_string(index) + ": " +
         call.getCallee().str() + ", ONNX node '" + commentSafe(node) + "'\n" +
         desc + "    kiln::Status s = " + object.str() + "." + add + ";\n" +
         "    if (!s)\n      return fail(err, errlen, std::string(\"node " +
         "'\") + " + quote(node) + " + \"': \" + s.message());\n  }\n";
}

OneDnnSteps::Primitive OneDnnSteps::placePrimitive(llvm::raw_ostream &os,
                                                   LibraryCallOp call,
                                                   size_t index,
                                                   const std::string &desc,
                                                   const std::string &add) {
  if (!call->hasAttr(kLoadTimeAttr)) {
    Primitive primitive{count_++, /*once=*/false};
    creates_ += createBlock(call, index, desc, add, primitive.object());
    return primitive;
  }
  // A load-time step runs in prepareWeights, before the model's primitives
  // are created, and only once.
  Primitive primitive{0, /*once=*/true};
  std::string block = createBlock(call, index, desc, add, primitive.object());
  os << "  { // Step " << index
     << " runs once, at load: its primitive is made here and not kept\n"
     << "    kiln::OneDnnPrimitives once;\n";
  for (StringRef line : llvm::split(StringRef(block).rtrim('\n'), '\n'))
    os << "  " << line << "\n";
  return primitive;
}

void OneDnnSteps::printRun(llvm::raw_ostream &os, const Primitive &primitive,
                           StringRef run) {
  if (!primitive.once) {
    os << run;
    return;
  }
  for (StringRef line : llvm::split(run.rtrim('\n'), '\n'))
    os << "  " << line << "\n";
  os << "  }\n";
}

void OneDnnSteps::emitRecurrenceStep(llvm::raw_ostream &os, LibraryCallOp call,
                                     size_t index, const BufferNames &buffers) {
  // Packed recurrence weights are read once, at create time.
  bool packed = boolParam(call, "pack_r");
  std::string r = "nullptr";
  if (packed) {
    r = buffers.pointer(call.getOperandByRole("r"));
    assert(StringRef(r).starts_with("m->weights") ||
           StringRef(r).starts_with("at(m->prepared"));
  }
  Primitive primitive = placePrimitive(os, call, index, recurrenceDesc(call),
                                       "addRecurrence(d, " + r + ")");
  std::string run;
  llvm::raw_string_ostream step(run);
  bool lstm = call.getRoutine() == "lstm_recurrence";
  std::string node = firstNode(call);
  step << "  // Step " << index << ": " << call.getCallee()
       << " (library), ONNX node '" << commentSafe(node) << "'\n";
  step << "  {\n    kiln::OneDnnRecurrenceArgs a;\n";
  auto operand = [&](StringRef role, StringRef field, StringRef type) {
    if (Value v = call.getOperandByRole(role))
      step << "    a." << field << " = static_cast<const " << type << " *>("
           << buffers.pointer(v) << "); // " << buffers.describe(v) << "\n";
  };
  operand("xw", "xw", "float");
  if (!packed)
    operand("r", "r", "float");
  operand(lstm ? "p" : "rb", "bias", "float");
  operand("h0", "h0", "float");
  operand("c0", "c0", "float");
  operand("lengths", "lengths", "int32_t");
  static const char *const fields[] = {"y", "yh", "yc"};
  for (auto [i, field] : llvm::enumerate(fields)) {
    if (i >= call->getNumResults() || !buffers.hasBuffer(call->getResult(i)))
      continue;
    Value v = call->getResult(i);
    step << "    a." << field << " = static_cast<float *>("
         << buffers.pointer(v) << "); // " << buffers.describe(v) << "\n";
  }
  step << "    kiln::Status s = " << primitive.object() << ".runRecurrence("
       << primitive.index << ", a);\n"
       << "    if (!s)\n      return fail(err, errlen, std::string(\"node '\") "
          "+ "
       << quote(node) << " + \"': \" + s.message());\n  }\n";
  printRun(os, primitive, run);
}

void OneDnnSteps::emitStep(llvm::raw_ostream &os, LibraryCallOp call,
                           size_t index, const BufferNames &buffers) {
  StringRef routine = call.getRoutine();
  if (routine == "gru_recurrence" || routine == "lstm_recurrence")
    return emitRecurrenceStep(os, call, index, buffers);
  bool isPanels = call.getCallee() == "cpu.panel_matmul";
  bool isMatmul = routine == "matmul" || isPanels,
       isPool = routine == "max_pool" || routine == "avg_pool";
  assert((isMatmul || isPool || routine == "conv") &&
         "kiln-lower-cpu makes onednn.matmul, conv, max_pool, avg_pool, the "
         "recurrences and cpu.panel_matmul only");
  std::string node = firstNode(call);
  StringRef packedRole;
  std::string desc = isMatmul ? matmulDesc(call, packedRole) +
                                    (isPanels ? "    d.panels = true;\n" : "")
                     : isPool ? poolDesc(call)
                              : convDesc(call, packedRole);
  StringRef xRole = isMatmul ? "a" : "x", wRole = isMatmul ? "b" : "w";
  // The packed operand is read once, at create time, where only weights and
  // prepared (load-time) buffers exist.
  std::string packed = "nullptr";
  if (!packedRole.empty()) {
    packed = buffers.pointer(call.getOperandByRole(packedRole));
    assert(StringRef(packed).starts_with("m->weights") ||
           StringRef(packed).starts_with("at(m->prepared"));
  }
  std::string add = isMatmul ? "addMatmul(d, " + packed + ")"
                    : routine == "max_pool" ? std::string("addMaxPool(d)")
                    : isPool ? "addAvgPool(d, " +
                                   std::string(intParam(call, "count_include_pad")
                                                   ? "true"
                                                   : "false") +
                                   ")"
                             : "addConv(d, " + packed + ")";
  Primitive primitive =
      placePrimitive(os, call, index, desc + epilogueStatements(call), add);
  auto pointer = [&](StringRef role) -> std::string {
    Value v = call.getOperandByRole(role);
    if (!v || role == packedRole)
      return "nullptr";
    return buffers.pointer(v);
  };
  std::string run;
  llvm::raw_string_ostream step(run);
  step << "  // Step " << index << ": " << call.getCallee() << " (library, "
       << "epilogue " << call.getEpilogue() << "), ONNX node '"
       << commentSafe(node) << "'\n";
  step << "  if (runOneDnn(" << primitive.object() << ", " << primitive.index
       << ", " << pointer(xRole) << ", " << pointer(wRole) << ", "
       << pointer("bias") << ", " << pointer("residual") << ", "
       << buffers.pointer(call->getResult(0)) << ", " << quote(node)
       << ", err, errlen)) // " << buffers.describe(call->getResult(0))
       << "\n    return 1;\n";
  printRun(os, primitive, run);
}

void OneDnnSteps::emitHelpers(llvm::raw_ostream &os) const {
  os << "namespace {\n\n"
        "/// Runs oneDNN primitive `index` of the model "
        "(kiln::OneDnnPrimitives)."
        "\nint runOneDnn(const kiln::OneDnnPrimitives &p, size_t index, "
        "const void *x,\n              const void *w, const void *bias, "
        "const void *residual, void *y,\n              const char *node, "
        "char *err, size_t errlen) {\n"
        "  kiln::Status s = p.run(index, x, w, bias, residual, y);\n"
        "  if (!s)\n    return fail(err, errlen, std::string(\"node '\") + "
        "node + \"': \" + s.message());\n  return 0;\n}\n\n";
  os << "/// Creates the model's oneDNN primitives, their constant operands "
        "packed (after\n/// prepareWeights: they may read prepared memory)."
        "\ntemplate <typename Model>\nint createOneDnnPrimitives(Model *m, "
        "char *err, size_t errlen) {\n  (void)m, (void)err, (void)errlen;\n"
     << creates_ << "  return 0;\n}\n\n} // namespace\n";
}

} // namespace kiln
