//===- Executor.cpp - The reference executor of a Program -----------------===//
//
// This file implements runProgram: it checks the caller's inputs and weights
// against the Program's signature (names, dtypes, static dimensions, named
// dynamic dimensions agreeing across inputs), binds constants, runs each node
// through the global Dispatcher in order, releases every value after its
// last use, and returns the outputs in signature order. A malformed Program
// (a value used before it is defined, an id out of range) is an error, not a
// crash.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Executor.h"

#include "SignatureCheck.h"
#include "kiln/runtime/Dispatcher.h"

#include <set>

namespace kiln {

namespace {

/// A named dynamic dimension's first binding, for agreement checks.
struct DimBinding {
  int64_t value;
  std::string where; ///< "input 'x' dim 0".
};

/// Checks one tensor against its signature; `kind` is "input" or "weight".
Status checkAgainstSignature(const ValueSignature &sig, const Tensor &t,
                             const char *kind,
                             std::map<std::string, DimBinding> &dims) {
  std::string prefix = strCat(kind, " '", sig.name, "'");
  if (!t.defined())
    return Status::error(strCat(prefix, ": no tensor given (expected ",
                                signatureTypeString(sig), ")"));
  if (t.device() != Device::CPU)
    return Status::error(strCat(prefix,
                                ": the reference executor runs on "
                                "the cpu but the tensor is on ",
                                deviceName(t.device())));
  bool match = t.dtype() == sig.dtype && t.rank() == (int64_t)sig.shape.size();
  for (size_t i = 0; match && i < sig.shape.size(); ++i)
    if (sig.shape[i] >= 0 && sig.shape[i] != t.dim(i))
      match = false;
  if (!match)
    return Status::error(strCat(prefix, ": expected ", signatureTypeString(sig),
                                " but got ", t.typeString()));
  for (size_t i = 0; i < sig.shape.size(); ++i) {
    if (sig.shape[i] >= 0 || i >= sig.dimNames.size() ||
        sig.dimNames[i].empty())
      continue;
    const std::string &name = sig.dimNames[i];
    std::string where = strCat(kind, " '", sig.name, "' dim ", i);
    auto it = dims.find(name);
    if (it == dims.end()) {
      dims[name] = DimBinding{t.dim(i), where};
      continue;
    }
    if (it->second.value != t.dim(i))
      return Status::error(strCat(
          prefix, ": dynamic dimension '", name, "' is ", t.dim(i), " (", where,
          ") but ", it->second.value, " (", it->second.where, ")"));
  }
  return Status::ok();
}

std::string nodeContext(const ProgramNode &node, size_t index) {
  std::string name =
      node.sourceName.empty() ? strCat("#", index) : node.sourceName;
  std::string src = node.sourceOp.empty() ? std::string("?") : node.sourceOp;
  return strCat("node '", name, "' (", src, ", kiln.", node.op, ")");
}

} // namespace

Expected<NamedTensors> runProgram(const Program &program,
                                  const NamedTensors &inputs,
                                  const NamedTensors &weights) {
  const int numValues = program.numValues;
  if (numValues < 0)
    return Status::error("malformed program: negative value count");
  std::vector<Tensor> values(numValues);
  auto validId = [&](int id) { return id >= 0 && id < numValues; };

  // Inputs and weights.
  KILN_RETURN_IF_ERROR(
      checkNames(program.inputs, inputs, "input", "program", false));
  std::map<std::string, DimBinding> dims;
  for (const auto &sig : program.inputs) {
    const Tensor *t = findNamed(inputs, sig.name);
    if (!t)
      return Status::error(strCat(
          "missing input '", sig.name, "' (expected ", signatureTypeString(sig),
          "; the program's inputs are ", joinNames(program.inputs), ")"));
    KILN_RETURN_IF_ERROR(checkAgainstSignature(sig, *t, "input", dims));
    if (!validId(sig.valueId))
      return Status::error(strCat("malformed program: input '", sig.name,
                                  "' has value id ", sig.valueId));
    values[sig.valueId] = *t;
  }
  for (const auto &sig : program.weights) {
    const Tensor *t = findNamed(weights, sig.name);
    if (!t)
      return Status::error(strCat("missing weight '", sig.name, "' (expected ",
                                  signatureTypeString(sig), ")"));
    std::map<std::string, DimBinding> weightDims = dims;
    KILN_RETURN_IF_ERROR(checkAgainstSignature(sig, *t, "weight", weightDims));
    if (!validId(sig.valueId))
      return Status::error(strCat("malformed program: weight '", sig.name,
                                  "' has value id ", sig.valueId));
    values[sig.valueId] = *t;
  }
  for (const auto &entry : program.constants) {
    if (!validId(entry.first))
      return Status::error(
          strCat("malformed program: constant has value id ", entry.first));
    if (!entry.second.defined())
      return Status::error(
          strCat("malformed program: constant %", entry.first, " is empty"));
    values[entry.first] = entry.second;
  }

  // Last use of each value: index of the last node reading it; outputs are
  // kept to the end.
  std::vector<int64_t> lastUse(numValues, -1);
  for (size_t n = 0; n < program.nodes.size(); ++n)
    for (int id : program.nodes[n].operands)
      if (validId(id))
        lastUse[id] = static_cast<int64_t>(n);
  for (const auto &sig : program.outputs)
    if (validId(sig.valueId))
      lastUse[sig.valueId] = INT64_MAX;

  Dispatcher &dispatcher = Dispatcher::global();
  std::vector<Tensor> operands;
  for (size_t n = 0; n < program.nodes.size(); ++n) {
    const ProgramNode &node = program.nodes[n];
    std::string context = nodeContext(node, n);
    if (node.op == "constant")
      return Status::error(strCat(context, ": malformed program: constants "
                                           "belong in Program::constants"));
    operands.clear();
    for (size_t i = 0; i < node.operands.size(); ++i) {
      int id = node.operands[i];
      if (!validId(id))
        return Status::error(strCat(context, ": malformed program: operand ", i,
                                    " has value id ", id));
      if (!values[id].defined())
        return Status::error(strCat(context, ": malformed program: operand ", i,
                                    " (value %", id,
                                    ") is used before it is defined"));
      operands.push_back(values[id]);
    }
    for (int id : node.results)
      if (!validId(id))
        return Status::error(
            strCat(context, ": malformed program: result has value id ", id));

    std::vector<Tensor> results(node.results.size());
    Status status = dispatcher.call(node.op, operands, node.attrs, results);
    if (!status)
      return status.withContext(context);
    if (results.size() != node.results.size())
      return Status::error(strCat(context, ": the kernel returned ",
                                  results.size(), " results, expected ",
                                  node.results.size()));
    for (size_t r = 0; r < results.size(); ++r) {
      if (!results[r].defined())
        return Status::error(strCat(context,
                                    ": the kernel did not produce result ", r,
                                    " of ", node.results.size()));
      values[node.results[r]] = std::move(results[r]);
    }
    operands.clear();
    // Release values whose last reader was this node.
    for (int id : node.operands)
      if (lastUse[id] == static_cast<int64_t>(n))
        values[id] = Tensor();
    // Results nobody reads are dropped at once.
    for (int id : node.results)
      if (lastUse[id] < static_cast<int64_t>(n))
        values[id] = Tensor();
  }

  NamedTensors outputs;
  outputs.reserve(program.outputs.size());
  for (const auto &sig : program.outputs) {
    if (!validId(sig.valueId) || !values[sig.valueId].defined())
      return Status::error(strCat("malformed program: output '", sig.name,
                                  "' (value %", sig.valueId,
                                  ") is never defined"));
    const Tensor &t = values[sig.valueId];
    if (t.dtype() != sig.dtype)
      return Status::error(strCat("output '", sig.name, "': expected ",
                                  signatureTypeString(sig), " but computed ",
                                  t.typeString()));
    outputs.emplace_back(sig.name, t);
  }
  return outputs;
}

} // namespace kiln
