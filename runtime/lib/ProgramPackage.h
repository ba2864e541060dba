//===- ProgramPackage.h - Running packages with graph breaks ----*- C++ -*-===//
//
// This file declares ProgramPackage, the part of kiln::Model that runs a
// package whose manifest says "kind": "program": its glue (program.json) on
// the reference executor and its compiled graphs (graphs/<name>/, ordinary
// packages) through kiln::Model.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PROGRAMPACKAGE_H
#define KILN_RUNTIME_PROGRAMPACKAGE_H

#include "kiln/runtime/Model.h"

#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// A loaded program package.
class ProgramPackage {
public:
  /// Loads program.json/.bin from `dir` and every graph it calls from
  /// `dir`/graphs/<name> (each graph gets the weights of
  /// `options.weights` it declares; a weight no graph declares is an
  /// error). `target` is the manifest's.
  static Expected<std::unique_ptr<ProgramPackage>>
  load(const std::string &dir, const std::string &target,
       const LoadOptions &options);

  const Program &program() const { return program_; }
  /// The weights the graphs bind at load time (by name, each once).
  const std::vector<ValueSignature> &weights() const { return weights_; }
  /// Device::CUDA when the graphs were compiled for cuda.
  Device device() const { return device_; }
  /// The scratch bytes of the graphs' arenas, summed.
  size_t arenaBytes() const;

  /// Runs the program: inputs as for Model::run (CUDA tensors are copied
  /// to the host: the glue runs there); compiled graphs through their
  /// Models (for a cuda program the graph calls copy their inputs and
  /// outputs, counted in options.stats->copiedBytes).
  Expected<NamedTensors> run(const NamedTensors &inputs,
                             const RunOptions &options) const;

private:
  Program program_;
  std::vector<Model> graphs_;
  std::vector<ValueSignature> weights_;
  Device device_ = Device::CPU;
};

} // namespace kiln

#endif // KILN_RUNTIME_PROGRAMPACKAGE_H
