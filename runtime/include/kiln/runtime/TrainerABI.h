/*===- TrainerABI.h - The C ABI of kiln::Trainer ------------------*- C -*-===//
 *
 * This file declares the C functions that libkiln_runtime.so exports for
 * training from C (or any language with a C FFI): loading a training
 * package (kiln::Trainer, Trainer.h), its model inputs, training steps,
 * checkpoints and the learning rate. docs/runtime-api.md, "Training
 * packages", describes the package.
 *
 * Inputs are CPU buffers, one per model input in input order (0 to
 * kiln_trainer_num_inputs() - 1), contiguous (row-major), of the declared
 * dtype (kiln::DType codes: 0 f32, 1 f16, 2 bf16, 3 f64, 4 i64, 5 i32, 6 i8,
 * 7 u8, 8 bool) and shape; they are read during the call only.
 *
 * Errors: functions returning int return KILN_TRAINER_OK (0) on success
 * and one of the KILN_TRAINER_ERR_* codes on error, with a message written
 * to `err` (at most `errlen` bytes, NUL-terminated; `err` may be NULL).
 * No C++ exception crosses these functions.
 *
 * Thread safety: a kiln_trainer must be used by one thread at a time;
 * different trainers are independent.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_RUNTIME_TRAINERABI_H
#define KILN_RUNTIME_TRAINERABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define KILN_TRAINER_EXPORT __attribute__((visibility("default")))
#else
#define KILN_TRAINER_EXPORT
#endif

/** Status codes. */
#define KILN_TRAINER_OK 0
/** A NULL handle or pointer, an input index out of range, a non-finite
 *  learning rate. */
#define KILN_TRAINER_ERR_ARGUMENT 1
/** kiln_trainer_load failed (the package or its weights). */
#define KILN_TRAINER_ERR_LOAD 2
/** A training step failed. */
#define KILN_TRAINER_ERR_RUN 3
/** Writing or reading a checkpoint failed. */
#define KILN_TRAINER_ERR_IO 4
/** An unexpected internal failure (out of memory). */
#define KILN_TRAINER_ERR_INTERNAL 5

typedef struct kiln_trainer kiln_trainer;

/** A short name of a status code: "ok", "invalid argument", "load error",
 *  "run error", "i/o error", "internal error", or "unknown". */
KILN_TRAINER_EXPORT const char *kiln_trainer_status_string(int code);

/** Loads the training package in `dir` with the package's weights and
 *  learning rate, on the package's device; stores a new handle in `*out`. */
KILN_TRAINER_EXPORT int kiln_trainer_load(const char *dir, kiln_trainer **out,
                                          char *err, size_t errlen);

/** The model inputs: count (-1 for a NULL handle), and for input `i` its
 *  name, dtype code, rank and shape (NULL / -1 when `i` is out of range).
 *  The pointers stay valid until kiln_trainer_destroy. */
KILN_TRAINER_EXPORT int kiln_trainer_num_inputs(const kiln_trainer *trainer);
KILN_TRAINER_EXPORT const char *
kiln_trainer_input_name(const kiln_trainer *trainer, int i);
KILN_TRAINER_EXPORT int kiln_trainer_input_dtype(const kiln_trainer *trainer,
                                                 int i);
KILN_TRAINER_EXPORT int kiln_trainer_input_rank(const kiln_trainer *trainer,
                                                int i);
KILN_TRAINER_EXPORT const int64_t *
kiln_trainer_input_shape(const kiln_trainer *trainer, int i);

/** One training step (kiln::Trainer::trainStep): `inputs` holds one CPU
 *  pointer per model input (see the file comment); `*loss` (when `loss` is
 *  not NULL) receives the loss computed before the update. */
KILN_TRAINER_EXPORT int kiln_trainer_step(kiln_trainer *trainer,
                                          const void *const *inputs,
                                          double *loss, char *err,
                                          size_t errlen);

/** Writes a checkpoint (parameters, optimizer state, step) to `path`
 *  (safetensors; kiln::Trainer::save). */
KILN_TRAINER_EXPORT int kiln_trainer_save(const kiln_trainer *trainer,
                                          const char *path, char *err,
                                          size_t errlen);

/** Reads a checkpoint or a weights file (kiln::Trainer::loadState);
 *  nothing changes on error. */
KILN_TRAINER_EXPORT int kiln_trainer_load_state(kiln_trainer *trainer,
                                                const char *path, char *err,
                                                size_t errlen);

/** Sets the learning rate of the following steps (finite). */
KILN_TRAINER_EXPORT int kiln_trainer_set_lr(kiln_trainer *trainer, double lr);

/** The learning rate (NaN for a NULL handle) and the steps taken (-1 for
 *  a NULL handle). */
KILN_TRAINER_EXPORT double kiln_trainer_lr(const kiln_trainer *trainer);
KILN_TRAINER_EXPORT int64_t
kiln_trainer_step_count(const kiln_trainer *trainer);

/** Releases a handle from kiln_trainer_load (NULL is ignored). */
KILN_TRAINER_EXPORT void kiln_trainer_destroy(kiln_trainer *trainer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* KILN_RUNTIME_TRAINERABI_H */
