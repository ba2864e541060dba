//===- CudaPrinter.cpp - Kernel IR to CUDA --------------------------------===//
//
// This file implements the CUDA printer of the kernel IR. The thread mapping
// follows from the iteration domain:
//
//   * a parallel loop without inner loops (pointwise) is flattened and run
//     by a grid-stride loop, one element per thread per step; when every
//     access is contiguous (or constant) in the innermost dim and that dim
//     divides by the vector width (16 bytes of the widest element, at most 8
//     elements), each step handles a vector through kiln_vec loads/stores,
//     guarded by a run-time pointer alignment check that falls back to the
//     scalar loop;
//   * a parallel loop with reduce/serial inner loops (row reductions:
//     softmax, norms, plain reductions) maps a row (one kept index) to a
//     group of threads: a block for rows of at least kBlockRowMin elements,
//     a warp for shorter rows, one thread for rows of at most kThreadRowMax
//     elements, for column reductions and for structures the group mapping
//     does not cover (CudaRowMapping.cpp). When every access of the inner
//     loops is contiguous (or constant) in the innermost reduced dim and
//     that dim divides by V (16 bytes of the narrowest such element, at most
//     8), lane l of a group handles the runs of V elements starting at
//     (l + kG) * V, each read and written as one kiln_vec (behind a run-time
//     pointer alignment check); otherwise it handles the elements l, l + G,
//     l + 2G, ... Either way row caches (Kernel::caches) become small
//     per-thread arrays in registers and the input is read from global
//     memory once; group reductions use __shfl_xor_sync and, for blocks, a
//     static __shared__ array per accumulator.
//
// Reductions keep the C++ printer's semantics: f32 accumulators for
// f32/f16/bf16 sums of at most kMaxFloatSumCount terms and f64 otherwise and
// for products, wrapping u64 for integers, NaN-propagating max/min, means
// divided by the count. Scalar ops print through the shared expression
// printer.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaPrinterImpl.h"

#include "codegen/SymbolicShapes.h"
#include "passes/LoweringPasses.h"
#include "kiln/runtime/DType.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

namespace kiln {
namespace cudaprinter {

void CudaPrinter::decompose(const std::vector<int> &vars,
                            const std::string &lin, int64_t width) {
  // Strides are numbers until a run-time extent joins them (a package
  // compiled for a range of sizes; the vector width needs a static
  // innermost extent).
  int64_t stride = 1;
  std::string strideText;
  for (size_t i = vars.size(); i-- > 0;) {
    const LoopVar &v = k.vars[vars[i]];
    assert((width == 1 || i + 1 != vars.size() || v.symbolicExtent.empty()) &&
           "a vector width over a run-time extent");
    int64_t extent = v.extent;
    if (i + 1 == vars.size())
      extent /= width;
    std::string extentCode = v.symbolicExtent.empty() ? std::to_string(extent)
                                                      : extentText(vars[i]);
    std::string e = lin;
    if (!strideText.empty())
      e = "(" + e + " / (" + strideText + "))";
    else if (stride != 1)
      e = "(" + e + " / " + std::to_string(stride) + ")";
    if (i != 0)
      e = "(" + e + " % " + extentCode + ")";
    if (i + 1 == vars.size() && width > 1)
      e += " * " + std::to_string(width);
    // A loop variable may index no access (a broadcast dim).
    line("[[maybe_unused]] const " + it + " " + names[vars[i]] + " = " + e +
         ";");
    stride *= extent;
    if (!v.symbolicExtent.empty() || !strideText.empty())
      strideText = (strideText.empty() ? std::to_string(stride / extent)
                                       : strideText) +
                   " * " + extentCode;
  }
}

void CudaPrinter::printStmt(const Stmt &s, bool leaderStores) {
  auto cacheIndex = [&](const Stmt &st) {
    return distributed ? laneSlot() : st.index.str(names);
  };
  switch (s.kind) {
  case Stmt::Kind::Const:
    exprs[s.result] = printLiteral(k.temps[s.result], s.floatValue, s.intValue);
    break;
  case Stmt::Kind::Load: {
    ScalarType t = k.temps[s.result];
    std::string load = loadText(s);
    exprs[s.result] = "t" + std::to_string(s.result);
    auto saved = distributed && loopDepth > 0 ? rowLoads.find(load)
                                              : rowLoads.end();
    if (saved != rowLoads.end() && rowLoadsFilled.count(load)) {
      line("const " + computeCType(t) + " " + exprs[s.result] + " = " +
           saved->second + "[" + laneSlot() + "];");
      break;
    }
    // In a vectorized run, contiguous loads take the run's vector element.
    std::string value = load;
    auto run = runWidth > 1 ? runLoads.find(load) : runLoads.end();
    if (run != runLoads.end())
      value = std::string(isHalfType(t) ? "(float)" : "") + run->second +
              ".v[kiln_u]";
    line("const " + computeCType(t) + " " + exprs[s.result] + " = " + value +
         ";");
    if (saved != rowLoads.end()) {
      line(saved->second + "[" + laneSlot() + "] = " + exprs[s.result] + ";");
      rowLoadsPending.insert(load);
    }
    break;
  }
  case Stmt::Kind::Compute: {
    std::vector<std::string> args;
    for (int a : s.args)
      args.push_back(exprs[a]);
    exprs[s.result] = "t" + std::to_string(s.result);
    printCompute(s, exprs[s.result], args);
    break;
  }
  case Stmt::Kind::CacheStore:
    line(k.caches[s.buffer].name + "[" + cacheIndex(s) + "] = " +
         exprs[s.value] + ";");
    break;
  case Stmt::Kind::CacheLoad:
    exprs[s.result] = "t" + std::to_string(s.result);
    line("const " + computeCType(k.temps[s.result]) + " " + exprs[s.result] +
         " = " + k.caches[s.buffer].name + "[" + cacheIndex(s) + "];");
    break;
  case Stmt::Kind::Store: {
    const Buffer &buf = k.buffers[s.buffer];
    std::string v = storedValue(s, exprs[s.value]);
    auto run = runWidth > 1 ? runStores.find(&s) : runStores.end();
    if (run != runStores.end()) {
      line(run->second + ".v[kiln_u] = " + v + ";");
      break;
    }
    std::string st = buf.name + "[" + s.index.str(names) + "] = " + v + ";";
    // Every lane of a row group holds the row's results: one writes them.
    line(leaderStores ? "if (kiln_lane == 0) " + st : st);
    break;
  }
  case Stmt::Kind::Loop:
    // Loops inside a mapped loop run in the thread (or its row group).
    if (loopDepth == 0)
      printLoopStmt(s);
    else
      printInner(s);
    break;
  }
}

std::string CudaPrinter::loadText(const Stmt &load) const {
  std::string text =
      k.buffers[load.buffer].name + "[" + load.index.str(names) + "]";
  return isHalfType(k.temps[load.result]) ? "(float)" + text : text;
}

void CudaPrinter::printLoopStmt(const Stmt &s) {
  if (s.loopKind == Stmt::LoopKind::Parallel) {
    if (hasInnerLoops(s))
      printRows(s);
    else
      printPointwise(s);
    return;
  }
  printInner(s);
}

//===----------------------------------------------------------------------===//
// Pointwise loops
//===----------------------------------------------------------------------===//

int64_t CudaPrinter::vectorWidth(const Stmt &loop) const {
  if (loop.vars.empty())
    return 1;
  int inner = loop.vars.back();
  if (!k.vars[inner].symbolicExtent.empty())
    return 1;
  int64_t extent = k.vars[inner].extent;
  int64_t widest = 0;
  std::vector<const Stmt *> contiguous;
  for (const Stmt &s : loop.body) {
    if (s.kind == Stmt::Kind::Loop || s.kind == Stmt::Kind::CacheStore ||
        s.kind == Stmt::Kind::CacheLoad)
      return 1;
    if (s.kind != Stmt::Kind::Load && s.kind != Stmt::Kind::Store)
      continue;
    std::optional<int64_t> coef = coefficientOf(s.index, inner);
    if (!coef || (*coef != 0 && *coef != 1) ||
        (s.kind == Stmt::Kind::Store && *coef != 1))
      return 1;
    if (*coef == 1) {
      contiguous.push_back(&s);
      widest = std::max(widest, scalarTypeBytes(k.buffers[s.buffer].type));
    }
  }
  if (contiguous.empty())
    return 1;
  for (int64_t w = std::min<int64_t>(8, 16 / widest); w >= 2; w /= 2) {
    bool ok = extent % w == 0;
    for (const Stmt *s : contiguous)
      ok = ok && alignedBesides(s->index, inner, w);
    if (ok)
      return w;
  }
  return 1;
}

void CudaPrinter::printVectorBody(const Stmt &loop, int64_t w) {
  int inner = loop.vars.back();
  auto lane = [&](int t, int64_t u) {
    return varying[t] ? exprs[t] + "_" + std::to_string(u) : exprs[t];
  };
  auto vecType = [&](const Buffer &b) {
    return "kiln_vec<" + storageCType(b.type) + ", " + std::to_string(w) + ">";
  };
  for (const Stmt &s : loop.body) {
    switch (s.kind) {
    case Stmt::Kind::Load: {
      if (*coefficientOf(s.index, inner) == 0) {
        varying[s.result] = false;
        printStmt(s, false);
        break;
      }
      const Buffer &b = k.buffers[s.buffer];
      ScalarType t = k.temps[s.result];
      std::string v = "v" + std::to_string(s.result);
      line("const " + vecType(b) + " " + v + " = *reinterpret_cast<const " +
           vecType(b) + " *>(" + b.name + " + (" + s.index.str(names) + "));");
      exprs[s.result] = "t" + std::to_string(s.result);
      varying[s.result] = true;
      for (int64_t u = 0; u < w; ++u)
        line("const " + computeCType(t) + " " + lane(s.result, u) + " = " +
             (isHalfType(t) ? "(float)" : "") + v + ".v[" + std::to_string(u) +
             "];");
      break;
    }
    case Stmt::Kind::Compute: {
      bool any = false;
      for (int a : s.args)
        any |= varying[a];
      varying[s.result] = any;
      if (!any) {
        printStmt(s, false);
        break;
      }
      exprs[s.result] = "t" + std::to_string(s.result);
      for (int64_t u = 0; u < w; ++u) {
        std::vector<std::string> args;
        for (int a : s.args)
          args.push_back(lane(a, u));
        printCompute(s, lane(s.result, u), args);
      }
      break;
    }
    case Stmt::Kind::Store: {
      const Buffer &b = k.buffers[s.buffer];
      open("{");
      line(vecType(b) + " kiln_s;");
      for (int64_t u = 0; u < w; ++u)
        line("kiln_s.v[" + std::to_string(u) +
             "] = " + storedValue(s, lane(s.value, u)) + ";");
      line("*reinterpret_cast<" + vecType(b) + " *>(" + b.name + " + (" +
           s.index.str(names) + ")) = kiln_s;");
      close();
      break;
    }
    default:
      varying[std::max(s.result, 0)] = false;
      printStmt(s, false);
      break;
    }
  }
}

void CudaPrinter::printPointwise(const Stmt &loop) {
  int64_t total = tripCount(loop.vars);
  std::string totalText = tripText(loop.vars);
  int64_t w = vectorWidth(loop);
  if (w == 1 && printTiledTranspose(loop))
    return;
  usesGlobalId = true;
  needBlocks((total / w + blockSize - 1) / blockSize,
             ceilDivText(w == 1 ? totalText : totalText + " / " +
                                                  std::to_string(w),
                         blockSize));
  open("{");
  auto scalarLoop = [&] {
    open("for (" + it + " kiln_i = kiln_gtid; kiln_i < " + totalText +
         "; kiln_i += kiln_nthreads) {");
    decompose(loop.vars, "kiln_i", 1);
    for (const Stmt &s : loop.body)
      printStmt(s, false);
    close();
  };
  if (w > 1) {
    // The vector path needs every vector-accessed pointer aligned to its
    // vector's size; the wrapper's buffers are, but check.
    std::string cond;
    std::vector<int> seen;
    for (const Stmt &s : loop.body) {
      if ((s.kind != Stmt::Kind::Load && s.kind != Stmt::Kind::Store) ||
          *coefficientOf(s.index, loop.vars.back()) != 1 ||
          std::find(seen.begin(), seen.end(), s.buffer) != seen.end())
        continue;
      seen.push_back(s.buffer);
      const Buffer &b = k.buffers[s.buffer];
      cond += std::string(cond.empty() ? "" : " && ") + "(unsigned long long)" +
              b.name + " % " + std::to_string(w * scalarTypeBytes(b.type)) +
              " == 0";
    }
    open("if (" + cond + ") {");
    open("for (" + it + " kiln_i = kiln_gtid; kiln_i < " +
         (anyRunTimeExtent(loop.vars) ? totalText + " / " + std::to_string(w)
                                      : std::to_string(total / w)) +
         "; kiln_i += kiln_nthreads) {");
    decompose(loop.vars, "kiln_i", w);
    printVectorBody(loop, w);
    close();
    --indent;
    open("} else {");
    scalarLoop();
    close();
    mappings.push_back("pointwise over " + std::to_string(total) +
                       " elements, " + std::to_string(w) +
                       " per thread and step (vector access)");
  } else {
    scalarLoop();
    mappings.push_back("pointwise over " + std::to_string(total) +
                       " elements, one per thread and step");
  }
  close();
}

std::string CudaPrinter::signature() const {
  std::string s = "extern \"C\" __global__ void __launch_bounds__(" +
                  std::to_string(blockSize) + ")\n" + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const Buffer &b = k.buffers[i];
    // An output stored over an input (in place) aliases it.
    s += (i ? ", " : "") + std::string(b.isOutput ? "" : "const ") +
         storageCType(b.type) +
         (b.sharesWith >= 0 ? " *" : " *__restrict__ ") + b.name;
  }
  // The run-time sizes, after the buffers (the prologue narrows them to the
  // index type).
  for (const std::string &size : k.sizeParams)
    s += (k.buffers.empty() ? "" : ", ") + std::string("int64_t ") + size +
         "_arg";
  return s + ")";
}

/// Single rounding of stored f16/bf16 results: a value computed in float,
/// rounded to bf16 (kiln_round_bf16) and then converted to the bf16 storage
/// type is rounded twice, with the same result as once (the second rounding
/// is exact); the store converts the float value instead, and the rounded
/// temp stays for the computations that read it (or is dropped by NVRTC).
/// One conversion instruction fewer per stored element: on an H100 the
/// hand-written bf16 ln_gelu kernel took 0.1437 -> 0.1420 ms
/// (bench/cuda_ln_gelu_variants.cu).
void CudaPrinter::collectStoredUnrounded(const Body &body) {
  std::set<int> computed;
  std::function<void(const Body &)> walk = [&](const Body &b) {
    for (const Stmt &s : b) {
      if (s.kind == Stmt::Kind::Compute)
        computed.insert(s.result);
      if (s.kind == Stmt::Kind::Loop)
        walk(s.body);
      ScalarType t = s.kind == Stmt::Kind::Store ? k.buffers[s.buffer].type
                                                 : ScalarType::F32;
      if (s.kind == Stmt::Kind::Store && computed.count(s.value) &&
          (t == ScalarType::F16 || t == ScalarType::BF16) &&
          k.temps[s.value] == t)
        storedUnrounded.insert(s.value);
    }
  };
  walk(body);
}

void CudaPrinter::printCompute(const Stmt &s, const std::string &name,
                               const std::vector<std::string> &args) {
  std::vector<ScalarType> argTypes;
  for (int a : s.args)
    argTypes.push_back(k.temps[a]);
  ScalarType t = k.temps[s.result];
  std::string value = printScalarOpUnrounded(*s.op, t, argTypes, args, s.attrs);
  if (storedUnrounded.count(s.result)) {
    line("const float " + name + "_x = " + value + ";");
    value = name + "_x";
  }
  line("const " + computeCType(t) + " " + name + " = " + roundTo(t, value) +
       ";");
}

std::string CudaPrinter::storedValue(const Stmt &s,
                                     const std::string &name) const {
  const Buffer &buf = k.buffers[s.buffer];
  if (storedUnrounded.count(s.value) && k.temps[s.value] == buf.type)
    return storageCType(buf.type) + "(" + name + "_x)";
  if (isHalfType(buf.type))
    return storageCType(buf.type) + "(" + name + ")";
  if (k.temps[s.value] != buf.type)
    return "(" + computeCType(buf.type) + ")" + name;
  return name;
}

CudaKernel CudaPrinter::print() {
  // 32-bit index arithmetic when every index stays far below 2^31.
  int64_t domain = 1;
  for (const LoopVar &v : k.vars)
    domain = std::min<int64_t>(domain * v.extent, int64_t(1) << 40);
  int64_t largest = domain;
  for (const Buffer &b : k.buffers)
    largest = std::max(largest, b.numElements());
  it = largest < (int64_t(1) << 30) ? "int" : "int64_t";
  collectStoredUnrounded(k.body);

  // The block size: the first row loop's mapping decides (a block per row:
  // its group size); otherwise whole warps, up to kDefaultBlock threads,
  // few enough that the grid has kMinBlocks blocks when the work allows.
  int numNests = 0;
  int64_t threads = 1;
  const Stmt *firstRows = nullptr;
  for (const Stmt &s : k.body)
    if (s.kind == Stmt::Kind::Loop && s.loopKind == Stmt::LoopKind::Parallel) {
      ++numNests;
      if (!firstRows && hasInnerLoops(s))
        firstRows = &s;
      if (!hasInnerLoops(s))
        threads = std::max(threads, tripCount(s.vars) / vectorWidth(s));
    }
  auto blockFor = [](int64_t threads) {
    int64_t perBlock = (threads + kMinBlocks - 1) / kMinBlocks;
    return static_cast<unsigned>(std::clamp<int64_t>(
        (perBlock + 31) / 32 * 32, 32, kDefaultBlock));
  };
  if (firstRows) {
    RowPlan p = planRows(*firstRows);
    if (p.mode == RowPlan::Block)
      blockSize = static_cast<unsigned>(p.group);
    else if (p.mode == RowPlan::Columns)
      blockSize = static_cast<unsigned>(kColumnSlices * kColumnRowsPerBlock);
    else if (numNests == 1)
      blockSize = blockFor(p.mode == RowPlan::Warp ? 32 * p.rows : p.rows);
  } else {
    blockSize = blockFor(threads);
  }

  for (const Stmt &s : k.body)
    printStmt(s, false);

  CudaKernel result;
  result.name = k.name;
  result.sourceNodes = k.sourceNodes;
  result.block[0] = blockSize;
  result.grid[0] =
      static_cast<unsigned>(std::min<int64_t>(std::max<int64_t>(gridSize, 1),
                                              kMaxGrid));
  // With run-time sizes the grid follows them, up to the bound's (a
  // grid-stride kernel is correct with any grid).
  if (!k.sizeParams.empty()) {
    std::string &x = result.runTimeGrid[0];
    x = "std::min<int64_t>(std::max<int64_t>({int64_t(1)";
    for (const std::string &t : gridTerms)
      x += ", int64_t(" + t + ")";
    x += "}), " + std::to_string(result.grid[0]) + ")";
  }
  result.sharedBytes = 0;
  assert(sharedBytes <= 48 * 1024 && "static shared memory over 48 KiB");

  std::string header = "// " + k.name + ": " + k.kind + " kernel over [";
  for (size_t i = 0; i < k.parallelDomain.size(); ++i)
    header += (i ? ", " : "") + std::to_string(k.parallelDomain[i]);
  header += "]";
  if (k.kind == "reduction") {
    header += " reducing [";
    for (size_t i = 0; i < k.reducedDomain.size(); ++i)
      header += (i ? ", " : "") + std::to_string(k.reducedDomain[i]);
    header += "]";
  }
  header += "\n";
  if (!k.sourceNodes.empty()) {
    header += "// ONNX nodes:";
    for (const std::string &n : k.sourceNodes)
      header += " " + n;
    header += "\n";
  }
  header += inPlaceComment(k);
  for (const std::string &m : mappings)
    header += "// mapping: " + m + "\n";
  header += "// launch: grid [" +
            (result.runTimeGrid[0].empty()
                 ? std::to_string(result.grid[0])
                 : "from the sizes, at most " +
                       std::to_string(result.grid[0])) +
            ", 1, 1], block [" + std::to_string(blockSize) +
            ", 1, 1], static shared " + std::to_string(sharedBytes) +
            " bytes\n";
  std::string prologue;
  for (const std::string &size : k.sizeParams)
    prologue += "  const " + it + " " + size + " = (" + it + ")" + size +
                "_arg; // at most the bound\n";
  for (const std::string &d : sharedDecls)
    prologue += "  " + d + "\n";
  if (usesGlobalId) {
    prologue += "  const " + it + " kiln_gtid = (" + it + ")blockIdx.x * (" +
                it + ")blockDim.x + (" + it + ")threadIdx.x;\n";
    prologue += "  const " + it + " kiln_nthreads = (" + it + ")gridDim.x * (" +
                it + ")blockDim.x;\n";
  }
  result.declaration = signature() + ";";
  result.definition = header + signature() + " {\n" + prologue + out + "}\n";
  return result;
}

} // namespace cudaprinter

using namespace codegen;

CudaKernel printCudaKernel(const Kernel &kernel) {
  return cudaprinter::CudaPrinter(kernel).print();
}

mlir::FailureOr<CudaKernel> emitCudaKernel(FusionOp op) {
  mlir::FailureOr<Kernel> kernel = lowerFusionToKernelIR(op);
  if (mlir::failed(kernel))
    return mlir::failure();
  applySymbolicNumbers(op, *kernel);
  return printCudaKernel(*kernel);
}

/// True when a loop nested in `body` has a run-time extent.
static bool innerRunTimeExtent(const Kernel &k, const Body &body) {
  for (const Stmt &s : body) {
    if (s.kind != Stmt::Kind::Loop)
      continue;
    for (int v : s.vars)
      if (!k.vars[v].symbolicExtent.empty())
        return true;
    if (innerRunTimeExtent(k, s.body))
      return true;
  }
  return false;
}

std::string whyNotCudaRunTimeSizes(mlir::Operation *op) {
  if (auto fusion = mlir::dyn_cast<FusionOp>(op)) {
    // Rows are planned (threads per row, registers per thread) from their
    // length: a run-time length is not planned yet.
    mlir::FailureOr<Kernel> kernel = lowerFusionToKernelIR(fusion);
    if (mlir::failed(kernel))
      return "its kernel does not lower";
    applySymbolicNumbers(op, *kernel);
    for (const Stmt &s : kernel->body)
      if (s.kind == Stmt::Kind::Loop && innerRunTimeExtent(*kernel, s.body))
        return "the CUDA kernel " + fusion.getName().str() +
               " reduces rows of a run-time length";
    return "";
  }
  if (auto call = mlir::dyn_cast<LibraryCallOp>(op)) {
    llvm::StringRef callee = call.getCallee();
    if (callee == "cublaslt.matmul" || callee == "cudnn.conv")
      return "";
    return "the library call " + callee.str() + " takes compile-time shapes";
  }
  if (op->hasAttr(kKernelAttr) && !cudaOpKernelTakesRunTimeSizes(op))
    return "the CUDA kernel of " + op->getName().getStringRef().str() +
           " is generated for compile-time shapes (of the single-op "
           "kernels, pooling, concat and resize take a run-time batch, attention a "
           "run-time batch and sequence length)";
  return "";
}

/// kiln_erf_bf16 for the kernels that use it: erf of every bf16 value,
/// rounded to bf16 as the reference runtime computes it (std::erf in float,
/// then round to nearest even), so a kernel reads one table entry (128 KiB,
/// cached) instead of evaluating erff, and matches the reference bit for bit.
static std::string emitErfBf16Table() {
  std::string s =
      "\n// erf from bf16 to bf16 by table: entry b is the reference "
      "runtime's\n// bf16(erf(x)) for the bf16 x whose bits are b (computed "
      "by kiln).\n__device__ const uint16_t kiln_erf_bf16_table[65536] = {";
  char buf[16];
  for (uint32_t b = 0; b < 65536; ++b) {
    uint32_t bits = b << 16;
    float x;
    std::memcpy(&x, &bits, sizeof(x));
    BFloat16 y(std::erf(x));
    std::snprintf(buf, sizeof(buf), "%s0x%04x", b % 16 ? "," : ",\n",
                  (unsigned)y.bits);
    s += b == 0 ? buf + 2 : buf;
  }
  s += "};\n__device__ __forceinline__ float kiln_erf_bf16(float x) {\n"
       "  return kiln_bits_float((uint32_t)kiln_erf_bf16_table"
       "[kiln_float_bits(x) >> 16] << 16);\n}\n";
  return s;
}

std::string emitCudaKernelsFile(llvm::ArrayRef<CudaKernel> kernels,
                                llvm::StringRef modelName) {
  std::string s;
  s += "//===- kernels.cu - CUDA kernels of " + modelName.str() +
       " (generated by kiln) ---===//\n";
  s += "//\n// One extern \"C\" __global__ function per fusion region, "
       "compiled by NVRTC;\n// each names the ONNX nodes it computes and the "
       "launch shape it needs.\n// Generated code: do not edit.\n//\n";
  s += "//===" + std::string(70, '-') + "===//\n\n";
  s += cudaKernelPrelude();
  if (llvm::any_of(kernels, [](const CudaKernel &k) {
        return k.definition.find("kiln_erf_bf16(") != std::string::npos;
      }))
    s += emitErfBf16Table();
  for (const CudaKernel &k : kernels)
    s += "\n" + k.definition;
  return s;
}

} // namespace kiln
