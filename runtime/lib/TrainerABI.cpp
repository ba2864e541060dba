//===- TrainerABI.cpp - The C ABI of kiln::Trainer ------------------------===//
//
// This file implements the C functions of kiln/runtime/TrainerABI.h over
// kiln::Trainer: a kiln_trainer is a Trainer; inputs are wrapped as CPU
// tensors over the caller's buffers (no copy unless they are unaligned);
// each function catches every exception at the boundary and turns a
// kiln::Status into a status code and a message.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/TrainerABI.h"

#include "kiln/runtime/Trainer.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>

struct kiln_trainer {
  kiln::Trainer trainer;
};

namespace {

/// Writes `message` to `err` (when there is room) and returns `code`.
int fail(int code, const std::string &message, char *err, size_t errlen) {
  if (err && errlen) {
    std::snprintf(err, errlen, "%s", message.c_str());
    err[errlen - 1] = 0;
  }
  return code;
}

int fromStatus(const kiln::Status &s, int code, char *err, size_t errlen) {
  if (s)
    return KILN_TRAINER_OK;
  return fail(code, s.message(), err, errlen);
}

/// Runs `fn` (returning a status code), turning exceptions into
/// KILN_TRAINER_ERR_INTERNAL.
template <typename Fn> int guarded(char *err, size_t errlen, Fn &&fn) {
  try {
    return fn();
  } catch (const std::exception &e) {
    return fail(KILN_TRAINER_ERR_INTERNAL,
                std::string("internal error: ") + e.what(), err, errlen);
  } catch (...) {
    return fail(KILN_TRAINER_ERR_INTERNAL, "internal error", err, errlen);
  }
}

const kiln::ValueSignature *inputAt(const kiln_trainer *t, int i) {
  if (!t || i < 0 || static_cast<size_t>(i) >= t->trainer.inputs().size())
    return nullptr;
  return &t->trainer.inputs()[static_cast<size_t>(i)];
}

} // namespace

extern "C" {

const char *kiln_trainer_status_string(int code) {
  switch (code) {
  case KILN_TRAINER_OK:
    return "ok";
  case KILN_TRAINER_ERR_ARGUMENT:
    return "invalid argument";
  case KILN_TRAINER_ERR_LOAD:
    return "load error";
  case KILN_TRAINER_ERR_RUN:
    return "run error";
  case KILN_TRAINER_ERR_IO:
    return "i/o error";
  case KILN_TRAINER_ERR_INTERNAL:
    return "internal error";
  default:
    return "unknown";
  }
}

int kiln_trainer_load(const char *dir, kiln_trainer **out, char *err,
                      size_t errlen) {
  if (!dir || !out)
    return fail(KILN_TRAINER_ERR_ARGUMENT,
                "kiln_trainer_load: dir and out must not be NULL", err, errlen);
  *out = nullptr;
  return guarded(err, errlen, [&] {
    kiln::Expected<kiln::Trainer> t = kiln::Trainer::load(dir);
    if (!t)
      return fail(KILN_TRAINER_ERR_LOAD, t.status().message(), err, errlen);
    *out = new kiln_trainer{t.take()};
    return KILN_TRAINER_OK;
  });
}

int kiln_trainer_num_inputs(const kiln_trainer *trainer) {
  return trainer ? static_cast<int>(trainer->trainer.inputs().size()) : -1;
}

const char *kiln_trainer_input_name(const kiln_trainer *trainer, int i) {
  const kiln::ValueSignature *sig = inputAt(trainer, i);
  return sig ? sig->name.c_str() : nullptr;
}

int kiln_trainer_input_dtype(const kiln_trainer *trainer, int i) {
  const kiln::ValueSignature *sig = inputAt(trainer, i);
  return sig ? static_cast<int>(sig->dtype) : -1;
}

int kiln_trainer_input_rank(const kiln_trainer *trainer, int i) {
  const kiln::ValueSignature *sig = inputAt(trainer, i);
  return sig ? static_cast<int>(sig->shape.size()) : -1;
}

const int64_t *kiln_trainer_input_shape(const kiln_trainer *trainer, int i) {
  const kiln::ValueSignature *sig = inputAt(trainer, i);
  return sig ? sig->shape.data() : nullptr;
}

int kiln_trainer_step(kiln_trainer *trainer, const void *const *inputs,
                      double *loss, char *err, size_t errlen) {
  if (!trainer)
    return fail(KILN_TRAINER_ERR_ARGUMENT,
                "kiln_trainer_step: the trainer is NULL", err, errlen);
  const std::vector<kiln::ValueSignature> &sigs = trainer->trainer.inputs();
  if (!inputs && !sigs.empty())
    return fail(KILN_TRAINER_ERR_ARGUMENT, "kiln_trainer_step: inputs is NULL",
                err, errlen);
  return guarded(err, errlen, [&] {
    kiln::NamedTensors named;
    for (size_t i = 0; i < sigs.size(); ++i) {
      const kiln::ValueSignature &sig = sigs[i];
      size_t bytes = static_cast<size_t>(kiln::numElements(sig.shape)) *
                     kiln::dtypeSize(sig.dtype);
      if (!inputs[i] && bytes)
        return fail(KILN_TRAINER_ERR_ARGUMENT,
                    kiln::strCat("kiln_trainer_step: input ", i, " ('",
                                 sig.name, "') is NULL"),
                    err, errlen);
      auto storage = kiln::Storage::wrap(const_cast<void *>(inputs[i]), bytes,
                                         kiln::Device::CPU, nullptr);
      named.emplace_back(sig.name,
                         kiln::Tensor(std::move(storage), sig.dtype, sig.shape,
                                      kiln::contiguousStrides(sig.shape), 0));
    }
    kiln::Expected<double> l = trainer->trainer.trainStep(named);
    if (!l)
      return fail(KILN_TRAINER_ERR_RUN, l.status().message(), err, errlen);
    if (loss)
      *loss = *l;
    return KILN_TRAINER_OK;
  });
}

int kiln_trainer_save(const kiln_trainer *trainer, const char *path, char *err,
                      size_t errlen) {
  if (!trainer || !path)
    return fail(KILN_TRAINER_ERR_ARGUMENT,
                "kiln_trainer_save: trainer and path must not be NULL", err,
                errlen);
  return guarded(err, errlen, [&] {
    return fromStatus(trainer->trainer.save(path), KILN_TRAINER_ERR_IO, err,
                      errlen);
  });
}

int kiln_trainer_load_state(kiln_trainer *trainer, const char *path, char *err,
                            size_t errlen) {
  if (!trainer || !path)
    return fail(KILN_TRAINER_ERR_ARGUMENT,
                "kiln_trainer_load_state: trainer and path must not be NULL",
                err, errlen);
  return guarded(err, errlen, [&] {
    return fromStatus(trainer->trainer.loadState(path), KILN_TRAINER_ERR_IO,
                      err, errlen);
  });
}

int kiln_trainer_set_lr(kiln_trainer *trainer, double lr) {
  if (!trainer || !std::isfinite(lr))
    return KILN_TRAINER_ERR_ARGUMENT;
  trainer->trainer.setLearningRate(lr);
  return KILN_TRAINER_OK;
}

double kiln_trainer_lr(const kiln_trainer *trainer) {
  return trainer ? trainer->trainer.learningRate()
                 : std::numeric_limits<double>::quiet_NaN();
}

int64_t kiln_trainer_step_count(const kiln_trainer *trainer) {
  return trainer ? trainer->trainer.step() : -1;
}

void kiln_trainer_destroy(kiln_trainer *trainer) { delete trainer; }

} // extern "C"
