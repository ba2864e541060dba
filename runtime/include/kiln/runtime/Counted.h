//===- Counted.h - A count and its noun, in the right number ----*- C++ -*-===//
//
// This file defines counted(), for messages and summaries that print a count
// with its noun: "1 graph break", "3 graph breaks".
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_COUNTED_H
#define KILN_RUNTIME_COUNTED_H

#include <cstdint>
#include <string>

namespace kiln {

/// `n` and `singular` when n is 1, else `n` and `plural`.
inline std::string counted(int64_t n, const std::string &singular,
                           const std::string &plural) {
  return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

} // namespace kiln

#endif // KILN_RUNTIME_COUNTED_H
