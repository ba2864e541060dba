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
//
//===----------------------------------------------------------------------===//

#include "codegen/CppKernel.h"
#include "codegen/ExprPrinter.h"

#include "llvm/Support/raw_ostream.h"

namespace kiln {

using namespace codegen;

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

class CppPrinter {
public:
  explicit CppPrinter(const Kernel &k)
      : k(k), names(k.varNames()), exprs(k.temps.size()) {}

  CppKernel print();

private:
  const Kernel &k;
  std::vector<std::string> names;
  std::vector<std::string> exprs; ///< temp id -> C expression
  std::string out;
  int indent = 1;

  void line(const std::string &s) {
    out += std::string(indent * 2, ' ') + s + "\n";
  }
  int64_t work(const Body &body) const;
  void printBody(const Body &body);
  void printLoop(const Stmt &loop);
  void openFor(int var);
  void printReduceLoop(const Stmt &loop);
  void declareRowCaches();
  std::string signature() const;
};

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

void CppPrinter::openFor(int var) {
  line("for (int64_t " + names[var] + " = 0; " + names[var] + " < " +
       std::to_string(k.vars[var].extent) + "; ++" + names[var] + ") {");
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
           printScalarOp(s.op, t, argTypes, args, s.attrs) + ";");
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
  if (numCollapsed == 1)
    line("#pragma omp parallel for");
  else if (numCollapsed > 1)
    line("#pragma omp parallel for collapse(" + std::to_string(numCollapsed) +
         ")");
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

void CppPrinter::printReduceLoop(const Stmt &loop) {
  // Accumulators.
  std::string clauses;
  bool simd = true;
  for (const Reduction &r : loop.reductions) {
    std::string acc = "acc" + std::to_string(r.result);
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
        line("int nan" + std::to_string(r.result) + " = 0;");
        clauses += " reduction(|:nan" + std::to_string(r.result) + ")";
      }
      break;
    }
    }
  }
  if (simd) {
    std::string collapse =
        loop.vars.size() > 1
            ? " collapse(" + std::to_string(loop.vars.size()) + ")"
            : "";
    line("#pragma omp simd" + collapse + clauses);
  }
  for (int v : loop.vars)
    openFor(v);
  printBody(loop.body);
  for (const Reduction &r : loop.reductions) {
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
  for (size_t i = 0; i < loop.vars.size(); ++i) {
    --indent;
    line("}");
  }
  // Results, rounded once to the reduced op's dtype.
  for (const Reduction &r : loop.reductions) {
    std::string acc = "acc" + std::to_string(r.result);
    std::string ct = computeCType(r.type);
    bool fl = isFloatType(r.type);
    std::string v;
    switch (r.kind) {
    case ReduceKind::Sum:
    case ReduceKind::Prod:
      v = fl ? "(" + ct + ")" + acc : "(" + ct + ")(int64_t)" + acc;
      break;
    case ReduceKind::Mean:
      v = fl ? "(" + ct + ")(" + acc + " / (" + accumulatorType(r) + ")" +
                   std::to_string(r.count) + ")"
             : "(" + ct + ")(" +
                   (r.count == 0
                        ? std::string("0")
                        : "(int64_t)" + acc + " / " + std::to_string(r.count)) +
                   ")";
      break;
    case ReduceKind::Max:
    case ReduceKind::Min:
      v = fl ? "(nan" + std::to_string(r.result) + " ? " +
                   printLiteral(r.type, NAN, 0) + " : " + acc + ")"
             : acc;
      break;
    }
    exprs[r.result] = "t" + std::to_string(r.result);
    line("const " + ct + " " + exprs[r.result] + " = " + roundTo(r.type, v) +
         ";");
  }
}

std::string CppPrinter::signature() const {
  std::string s = "void " + k.name + "(";
  for (size_t i = 0; i < k.buffers.size(); ++i) {
    const Buffer &b = k.buffers[i];
    s += (i ? ", " : "") + std::string(b.isOutput ? "" : "const ") +
         storageCType(b.type) + " *__restrict " + b.name;
  }
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
  out = header + signature() + " {\n";
  printBody(k.body);
  out += "}\n";
  result.definition = out;
  return result;
}

} // namespace

CppKernel printCppKernel(const Kernel &kernel) {
  return CppPrinter(kernel).print();
}

mlir::FailureOr<CppKernel> emitCppKernel(FusionOp op) {
  mlir::FailureOr<Kernel> kernel =
      lowerToKernelIR(op.getBody(), op.getName(), op.getKind(), op.getLoc());
  if (mlir::failed(kernel))
    return mlir::failure();
  return printCppKernel(*kernel);
}

std::string cppKernelPrelude() { return kernelPrelude(); }

std::string emitKernelsFile(llvm::ArrayRef<CppKernel> kernels,
                            llvm::StringRef modelName) {
  std::string s;
  s += "//===- kernels.cpp - Kernels of " + modelName.str() +
       " (generated by kiln) ---===//\n";
  s += "//\n// One function per fusion region, in namespace kiln_kernels; "
       "each names the\n// ONNX nodes it computes. Generated code: do not "
       "edit.\n//\n";
  s += "//===" + std::string(70, '-') + "===//\n\n";
  s += kernelPrelude();
  s += "\nnamespace kiln_kernels {\n";
  for (const CppKernel &k : kernels)
    s += "\n" + k.definition;
  s += "\n} // namespace kiln_kernels\n";
  return s;
}

} // namespace kiln
