//===- MemoryPlanner.h - Where each value of a compiled graph lives -*- C++
//-*-//
//
// This file declares the memory planner of the CPU compile path. Given a
// graph function after fusion (top-level ops: kiln.constant, kiln.fusion,
// library/fallback kiln ops, func.return), it decides where every value
// lives at run time:
//   * runtime inputs in the caller's input buffers;
//   * weight arguments and top-level constants in the weight table bound by
//     kiln_model_create (every constant is a "weight" in ABI terms);
//   * graph outputs computed by a top-level op in the caller's output buffer
//     (the first output naming the value; a repeated one is copied), and so
//     is the operand of an output that is a kiln.alias view of a value
//     computed only for it;
//   * results of steps tagged kiln.load_time (run once, when the model is
//     created) in memory the model owns, 256-byte aligned;
//   * every other computed value in one arena per graph, at a 64-byte
//     aligned offset, reusing space between values whose lifetimes (index
//     of the defining op to index of the last user, in program order) do not
//     overlap (greedy best-fit, largest buffers first); a kernel tagged
//     kiln.in_place stores that result in its dying operand's buffer;
//   * at the arena's end, the largest workspace a library call asks for
//     (kiln.library_call's `workspace`; calls run one at a time);
//   * arena values (kArenaValueAttr, passes/LoweringPasses.h): values
//     handed from one graph to the next in the scratch arena the caller
//     shares between them (a training package's saved activations, from
//     @forward to @backward). An argument lives in the arena from the start
//     to its last use, a result from its definition to the end; either is
//     placed by the planner (unit attribute) or pinned at the offset the
//     other graph chose (integer attribute). They are not in the signature.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CODEGEN_MEMORYPLANNER_H
#define KILN_CODEGEN_MEMORYPLANNER_H

#include "kiln/runtime/DType.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/ADT/DenseMap.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln {

/// Alignment of arena offsets and of weights in weights.bin.
constexpr int64_t kBufferAlignment = 64;

/// Rounds `bytes` up to a multiple of kBufferAlignment.
int64_t alignBuffer(int64_t bytes);

/// One value of the model's signature (input, output or weight).
struct SignatureEntry {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t bytes = 0;
  /// In a package compiled for a range of sizes: each dim's SymbolicDim
  /// text ("" where static; `shape` and `bytes` are then the bound's), or
  /// empty when every dim is static (codegen/SymbolicShapes.h).
  std::vector<std::string> symbolicDims;
  /// The value in the graph (for a weight: a block argument or the result of
  /// a top-level kiln.constant).
  mlir::Value value;
  /// Weights only: the defining kiln.constant, or null for a weight argument.
  mlir::Operation *constantOp = nullptr;
  /// The offset of a constant's bytes in weights.bin (64-byte aligned, in
  /// weight order); -1: not stored (an argument, a fill: FillWeights.h).
  int64_t fileOffset = -1;
};

/// Where a value lives at run time.
enum class BufferKind {
  Input,  ///< the caller's input buffer `index`.
  Weight, ///< weight `index` (bound by kiln_model_create).
  Arena,  ///< the arena at `offset`.
  Output,   ///< the caller's output buffer `index`.
  Prepared, ///< the model's prepared memory at `offset` (load-time steps).
  None,     ///< never stored: an unused result of a reference step.
};

/// The location of one value.
struct BufferLocation {
  BufferKind kind = BufferKind::None;
  int index = -1;
  int64_t offset = 0;
  int64_t bytes = 0;
};

/// One arena buffer: a value with its slot and lifetime.
struct ArenaBuffer {
  mlir::Value value;
  std::string name; ///< "%k3_layer_norm#0", "%matmul@5#0": for comments.
  int64_t offset = 0;
  int64_t bytes = 0;
  int first = 0; ///< index of the defining top-level op.
  int last = 0;  ///< index of the last top-level op reading it.
  /// Results of kernels written over this buffer in place (kiln.in_place),
  /// each when the previous value dies.
  std::vector<mlir::Value> inPlace;
  /// When >= 0: the offset the buffer must have (an arena value pinned by
  /// the graph it is handed from or to).
  int64_t pinnedOffset = -1;
};

/// A value handed over in the arena (kArenaValueAttr).
struct ArenaValue {
  SignatureEntry entry;
  bool isArgument = false;
  int64_t offset = 0;
  /// Results only: the value lives elsewhere (an input, a weight, a view,
  /// another output), so the end of the graph copies it to `offset`.
  bool copied = false;
};

/// What the end of the graph does with return operand i: write output
/// `output` (an index into MemoryPlan::outputs) or arena value
/// `arenaValue` (an index into MemoryPlan::arenaValues).
struct ReturnSlot {
  int output = -1;
  int arenaValue = -1;
};

/// The memory plan of one graph.
struct MemoryPlan {
  std::vector<SignatureEntry> inputs;
  std::vector<SignatureEntry> outputs;
  /// Values handed over in the arena, arguments then results.
  std::vector<ArenaValue> arenaValues;
  /// One per return operand.
  std::vector<ReturnSlot> returns;
  /// ABI weight order: weight arguments (in argument order), then top-level
  /// constants (in program order).
  std::vector<SignatureEntry> weights;
  /// The location of every value defined at the top level of the graph
  /// (arguments and op results).
  llvm::DenseMap<mlir::Value, BufferLocation> locations;
  /// Arena buffers, in the order of their defining ops.
  std::vector<ArenaBuffer> buffers;
  /// Peak arena size in bytes (a multiple of kBufferAlignment), the library
  /// workspace included.
  int64_t arenaBytes = 0;
  /// The arena bytes lent to library calls as their workspace (cuBLASLt's),
  /// at libraryWorkspaceOffset; 0 when none is reserved.
  int64_t libraryWorkspaceOffset = 0, libraryWorkspaceBytes = 0;
  /// Bytes of the memory that load-time steps write (the model owns it).
  int64_t preparedBytes = 0;
  /// Size of weights.bin (the constants, each 64-byte aligned).
  int64_t weightFileBytes = 0;
  /// The top-level ops in program order (constants and the return
  /// included); `first`/`last` index this list.
  std::vector<mlir::Operation *> ops;

  /// The location of `v`; asserts that it is planned.
  const BufferLocation &at(mlir::Value v) const;
};

/// The ONNX node names recorded in a location (NameLoc names, also inside
/// FusedLocs), in order, without duplicates.
std::vector<std::string> sourceNodeNames(mlir::Location loc);

/// The ONNX node names of an op and, for a region op, of every op inside.
std::vector<std::string> sourceNodeNames(mlir::Operation *op);

/// Bytes of a statically shaped tensor type; -1 when the type is not a
/// ranked tensor with static shape and a supported element type.
int64_t staticTensorBytes(mlir::Type type);

/// Plans the memory of `graph`. Fails (with a diagnostic naming the value and
/// what to do) when a type is not static or its element type unsupported.
mlir::FailureOr<MemoryPlan> planMemory(mlir::func::FuncOp graph);

/// Assigns offsets to buffers whose `bytes`, `first` and `last` are set
/// (pinned buffers at their offsets, then greedy best-fit by size over
/// lifetime intervals); returns the peak. Exposed for tests.
int64_t assignArenaOffsets(std::vector<ArenaBuffer> &buffers);

} // namespace kiln

#endif // KILN_CODEGEN_MEMORYPLANNER_H
