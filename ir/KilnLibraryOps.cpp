//===- KilnLibraryOps.cpp - Library calls (kiln.library_call) -------------===//
//
// This file implements the verifier of kiln.library_call: a callee of the
// form `<library>.<routine>`, one known role per operand and no role twice,
// a known epilogue whose operands are present, and transposes only on
// operands that exist. The ODS-generated definitions live in KilnOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "ir/KilnOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;

namespace kiln {

Value LibraryCallOp::getOperandByRole(StringRef role) {
  for (auto [value, name] : llvm::zip(getInputs(), getRoles()))
    if (cast<StringAttr>(name).getValue() == role)
      return value;
  return Value();
}

LogicalResult LibraryCallOp::verify() {
  auto [library, routine] = getCallee().split('.');
  if (library.empty() || routine.empty())
    return emitOpError("callee must be '<library>.<routine>', got '")
           << getCallee() << "'";
  if (getRoles().size() != getInputs().size())
    return emitOpError("has ") << getInputs().size() << " operands but "
                               << getRoles().size() << " roles";
  // Matmuls and convolutions, then the recurrences' (onednn.*_recurrence).
  static const char *const knownRoles[] = {
      "a", "b",  "bias", "residual", "x",  "w",      "xw",
      "r", "rb", "p",    "h0",       "c0", "lengths"};
  llvm::StringSet<> seen;
  for (Attribute attr : getRoles()) {
    StringRef role = cast<StringAttr>(attr).getValue();
    if (!llvm::is_contained(knownRoles, role))
      return emitOpError("unknown operand role '") << role << "'";
    if (!seen.insert(role).second)
      return emitOpError("operand role '") << role << "' appears twice";
  }
  // The epilogue's parts in order: [bias][_residual][_<activation>], or
  // "none".
  StringRef epilogue = getEpilogue(), rest = epilogue;
  bool bias = false, residual = false, known = epilogue == "none";
  if (epilogue.ends_with("_"))
    rest = "?";
  if (!known) {
    bias = rest.consume_front("bias");
    if (bias && !rest.empty() && !rest.consume_front("_"))
      rest = "?";
    residual = rest.consume_front("residual");
    if (residual && !rest.empty() && !rest.consume_front("_"))
      rest = "?";
    known = rest.empty()
                ? bias || residual
                : llvm::is_contained({"relu", "gelu_tanh", "gelu_erf",
                                      "sigmoid", "tanh", "hard_swish", "relu6"},
                                     rest);
  }
  if (!known)
    return emitOpError("unknown epilogue '") << epilogue << "'";
  if (bias != seen.contains("bias") || residual != seen.contains("residual"))
    return emitOpError("epilogue '")
           << epilogue << "' does not match its operand roles";
  if ((getTransposeA() && !seen.contains("a")) ||
      (getTransposeB() && !seen.contains("b")))
    return emitOpError("transposes an operand it does not have");
  if (getWorkspace() < 0)
    return emitOpError("workspace must not be negative");
  return success();
}

} // namespace kiln
