//===- CpuTarget.h - The CPU backend ----------------------------*- C++ -*-===//
//
// This file declares the CPU target (codegen/Target.h): C++ kernels compiled
// by the host compiler with OpenMP (CppPrinter.cpp), the runtime's
// OpenBLAS-backed matmul and convolution as library calls, and the
// runtime's reference kernels for every other op outside a fusion; and its
// lowering pass, kiln-lower-cpu.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CPU_CPUTARGET_H
#define KILN_TARGETS_CPU_CPUTARGET_H

#include "codegen/Target.h"

#include "mlir/Pass/Pass.h"

#include <memory>

namespace kiln {

/// The CPU target.
std::unique_ptr<Target> createCpuTarget();

/// kiln-lower-cpu: kiln.matmul, kiln.conv and kiln.conv_transpose become
/// calls of the runtime's OpenBLAS-backed kernels (kiln.library_call
/// "runtime.<op>"); every other op outside a fusion is tagged as a
/// reference step on the CPU.
std::unique_ptr<mlir::Pass> createLowerCpuPass();

/// kiln-cpu-column-reduce-as-matmul (ColumnReduceAsMatmul.cpp): an f32 sum
/// or mean over dims before the innermost as a matmul by a splat row.
std::unique_ptr<mlir::Pass> createColumnReduceAsMatmulPass();

} // namespace kiln

#endif // KILN_TARGETS_CPU_CPUTARGET_H
