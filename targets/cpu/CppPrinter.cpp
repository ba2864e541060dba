//===- CppPrinter.cpp - Kernel IR to C++ ----------------------------------===//
//
// This file implements the C++ printer of the kernel IR. The outer
// (parallel) loop nest gets `#pragma omp parallel for` when the kernel's work
// is large enough to pay for the threads; element loops stay plain `for`
// loops over `__restrict` pointers for the auto-vectorizer; reduce loops keep
// their accumulators in locals (f32 for sums of f32/f16/bf16 over at most
// kMaxFloatSumCount elements, f64 for longer sums and for products, wrapping
// u64 for integers) under `#pragma omp simd
// reduction(...)`, which lets the compiler vectorize them without
// -ffast-math. Scalar ops print through the shared expression printer.
// The schedules that change how a nest moves memory (prefetched and
// pipelined rows, streamed outputs) are in CppRowSchedules.cpp.
//
//===----------------------------------------------------------------------===//

#include "targets/cpu/CppPrinter.h"

#include "codegen/ExprPrinter.h"
#include "codegen/SymbolicShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>
#include <map>

namespace kiln {

using namespace codegen;

namespace cpp_printer {

namespace {

/// Work below this many element evaluations runs on one thread.
constexpr int64_t kParallelThreshold = 32 * 1024;
/// A parallel nest collapses outer loops until it has this many iterations.
constexpr int64_t kMinParallelTrip = 64;
/// Float sums of at most this many terms accumulate in f32, as ONNX Runtime
/// and PyTorch do; the vectorized loop keeps one partial sum per lane (8 or
/// 16), so each partial sum adds at most 8192 terms (relative error well
/// under the 1e-3 the tests allow). Longer sums, and products, use f64 (the
/// reference runtime's precision). f32 sums measured 9% faster on softmax.
constexpr int64_t kMaxFloatSumCount = 65536;

/// The C type of the accumulator of `r`.
std::string accumulatorType(const Reduction &r) {
  if (!isFloatType(r.type))
    return "uint64_t";
  bool floatSum = (r.kind == ReduceKind::Sum || r.kind == ReduceKind::Mean) &&
                  computeCType(r.type) == "float" &&
                  r.count <= kMaxFloatSumCount;
  return floatSum ? "float" : "double";
}

} // namespace

CppPrinter::CppPrinter(const Kernel &k)
    : k(k), names(k.varNames()), exprs(k.temps.size()) {}

int64_t CppPrinter::work(const Body &body) const {
  int64_t w = 0;
  for (const Stmt &s : body) {
    if (s.kind != Stmt::Kind::Loop) {
      ++w;
      continue;
    }
    int64_t trip = 1;
    for (int v : s.vars)
      trip *= k.vars[v].extent;
    w += trip * std::max<int64_t>(work(s.body), 1);
  }
  return w;
}

std::string extentOf(const Kernel &k, int var) {
  const LoopVar &v = k.vars[var];
  return v.symbolicExtent.empty() ? std::to_string(v.extent) : v.symbolicExtent;
}

std::string CppPrinter::parallelIf(const Stmt &loop) const {
  // The decision to go parallel was made at the bound; a run-time extent
  // may be far smaller (batch 1 of 1..64), where waking the threads costs
  // more than the work: the same threshold, at run time.
  std::string trip;
  bool symbolic = false;
  for (int v : loop.vars) {
    symbolic |= !k.vars[v].symbolicExtent.empty();
    trip += (trip.empty() ? "" : " * ") + extentOf(k, v);
  }
  if (!symbolic)
    return "";
  return " if(" + trip + " * " +
         std::to_string(std::max<int64_t>(work(loop.body), 1)) + " > " +
         std::to_string(kParallelThreshold) + ")";
}

/// The OpenMP pragma of a loop nest whose outer `numCollapsed` variables
/// run in parallel (nothing for 0).
void CppPrinter::printParallelPragma(const Stmt &loop, size_t numCollapsed) {
  if (numCollapsed == 1)
    line("#pragma omp parallel for" + parallelIf(loop));
  else if (numCollapsed > 1)
    line("#pragma omp parallel for collapse(" + std::to_string(numCollapsed) +
         ")" + parallelIf(loop));
}

void CppPrinter::openFor(int var) {
  line("for (int64_t " + names[var] + " = 0; " + names[var] + " < " +
       extentOf(k, var) + "; ++" + names[var] + ") {");
  ++indent;
}

void CppPrinter::printBody(const Body &body) {
  for (const Stmt &s : body) {
    switch (s.kind) {
    case Stmt::Kind::Const:
      exprs[s.result] =
          printLiteral(k.temps[s.result], s.floatValue, s.intValue);
      break;
    case Stmt::Kind::Load: {
      ScalarType t = k.temps[s.result];
      std::string load =
          k.buffers[s.buffer].name + "[" + s.index.str(names) + "]";
      if (isHalfType(t))
        load = "(float)" + load;
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(t) + " " + exprs[s.result] + " = " + load +
           ";");
      break;
    }
    case Stmt::Kind::Compute: {
      std::vector<ScalarType> argTypes;
      std::vector<std::string> args;
      for (int a : s.args) {
        argTypes.push_back(k.temps[a]);
        args.push_back(exprs[a]);
      }
      ScalarType t = k.temps[s.result];
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(t) + " " + exprs[s.result] + " = " +
           printScalarOp(*s.op, t, argTypes, args, s.attrs) + ";");
      break;
    }
    case Stmt::Kind::CacheStore:
      line(k.caches[s.buffer].name + "[" + s.index.str(names) +
           "] = " + exprs[s.value] + ";");
      break;
    case Stmt::Kind::CacheLoad:
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(k.temps[s.result]) + " " + exprs[s.result] +
           " = " + k.caches[s.buffer].name + "[" + s.index.str(names) + "];");
      break;
    case Stmt::Kind::Store: {
      const Buffer &buf = k.buffers[s.buffer];
      std::string v = exprs[s.value];
      if (isHalfType(buf.type))
        v = storageCType(buf.type) + "(" + v + ")";
      else if (k.temps[s.value] != buf.type)
        v = "(" + computeCType(buf.type) + ")" + v;
      auto chunk = streamChunks.find(s.buffer);
      if (chunk != streamChunks.end())
        line(chunk->second + "[" + streamVar + " - kiln_c] = " + v + ";");
      else
        line(buf.name + "[" + s.index.str(names) + "] = " + v + ";");
      break;
    }
    case Stmt::Kind::Loop:
      if (s.loopKind == Stmt::LoopKind::Reduce)
        printReduceLoop(s);
      else
        printLoop(s);
      break;
    }
  }
}

/// Row caches: local arrays, or the row of the output they are placed in
/// (a plain pointer: it aliases the output's `__restrict` pointer).
void CppPrinter::declareRowCaches() {
  for (const RowCache &c : k.caches) {
    if (c.outputBuffer >= 0)
      line(computeCType(c.type) + " *" + c.name + " = " +
           k.buffers[c.outputBuffer].name + " + " + c.outputBase.str(names) +
           "; // the row of " + k.buffers[c.outputBuffer].name);
    else
      line(computeCType(c.type) + " " + c.name + "[" + std::to_string(c.size) +
           "];");
  }
}

void CppPrinter::printLoop(const Stmt &loop) {
  if (loop.vars.empty()) {
    line("{");
    ++indent;
    if (loop.loopKind == Stmt::LoopKind::Parallel)
      declareRowCaches();
    printBody(loop.body);
    --indent;
    line("}");
    return;
  }
  size_t numCollapsed = 0;
  if (loop.loopKind == Stmt::LoopKind::Parallel && work(loop.body) * [&] {
        int64_t trip = 1;
        for (int v : loop.vars)
          trip *= k.vars[v].extent;
        return trip;
      }() > kParallelThreshold) {
    // Pointwise nests keep the innermost loop out of the collapse so that it
    // vectorizes; reduction kernels collapse every kept dim.
    bool hasInnerLoops = false;
    for (const Stmt &s : loop.body)
      hasInnerLoops |= s.kind == Stmt::Kind::Loop;
    size_t limit = hasInnerLoops || loop.vars.size() == 1
                       ? loop.vars.size()
                       : loop.vars.size() - 1;
    int64_t trip = 1;
    while (numCollapsed < limit && trip < kMinParallelTrip)
      trip *= k.vars[loop.vars[numCollapsed++]].extent;
    if (hasInnerLoops)
      numCollapsed = limit;
  }
  if (numCollapsed == 1 && loop.loopKind == Stmt::LoopKind::Parallel &&
      (printPipelinedRows(loop) || printPrefetchedRows(loop)))
    return;
  if (printStreamedLoop(loop, numCollapsed))
    return;
  printParallelPragma(loop, numCollapsed);
  for (int v : loop.vars)
    openFor(v);
  if (loop.loopKind == Stmt::LoopKind::Parallel)
    declareRowCaches();
  printBody(loop.body);
  for (size_t i = 0; i < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
}

/// Declares the accumulators of `reductions` (names "acc<N>") and returns
/// their `omp simd` clauses; clears `simd` when one cannot be a clause (bool
/// max/min).
std::string
CppPrinter::declareAccumulators(const std::vector<Reduction> &reductions,
                                bool &simd) {
  std::string clauses;
  for (const Reduction &r : reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string nan = "nan" + std::to_string(r.result);
    bool fl = isFloatType(r.type);
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      line(accumulatorType(r) + " " + acc + " = 0;");
      clauses += " reduction(+:" + acc + ")";
      break;
    case ReduceKind::Prod:
      line(accumulatorType(r) + " " + acc + " = 1;");
      clauses += " reduction(*:" + acc + ")";
      break;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      bool isMax = r.kind == ReduceKind::Max;
      std::string init;
      if (fl)
        init = printLiteral(r.type, isMax ? -INFINITY : INFINITY, 0);
      else if (r.type == ScalarType::Bool)
        init = isMax ? "false" : "true";
      else
        init = std::string(isMax ? "kiln_lowest" : "kiln_highest") + "<" +
               computeCType(r.type) + ">()";
      line(computeCType(r.type) + " " + acc + " = " + init + ";");
      if (r.type == ScalarType::Bool)
        simd = false;
      else
        clauses += std::string(" reduction(") + (isMax ? "max" : "min") + ":" +
                   acc + ")";
      if (fl) {
        line("int " + nan + " = 0;");
        clauses += " reduction(|:" + nan + ")";
      }
      break;
    }
    }
  }
  return clauses;
}

/// Adds this iteration's inputs of `reductions` to their accumulators.
void CppPrinter::combineAccumulators(const std::vector<Reduction> &reductions) {
  for (const Reduction &r : reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string in = exprs[r.input];
    bool fl = isFloatType(r.type);
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Mean:
      line(acc + (fl ? " += (" + accumulatorType(r) + ")"
                     : std::string(" += (uint64_t)(int64_t)")) +
           in + ";");
      break;
    case ReduceKind::Prod:
      line(acc + (fl ? " *= (double)" : " *= (uint64_t)(int64_t)") + in + ";");
      break;
    case ReduceKind::Max:
    case ReduceKind::Min: {
      const char *cmp = r.kind == ReduceKind::Max ? " > " : " < ";
      line(acc + " = " + in + cmp + acc + " ? " + in + " : " + acc + ";");
      if (fl)
        line("nan" + std::to_string(r.result) + " |= " + in + " != " + in +
             ";");
      break;
    }
    }
  }
}

/// The result of `r` from its accumulator, rounded once to the reduced op's
/// dtype.
std::string CppPrinter::reducedValue(const Reduction &r) {
  std::string acc = "acc" + std::to_string(r.result);
  std::string ct = computeCType(r.type);
  bool fl = isFloatType(r.type);
  std::string v;
  switch (r.kind) {
  case ReduceKind::Sum:
  case ReduceKind::Prod:
    v = fl ? "(" + ct + ")" + acc : "(" + ct + ")(int64_t)" + acc;
    break;
  case ReduceKind::Mean: {
    // The count, or its run-time value (a range package's).
    std::string count = r.symbolicCount.empty() ? std::to_string(r.count)
                                                : r.symbolicCount;
    v = fl ? "(" + ct + ")(" + acc + " / (" + accumulatorType(r) + ")" +
                 count + ")"
           : "(" + ct + ")(" +
                 (r.count == 0 ? std::string("0")
                               : "(int64_t)" + acc + " / " + count) +
                 ")";
  }
    break;
  case ReduceKind::Max:
  case ReduceKind::Min:
    v = fl ? "(nan" + std::to_string(r.result) + " ? " +
                 printLiteral(r.type, NAN, 0) + " : " + acc + ")"
           : acc;
    break;
  }
  return roundTo(r.type, v);
}

void CppPrinter::printReduceLoop(const Stmt &loop,
                                 const std::vector<RowPrefetch> &prefetches,
                                 const std::function<void()> &beforeBlock) {
  bool simd = true;
  std::string clauses = declareAccumulators(loop.reductions, simd);
  // A reduce loop without variables (all its dims of extent 1, dropped by
  // the kernel IR's cleanup) is its body once: no loop for the pragma.
  std::string pragma;
  if (simd && !loop.vars.empty())
    pragma = "#pragma omp simd" +
             (loop.vars.size() > 1
                  ? " collapse(" + std::to_string(loop.vars.size()) + ")"
                  : std::string()) +
             clauses;
  bool blocked = false;
  if (!prefetches.empty()) {
    assert(loop.vars.size() == 1 && "prefetched loops have one variable");
    int var = loop.vars[0];
    std::string n = extentOf(k, var), j = names[var];
    blocked = !k.vars[var].symbolicExtent.empty() ||
              k.vars[var].extent > kPrefetchBlock;
    assert((!beforeBlock || blocked) && "only a blocked loop has blocks");
    if (!blocked) {
      printPrefetches(prefetches, "0", n);
      if (!pragma.empty())
        line(pragma);
      openFor(var);
    } else {
      std::string block = std::to_string(kPrefetchBlock);
      line("for (int64_t kiln_jb = 0; kiln_jb < " + n +
           "; kiln_jb += " + block + ") {");
      ++indent;
      line("const int64_t kiln_je = kiln_jb + " + block + " < " + n +
           " ? kiln_jb + " + block + " : " + n + ";");
      if (beforeBlock)
        beforeBlock();
      printPrefetches(prefetches, "kiln_jb", "kiln_je");
      if (!pragma.empty())
        line(pragma);
      line("for (int64_t " + j + " = kiln_jb; " + j + " < kiln_je; ++" + j +
           ") {");
      ++indent;
    }
  } else {
    if (!pragma.empty())
      line(pragma);
    for (int v : loop.vars)
      openFor(v);
  }
  printBody(loop.body);
  combineAccumulators(loop.reductions);
  for (size_t i = 0; i < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
  if (blocked) {
    --indent;
    line("}");
  }
  for (const Reduction &r : loop.reductions) {
    exprs[r.result] = "t" + std::to_string(r.result);
    line("const " + computeCType(r.type) + " " + exprs[r.result] + " = " +
         reducedValue(r) + ";");
  }
}

std::string CppPrinter::signature() const {
  std::string s = "void " + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const Buffer &b = k.buffers[i];
    // An output stored over an input (kiln.in_place) aliases it, but keeps
    // `__restrict`: every store of it is data-dependent on the loads of the
    // same element (or on a reduction over them), so no reordering the
    // qualifier allows can move a store before those loads; without it GCC
    // versions vectorized loops on a run-time overlap check, which an
    // in-place call would fail (its scalar copy would run; not measured).
    s += (i ? ", " : "") + std::string(b.isOutput ? "" : "const ") +
         storageCType(b.type) + " *__restrict " + b.name;
  }
  for (const std::string &size : k.sizeParams)
    s += ", int64_t " + size;
  return s + ")";
}

CppKernel CppPrinter::print() {
  CppKernel result;
  result.name = k.name;
  result.sourceNodes = k.sourceNodes;
  result.declaration = signature() + ";";
  std::string header = "// " + k.name + ": " + k.kind + " kernel over [";
  for (size_t i = 0; i < k.parallelDomain.size(); ++i)
    header += (i ? ", " : "") + std::to_string(k.parallelDomain[i]);
  header += "]";
  for (const LoopVar &v : k.vars)
    if (!v.symbolicExtent.empty())
      header += ", " + v.name + " < " + v.symbolicExtent + " (at most " +
                std::to_string(v.extent) + ")";
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
  out = header + signature() + " {\n";
  printBody(k.body);
  out += "}\n";
  result.definition = out;
  return result;
}

} // namespace cpp_printer

CppKernel printCppKernel(const codegen::Kernel &kernel) {
  return cpp_printer::CppPrinter(kernel).print();
}

mlir::FailureOr<CppKernel> emitCppKernel(FusionOp op) {
  mlir::FailureOr<codegen::Kernel> kernel = lowerFusionToKernelIR(op);
  if (mlir::failed(kernel))
    return mlir::failure();
  // Run-time sizes of a package compiled for ranges of sizes.
  applySymbolicNumbers(op, *kernel);
  return printCppKernel(*kernel);
}


std::string emitKernelsFile(llvm::ArrayRef<CppKernel> kernels,
                            llvm::StringRef modelName) {
  std::string s;
  s += "//===- kernels.cpp - Kernels of " + modelName.str() +
       " (generated by kiln) ---===//\n";
  s += "//\n// One function per fusion region, in namespace kiln_kernels; "
       "each names the\n// ONNX nodes it computes. Generated code: do not "
       "edit.\n//\n";
  s += "//===" + std::string(70, '-') + "===//\n\n";
  s += cppKernelPrelude();
  s += "\nnamespace kiln_kernels {\n";
  for (const CppKernel &k : kernels)
    s += "\n" + k.definition;
  s += "\n} // namespace kiln_kernels\n";
  return s;
}

} // namespace kiln
