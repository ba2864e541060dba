//===- Program.h - A traced graph as the runtime sees it -------*- C++ -*-===//
//
// This file declares Program, the MLIR-free form of a traced kiln graph that
// the reference executor runs: values are numbered; each node names a kiln op
// (without the "kiln." prefix), its attributes, its operand and result value
// ids, and the ONNX node it came from. The compiler builds a Program from a
// kiln func.func; graph breaks later run through the same structure.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PROGRAM_H
#define KILN_RUNTIME_PROGRAM_H

#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/Tensor.h"

#include <map>
#include <string>
#include <vector>

namespace kiln {

/// Static description of a graph input or output. Dimensions < 0 are
/// dynamic; dimNames holds their names ("" when unnamed).
struct ValueSignature {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::vector<std::string> dimNames;
  int valueId = -1;
};

/// One op application.
struct ProgramNode {
  std::string op;            ///< kiln op name without prefix: "matmul".
  Attributes attrs;          ///< attributes by ODS name.
  std::vector<int> operands; ///< value ids.
  std::vector<int> results;  ///< value ids.
  std::string sourceName;    ///< ONNX node name, for messages.
  std::string sourceOp;      ///< ONNX op type, for messages.
};

/// A straight-line graph.
struct Program {
  int numValues = 0;
  std::vector<ValueSignature> inputs;  ///< runtime inputs, in order.
  std::vector<ValueSignature> weights; ///< parameters bound at load time.
  std::vector<ValueSignature> outputs;
  std::map<int, Tensor> constants; ///< value id -> constant tensor.
  std::vector<ProgramNode> nodes;
};

} // namespace kiln

#endif // KILN_RUNTIME_PROGRAM_H
