//===- OpCaseData.h - Loading checked-in kernel test cases ---- -*- C++ -*-===//
//
// This file implements small helpers of the runtime unit tests that load the
// cases written by gen_resize_cases.py: a case folder under data/ holds
// operands in_<k>.npy, expected results out_<k>.npy and attrs.txt (one
// attribute a line: `name kind values...`, kind s/i/f/I/F), and
// data/<op>_cases.txt lists the folders. Data is found relative to this
// header's own path, so the tests run from any working directory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_RUNTIME_OPCASEDATA_H
#define KILN_TEST_UNIT_RUNTIME_OPCASEDATA_H

#include "kiln/runtime/Attributes.h"
#include "kiln/runtime/TensorIO.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kiln {
namespace testdata {

/// The data/ folder next to this header.
inline std::string dataDir() {
  return std::string(KILN_TEST_SOURCE_DIR) + "/test/unit/runtime/data";
}

/// The case names listed in data/<op>_cases.txt (empty when missing).
inline std::vector<std::string> caseNames(const std::string &op) {
  std::ifstream in(dataDir() + "/" + op + "_cases.txt");
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      names.push_back(line);
  return names;
}

/// One loaded case.
struct OpCase {
  std::vector<Tensor> inputs;
  std::vector<Tensor> expected;
  Attributes attrs;
  std::string error; ///< non-empty when loading failed.
};

/// Parses attrs.txt lines into `attrs`.
inline void parseAttrs(std::istream &in, Attributes &attrs) {
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string name, kind;
    if (!(ls >> name >> kind))
      continue;
    if (kind == "s") {
      std::string v;
      ls >> v;
      attrs.set(name, v);
    } else if (kind == "i") {
      int64_t v = 0;
      ls >> v;
      attrs.set(name, v);
    } else if (kind == "f") {
      std::string v;
      ls >> v;
      attrs.set(name, std::strtod(v.c_str(), nullptr));
    } else if (kind == "I") {
      std::vector<int64_t> v;
      int64_t x;
      while (ls >> x)
        v.push_back(x);
      attrs.set(name, v);
    } else if (kind == "F") {
      std::vector<double> v;
      std::string x;
      while (ls >> x)
        v.push_back(std::strtod(x.c_str(), nullptr));
      attrs.set(name, v);
    }
  }
}

/// Loads data/<op>/<name>: `numInputs` operands and out_<k>.npy for k <
/// `numResults` (an undefined Tensor where the file is missing).
inline OpCase loadCase(const std::string &op, const std::string &name,
                       int numInputs, int numResults = 1) {
  OpCase c;
  std::string dir = dataDir() + "/" + op + "/" + name + "/";
  for (int k = 0; k < numInputs; ++k) {
    Expected<Tensor> t = readNpy(dir + "in_" + std::to_string(k) + ".npy");
    if (!t) {
      c.error = t.status().message();
      return c;
    }
    c.inputs.push_back(t.take());
  }
  for (int k = 0; k < numResults; ++k) {
    std::string path = dir + "out_" + std::to_string(k) + ".npy";
    if (!std::ifstream(path).good()) {
      c.expected.emplace_back();
      continue;
    }
    Expected<Tensor> t = readNpy(path);
    if (!t) {
      c.error = t.status().message();
      return c;
    }
    c.expected.push_back(t.take());
  }
  std::ifstream attrs(dir + "attrs.txt");
  if (!attrs) {
    c.error = "cannot open " + dir + "attrs.txt";
    return c;
  }
  parseAttrs(attrs, c.attrs);
  return c;
}

/// Compares `got` with `want` elementwise: same dtype and shape, and
/// |got - want| <= atol + rtol * |want|. Returns "" or what differs.
inline std::string compareTensors(const Tensor &got, const Tensor &want,
                                  double rtol, double atol) {
  if (!got.defined())
    return "result not set";
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + got.typeString() + ", expected " + want.typeString();
  std::vector<double> g = got.toDoubleVector(), w = want.toDoubleVector();
  for (size_t i = 0; i < g.size(); ++i) {
    bool bothNan = std::isnan(g[i]) && std::isnan(w[i]);
    if (!bothNan &&
        !(std::fabs(g[i] - w[i]) <= atol + rtol * std::fabs(w[i]))) {
      std::ostringstream os;
      os << "element " << i << ": got " << g[i] << ", expected " << w[i];
      return os.str();
    }
  }
  return "";
}

} // namespace testdata
} // namespace kiln

#endif // KILN_TEST_UNIT_RUNTIME_OPCASEDATA_H
