//===- ProgramFormat.h - What program.json's writer and reader share -*- C++ -*-===//
//
// This file declares what the writer (ProgramIO.cpp) and the reader
// (ProgramReader.cpp) of program.json and program.bin share: the JSON type,
// the alignment of tensors in program.bin, the nesting limit of regions,
// and the encoding of doubles (inf and NaN as strings, since JSON has
// neither). ProgramIO.cpp documents the format.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_LIB_PROGRAMFORMAT_H
#define KILN_RUNTIME_LIB_PROGRAMFORMAT_H

#include "kiln/runtime/Status.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace kiln {
namespace programio {

using Json = nlohmann::ordered_json;

/// Tensor bytes in program.bin start at multiples of this.
constexpr uint64_t kAlignment = 64;
/// Regions nested deeper than this are rejected (a corrupt file must not
/// exhaust the stack of the reader or the executor).
constexpr int kMaxRegionDepth = 64;

/// `dir`/`file`.
std::string joinPath(const std::string &dir, const char *file);

/// A double as JSON: a number with the shortest digits that read back to
/// it, or "inf", "-inf", "nan", "nan:0x<16 hex digits>".
Json encodeDouble(double d);
/// The inverse of encodeDouble; an error for anything else.
Expected<double> decodeDouble(const Json &j);

} // namespace programio
} // namespace kiln

#endif // KILN_RUNTIME_LIB_PROGRAMFORMAT_H
