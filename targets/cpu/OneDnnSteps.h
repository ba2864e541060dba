//===- OneDnnSteps.h - The wrapper code of oneDNN calls ---------*- C++ -*-===//
//
// This file declares OneDnnSteps, the part of the CPU target's wrapper that
// runs its kiln.library_call "onednn.*" steps (kiln-lower-cpu made them):
// each call's primitive is created once, in the model's create function
// after its load-time steps (kiln::OneDnnPrimitives, the runtime's), and a
// run executes it on the planned buffers; a load-time call (one that reads
// weights only) makes its primitive where it runs, once, at load.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TARGETS_CPU_ONEDNNSTEPS_H
#define KILN_TARGETS_CPU_ONEDNNSTEPS_H

#include "codegen/WrapperSupport.h"
#include "ir/KilnOps.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace kiln {

/// The oneDNN steps of one graph's wrapper.
class OneDnnSteps {
public:
  /// The member of struct kiln_model that holds the primitives.
  static constexpr const char *kModelMember =
      "  kiln::OneDnnPrimitives onednn;\n";
  /// The statements of the create function that make the primitives
  /// (after prepareWeights), returning 1 on failure.
  static constexpr const char *kCreateStatements =
      "    if (createOneDnnPrimitives(m.get(), err, errlen))\n"
      "      return 1;\n";

  /// Prints the run step of `call` (step `index`) and records the creation
  /// of its primitive.
  void emitStep(llvm::raw_ostream &os, LibraryCallOp call, size_t index,
                const wrapper::BufferNames &buffers);

  /// Prints the helpers of the steps: runOneDnn, and the template
  /// createOneDnnPrimitives(Model *m, err, errlen) that creates every
  /// recorded primitive (a template: struct kiln_model comes later in
  /// wrapper.cpp).
  void emitHelpers(llvm::raw_ostream &os) const;

private:
  /// Prints the run step of a recurrence call (onednn.gru_recurrence,
  /// onednn.lstm_recurrence) and records its creation.
  void emitRecurrenceStep(llvm::raw_ostream &os, LibraryCallOp call,
                          size_t index, const wrapper::BufferNames &buffers);
  /// The creation block of `call` (step `index`): the descriptor statements
  /// `desc` on `d`, then `<object>.<add>`, failing with the node's name.
  static std::string createBlock(LibraryCallOp call, size_t index,
                                 const std::string &desc,
                                 const std::string &add,
                                 llvm::StringRef object);
  /// Where a step runs its primitive: its index in the model's
  /// kiln::OneDnnPrimitives (`m->onednn`), or a load-time step's own object
  /// (`once`, index 0) in the block placePrimitive opened.
  struct Primitive {
    int index;
    bool once;
    const char *object() const { return once ? "once" : "m->onednn"; }
  };
  /// Creates the primitive of `call` (step `index`; see createBlock). A
  /// run-time step's is recorded for createOneDnnPrimitives (`m->onednn`);
  /// a load-time step (kiln.load_time) runs in prepareWeights, before those
  /// are created, and once: its primitive is made in a block that this
  /// prints to `os`, in an object of its own ("once", index 0), and the
  /// caller closes the block after the step's run.
  Primitive placePrimitive(llvm::raw_ostream &os, LibraryCallOp call,
                           size_t index, const std::string &desc,
                           const std::string &add);
  /// Prints the statements `run` of a step that runs `primitive`; in the
  /// load-time block placePrimitive opened, which this closes.
  static void printRun(llvm::raw_ostream &os, const Primitive &primitive,
                       llvm::StringRef run);

  /// The creation statements, one block per primitive.
  std::string creates_;
  /// The primitives so far.
  int count_ = 0;
};

} // namespace kiln

#endif // KILN_TARGETS_CPU_ONEDNNSTEPS_H
