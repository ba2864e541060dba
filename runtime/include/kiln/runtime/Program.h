//===- Program.h - A traced graph as the runtime sees it -------*- C++ -*-===//
//
// This file declares Program, the MLIR-free form of a traced kiln graph that
// the reference executor runs: values are numbered; each node names a kiln op
// (without the "kiln." prefix), its attributes, its operand and result value
// ids, and the ONNX node it came from. The compiler builds a Program from a
// kiln func.func. A program with graph breaks (docs/graph-breaks.md) adds
// four structural nodes: "if" and "loop" (ONNX If and Loop, with regions),
// "eager" (a region of ops run on the reference runtime: a graph break) and
// "call" (a compiled graph, run by whoever runs the program: see
// ProgramHooks in Executor.h). All regions share the program's value ids, so
// a region reads values defined above it directly.
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
  /// The rank is only known at run time (an output of an If whose branches
  /// give it different ranks); `shape` is then empty and unchecked.
  bool anyRank = false;
};

struct ProgramNode;

/// A block of nodes inside a structural node: `arguments` are bound before
/// the nodes run (a loop body's iteration number, condition and carried
/// values; an eager region's operands), `results` are read after them (what
/// the region's kiln.yield returns).
struct ProgramRegion {
  std::vector<int> arguments;
  std::vector<ProgramNode> nodes;
  std::vector<int> results;
};

/// One op application, or a structural node:
///  - "if": operands {cond}; regions {then, else}; results = the taken
///    region's results.
///  - "loop": operands {max_trip_count, cond, initial...}; regions {body}
///    (ONNX Loop: body arguments {iteration, cond, carried...}, results
///    {cond, carried..., scan values...}); results {final carried...,
///    stacked scan outputs...}; attributes "scan_dtypes" (ints: the DType of
///    each scan output) and "scan_shapes" (ints: per scan output, the rank of
///    one iteration's value, then its sizes, -1 when dynamic), for loops
///    that run zero times.
///  - "eager": regions {region}; attributes "reason", "detail", "hint";
///    operands bound to the region's arguments.
///  - "call": attribute "graph" (int, an index into Program::graphs);
///    operands and results are the graph's inputs and outputs in order.
struct ProgramNode {
  std::string op;            ///< kiln op name without prefix: "matmul".
  Attributes attrs;          ///< attributes by ODS name.
  std::vector<int> operands; ///< value ids.
  std::vector<int> results;  ///< value ids.
  std::string sourceName;    ///< ONNX node name, for messages.
  std::string sourceOp;      ///< ONNX op type, for messages.
  std::vector<ProgramRegion> regions; ///< structural nodes only.
};

/// A graph, or a program of compiled graphs and the glue between them.
struct Program {
  int numValues = 0;
  std::vector<ValueSignature> inputs;  ///< runtime inputs, in order.
  std::vector<ValueSignature> weights; ///< parameters bound at load time.
  std::vector<ValueSignature> outputs;
  std::map<int, Tensor> constants; ///< value id -> constant tensor.
  std::vector<ProgramNode> nodes;
  /// Names of the compiled graphs "call" nodes run (package sub-folders).
  std::vector<std::string> graphs;
};

} // namespace kiln

#endif // KILN_RUNTIME_PROGRAM_H
