//===- TrainerWiring.cpp - A training package's graphs wired together -----===//
//
// This file implements the load-time checks of kiln::Trainer: every input of
// the forward, backward, optimizer and accumulate graphs resolves to a model
// input, parameter, state tensor, forward output, gradient or run-time
// scalar of the right dtype and shape; the loss, gradients and updates are
// outputs of the right graphs; the saved activations the backward graph
// reads from the shared scratch arena are where the forward graph leaves
// them.
//
//===----------------------------------------------------------------------===//

#include "TrainerImpl.h"

namespace kiln {

/// Finds where each input of `graph` comes from, among the `allowed`
/// sources, checking its dtype and shape.
Status Trainer::Impl::resolveInputs(const Model &graph,
                                    const std::string &label,
                                    const std::set<Source> &allowed,
                                    std::vector<Source> &sources) const {
  std::map<std::string, const ValueSignature *> gradientSigs;
  if (allowed.count(Source::Backward))
    for (const ValueSignature &out : backward->outputs())
      gradientSigs[out.name] = &out;
  for (const ValueSignature &in : graph.inputs()) {
    std::vector<std::pair<Source, const ValueSignature *>> candidates = {
        {Source::ModelInput, findSig(inputs, in.name)},
        {Source::Parameter, findSig(parameters, in.name)},
        {Source::State, findSig(state, in.name)},
        {Source::Forward, allowed.count(Source::Forward)
                              ? findSig(forward->outputs(), in.name)
                              : nullptr},
        {Source::Backward,
         gradientSigs.count(in.name) ? gradientSigs[in.name] : nullptr}};
    const ValueSignature *found = nullptr;
    Source source = Source::ModelInput;
    for (auto [s, sig] : candidates)
      if (sig && allowed.count(s)) {
        found = sig;
        source = s;
        break;
      }
    if (!found && allowed.count(Source::Extra) && isAccumulateInput(in.name)) {
      sources.push_back(Source::Extra);
      continue;
    }
    if (!found && allowed.count(Source::Lr) &&
        (in.name == kLrInput || in.name == kStepInput)) {
      if (in.shape != Shape{} || !isFloatingPoint(in.dtype))
        return Status::error(strCat(label, ": input '", in.name, "' is ",
                                    typeOf(in),
                                    "; expected a floating-point scalar "
                                    "(f32[])"));
      sources.push_back(in.name == kLrInput ? Source::Lr : Source::Step);
      continue;
    }
    if (!found)
      return Status::error(
          strCat(label, ": input '", in.name, "' ", typeOf(in),
                 " is none of the values it may read (the package is "
                 "inconsistent; recompile it)"));
    if (found->dtype != in.dtype || found->shape != in.shape)
      return Status::error(strCat(label, ": input '", in.name, "' is ",
                                  typeOf(in), " but the value it reads is ",
                                  typeOf(*found),
                                  " (the package is inconsistent; "
                                  "recompile it)"));
    sources.push_back(source);
  }
  return Status::ok();
}

/// Checks the loss, the gradients and the updates against the graphs'
/// outputs.
Status Trainer::Impl::checkOutputs() const {
  const ManifestTraining &t = *manifest.training;
  const ValueSignature *loss = findSig(forward->outputs(), t.loss);
  if (!loss)
    return Status::error(strCat(t.graphs.forward, ": has no output '", t.loss,
                                "' (training.loss; the package is "
                                "inconsistent)"));
  if (!loss->shape.empty() || !isFloatingPoint(loss->dtype))
    return Status::error(strCat(t.graphs.forward, ": the loss '", t.loss,
                                "' is ", typeOf(*loss),
                                "; expected a floating-point scalar (f32[])"));
  for (const ManifestGradient &g : t.gradients) {
    const ValueSignature *out = findSig(backward->outputs(), g.value);
    const ValueSignature *param = findSig(parameters, g.parameter);
    if (!out)
      return Status::error(strCat(t.graphs.backward, ": has no output '",
                                  g.value, "' (the gradient of '", g.parameter,
                                  "')"));
    if (out->dtype != param->dtype || out->shape != param->shape)
      return Status::error(strCat(t.graphs.backward, ": gradient '", g.value,
                                  "' is ", typeOf(*out), " but parameter '",
                                  g.parameter, "' is ", typeOf(*param)));
  }
  for (const ManifestUpdate &u : t.updates) {
    const ValueSignature *out = findSig(optimizer->outputs(), u.value);
    const ValueSignature *target = findSig(parameters, u.target);
    if (!target)
      target = findSig(state, u.target);
    if (!out)
      return Status::error(strCat(t.graphs.optimizer, ": has no output '",
                                  u.value, "' (the update of '", u.target,
                                  "')"));
    if (out->dtype != target->dtype || out->shape != target->shape)
      return Status::error(strCat(t.graphs.optimizer, ": update '", u.value,
                                  "' is ", typeOf(*out), " but '", u.target,
                                  "' is ", typeOf(*target)));
  }
  return Status::ok();
}

Status Trainer::Impl::checkWiring() {
  const ManifestTraining &t = *manifest.training;
  for (const auto *list : {&parameters, &state})
    for (const ValueSignature &sig : *list)
      if (sig.name == kStepTensor || sig.name == kLrInput ||
          findSig(inputs, sig.name))
        return Status::error(strCat(dir, ": '", sig.name,
                                    "' is both a parameter or state tensor "
                                    "and a model input or reserved name"));
  // State tensors other than an optimizer's (dynamic loss scaling's
  // exponent) may feed forward and backward too.
  KILN_RETURN_IF_ERROR(resolveInputs(
      *forward, t.graphs.forward,
      {Source::ModelInput, Source::Parameter, Source::State}, forwardSources));
  KILN_RETURN_IF_ERROR(resolveInputs(
      *backward, t.graphs.backward,
      {Source::Forward, Source::ModelInput, Source::Parameter, Source::State},
      backwardSources));
  KILN_RETURN_IF_ERROR(resolveInputs(
      *optimizer, t.graphs.optimizer,
      {Source::Parameter, Source::State, Source::Backward, Source::Lr},
      optimizerSources));
  if (accumulate)
    KILN_RETURN_IF_ERROR(resolveInputs(*accumulate, t.graphs.accumulate,
                                       {Source::Backward, Source::Extra},
                                       accumulateSources));
  KILN_RETURN_IF_ERROR(checkArenaValues());
  return checkOutputs();
}

/// The saved activations the backward graph reads from the shared scratch
/// arena are where the forward graph leaves them; no other graph reads or
/// leaves any.
Status Trainer::Impl::checkArenaValues() const {
  const ManifestTraining &t = *manifest.training;
  auto inconsistent = [&](const std::string &graph, const std::string &what) {
    return Status::error(strCat(graph, ": ", what,
                                " (the package is inconsistent; recompile "
                                "it)"));
  };
  for (const ArenaValueSignature &in : backward->arenaValues()) {
    if (!in.isInput)
      return inconsistent(t.graphs.backward,
                          strCat("leaves '", in.value.name, "' in the arena"));
    auto left = std::find_if(
        forward->arenaValues().begin(), forward->arenaValues().end(),
        [&](const ArenaValueSignature &out) {
          return !out.isInput && out.value.name == in.value.name;
        });
    if (left == forward->arenaValues().end())
      return inconsistent(t.graphs.backward,
                          strCat("reads '", in.value.name,
                                 "' from the arena, which ", t.graphs.forward,
                                 " does not leave there"));
    if (left->offset != in.offset || left->value.dtype != in.value.dtype ||
        left->value.shape != in.value.shape)
      return inconsistent(
          t.graphs.backward,
          strCat("reads '", in.value.name, "' ", typeOf(in.value),
                 " at arena offset ", in.offset, " but ", t.graphs.forward,
                 " leaves ", typeOf(left->value), " at offset ", left->offset));
  }
  for (const ArenaValueSignature &v : forward->arenaValues())
    if (v.isInput)
      return inconsistent(t.graphs.forward,
                          strCat("reads '", v.value.name, "' from the arena"));
  if (!optimizer->arenaValues().empty())
    return inconsistent(t.graphs.optimizer, "hands values over in the arena");
  return Status::ok();
}

} // namespace kiln
