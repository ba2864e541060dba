//===- DotWriter.cpp - kiln IR as a Graphviz picture ----------------------===//
//
// This file implements writeDot (DotWriter.h). Ops get node ids in walk
// order (n0, n1, ...). A value's edge starts at the op that defines it; for
// the block arguments of a region that mirrors its op's operands (kiln.fusion,
// kiln.eager) the edge starts at the operand's definer, and a region op's
// results come from its terminator's operands, so edges cross cluster borders
// straight to the ops that compute. Function arguments are ellipses.
//
//===----------------------------------------------------------------------===//

#include "DotWriter.h"

#include "ir/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"

#include "llvm/ADT/DenseMap.h"

#include <string>

using namespace mlir;

namespace kiln {

namespace {

/// `s` inside a double-quoted Graphviz string (newlines as `\n`).
std::string escaped(llvm::StringRef s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += "\\n"; // Graphviz's centred line break
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// The ONNX node an op comes from: the name in its location, if any.
std::string nodeName(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations()) {
      std::string n = nodeName(inner);
      if (!n.empty())
        return n;
    }
    return "";
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  return "";
}

std::string typeText(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto rt = dyn_cast<RankedTensorType>(t)) {
    for (int64_t d : rt.getShape())
      os << (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d))
         << "x";
    os << rt.getElementType();
  } else {
    os << t;
  }
  return s;
}

class DotWriter {
public:
  explicit DotWriter(llvm::raw_ostream &os) : os(os) {}

  void write(Operation *root) {
    os << "digraph kiln {\n"
       << "  rankdir=TB;\n"
       << "  node [shape=box, style=\"rounded,filled\", fillcolor=white, "
          "fontname=\"Helvetica\", fontsize=10];\n"
       << "  edge [fontname=\"Helvetica\", fontsize=8, color=gray40];\n";
    if (auto module = dyn_cast<ModuleOp>(root))
      for (Operation &op : module.getBody()->getOperations())
        writeOp(&op, "  ");
    else
      writeOp(root, "  ");
    for (const std::string &e : edges)
      os << e;
    os << "}\n";
  }

private:
  llvm::raw_ostream &os;
  /// The node each value's edges start from ("" for none: constants).
  llvm::DenseMap<Value, std::string> source;
  std::vector<std::string> edges;
  int nextNode = 0, nextCluster = 0;

  void writeOp(Operation *op, const std::string &indent) {
    if (isa<ConstantOp>(op))
      return;
    if (auto func = dyn_cast<func::FuncOp>(op)) {
      if (func.isExternal())
        return;
      openCluster("@" + func.getName().str(), "gray60", "white", indent);
      for (BlockArgument arg : func.getArguments()) {
        std::string id = "n" + std::to_string(nextNode++);
        std::string name = nodeName(arg.getLoc());
        if (auto attr = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                          "kiln.name"))
          name = attr.getValue().str();
        os << indent << "  " << id << " [shape=ellipse, label=\""
           << escaped(name + "\n" + typeText(arg.getType())) << "\"];\n";
        source[arg] = id;
      }
      writeRegionBody(func.getBody(), indent + "  ");
      os << indent << "}\n";
      return;
    }
    if (op->getNumRegions() > 0) {
      writeRegionOp(op, indent);
      return;
    }
    std::string id = "n" + std::to_string(nextNode++);
    std::string label = op->getName().getStringRef().str();
    std::string node = nodeName(op->getLoc());
    if (!node.empty())
      label += "\n" + node;
    for (Type t : op->getResultTypes())
      label += "\n" + typeText(t);
    bool terminator = op->hasTrait<mlir::OpTrait::IsTerminator>();
    os << indent << id << " [label=\"" << escaped(label) << "\""
       << (terminator ? ", shape=plaintext, style=\"\"" : "") << "];\n";
    addEdges(op, id);
    for (Value r : op->getResults())
      source[r] = id;
  }

  /// A fusion, a graph break or control flow: a cluster around its regions.
  void writeRegionOp(Operation *op, const std::string &indent) {
    std::string label, color = "gray60", fill = "white";
    if (auto fusion = dyn_cast<FusionOp>(op)) {
      label = "kernel " + fusion.getName().str() + " (" +
              fusion.getKind().str() + ")";
      color = "blue";
      fill = "aliceblue";
    } else if (auto eager = dyn_cast<EagerOp>(op)) {
      label = "graph break: " + eager.getReason().str();
      color = "red";
      fill = "mistyrose";
    } else {
      label = op->getName().getStringRef().str();
      std::string node = nodeName(op->getLoc());
      if (!node.empty())
        label += " " + node;
    }
    openCluster(label, color, fill, indent);
    bool mirrors = isa<FusionOp, EagerOp>(op);
    Operation *lastTerminator = nullptr;
    for (Region &region : op->getRegions())
      for (Block &block : region) {
        for (BlockArgument arg : block.getArguments())
          if (mirrors && arg.getArgNumber() < op->getNumOperands())
            source[arg] = source.lookup(op->getOperand(arg.getArgNumber()));
        for (Operation &inner : block.getOperations()) {
          if (mirrors && inner.hasTrait<mlir::OpTrait::IsTerminator>()) {
            lastTerminator = &inner;
            continue;
          }
          writeOp(&inner, indent + "  ");
        }
      }
    os << indent << "}\n";
    if (mirrors && lastTerminator &&
        lastTerminator->getNumOperands() == op->getNumResults()) {
      for (auto [r, v] :
           llvm::zip(op->getResults(), lastTerminator->getOperands()))
        source[r] = source.lookup(v);
      return;
    }
    // Control flow: its results come from the cluster as a whole; a node
    // stands for it.
    std::string id = "n" + std::to_string(nextNode++);
    os << indent << id << " [shape=point, label=\"\"];\n";
    addEdges(op, id);
    for (Value r : op->getResults())
      source[r] = id;
  }

  void writeRegionBody(Region &region, const std::string &indent) {
    for (Block &block : region)
      for (Operation &op : block.getOperations())
        writeOp(&op, indent);
  }

  void openCluster(const std::string &label, const std::string &color,
                   const std::string &fill, const std::string &indent) {
    os << indent << "subgraph cluster_" << nextCluster++ << " {\n"
       << indent << "  label=\"" << escaped(label) << "\"; color=" << color
       << "; style=\"rounded,filled\"; fillcolor=" << fill
       << "; fontname=\"Helvetica\"; fontsize=10;\n";
  }

  void addEdges(Operation *op, const std::string &id) {
    for (Value v : op->getOperands()) {
      std::string from = source.lookup(v);
      if (!from.empty())
        edges.push_back("  " + from + " -> " + id + ";\n");
    }
  }
};

} // namespace

void writeDot(Operation *root, llvm::raw_ostream &os) {
  DotWriter(os).write(root);
}

} // namespace kiln
