//===- ProgramIO.h - Programs on disk: program.json and .bin ----*- C++ -*-===//
//
// This file declares the on-disk form of a Program (a traced graph, or a
// program with graph breaks: compiled graphs, eager regions and If/Loop
// glue): `program.json` holds the structure (signatures, graphs, nodes with
// their regions and typed attributes) and `program.bin` the bytes of every
// constant and tensor attribute, each at a 64-byte aligned offset. A package
// with graph breaks carries both; docs/runtime-api.md describes the format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_PROGRAMIO_H
#define KILN_RUNTIME_PROGRAMIO_H

#include "kiln/runtime/Program.h"
#include "kiln/runtime/Status.h"

#include <string>

namespace kiln {

/// The format version readProgramFiles accepts and writeProgramFiles writes.
inline constexpr int kProgramFormatVersion = 1;

/// Writes `dir`/program.json and `dir`/program.bin (creating `dir` when
/// missing; each file is written under a temporary name, then renamed).
/// Tensors on another device are copied to the CPU first. Errors name the
/// file and what failed.
Status writeProgramFiles(const Program &program, const std::string &dir);

/// Reads the program written by writeProgramFiles from `dir`. Every error
/// names the file and the entry that is wrong (a missing file, invalid JSON,
/// an unknown dtype or attribute kind, a value id out of range, bytes past
/// the end of program.bin); a corrupt file is an error, never a crash.
/// Constants and tensor attributes share one CPU buffer holding
/// program.bin.
Expected<Program> readProgramFiles(const std::string &dir);

} // namespace kiln

#endif // KILN_RUNTIME_PROGRAMIO_H
