//===- Attributes.h - Op attributes seen by runtime kernels ----*- C++ -*-===//
//
// This file declares Attributes, the attribute dictionary of one op as the
// runtime sees it. The compiler converts each MLIR attribute of a kiln op into
// one of these value kinds (integer, float, string, integer list, float list,
// dtype, tensor), keyed by the attribute's ODS name.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_ATTRIBUTES_H
#define KILN_RUNTIME_ATTRIBUTES_H

#include "kiln/runtime/Tensor.h"

#include <map>
#include <string>
#include <variant>
#include <vector>

namespace kiln {

/// One attribute value.
using AttrValue =
    std::variant<int64_t, double, std::string, std::vector<int64_t>,
                 std::vector<double>, DType, Tensor>;

/// The named attributes of one op.
class Attributes {
public:
  void set(const std::string &name, AttrValue value) {
    values_[name] = std::move(value);
  }
  bool has(const std::string &name) const { return values_.count(name) != 0; }
  const std::map<std::string, AttrValue> &all() const { return values_; }

  /// Typed getters: return the default when the attribute is absent.
  /// Integer attributes also answer getFloat; bools are integers (0/1).
  int64_t getInt(const std::string &name, int64_t dflt = 0) const;
  double getFloat(const std::string &name, double dflt = 0.0) const;
  std::string getString(const std::string &name,
                        const std::string &dflt = "") const;
  std::vector<int64_t> getInts(const std::string &name) const;
  std::vector<double> getFloats(const std::string &name) const;
  DType getDType(const std::string &name, DType dflt = DType::F32) const;
  Tensor getTensor(const std::string &name) const;

private:
  std::map<std::string, AttrValue> values_;
};

} // namespace kiln

#endif // KILN_RUNTIME_ATTRIBUTES_H
