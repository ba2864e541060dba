//===- TensorIO.cpp - Reading and writing .npy files ----------------------===//
//
// This file implements the NumPy .npy reader (format versions 1.0, 2.0 and
// 3.0; little-endian or byte-order-free dtypes f4 f2 f8 i8 i4 i1 u1 b1, and
// V2 as bfloat16, the descr ml_dtypes saves it with; C or
// Fortran order, the latter transposed to C order) and writer (version 1.0,
// or 2.0 when the header is long; written to "<path>.tmp" and renamed so no
// half-written file is left under the final name; bf16 as <V2).
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/TensorIO.h"
#include "kiln/runtime/SizeLimits.h"

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace kiln {

namespace {

/// A tiny cursor over the header dictionary text.
struct HeaderParser {
  const std::string &text;
  size_t pos = 0;

  void skipSpace() {
    while (pos < text.size() && std::isspace((unsigned char)text[pos]))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out) {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      return false;
    char q = text[pos++];
    size_t end = text.find(q, pos);
    if (end == std::string::npos)
      return false;
    out = text.substr(pos, end - pos);
    pos = end + 1;
    return true;
  }
  bool parseWord(std::string &out) {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && std::isalnum((unsigned char)text[pos]))
      ++pos;
    out = text.substr(start, pos - start);
    return !out.empty();
  }
  bool parseShape(Shape &out) {
    if (!consume('('))
      return false;
    out.clear();
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      size_t start = pos;
      while (pos < text.size() && std::isdigit((unsigned char)text[pos]))
        ++pos;
      if (start == pos || pos - start > 18)
        return false;
      out.push_back(std::stoll(text.substr(start, pos - start)));
      skipSpace();
      if (consume(')'))
        return true;
      if (!consume(','))
        return false;
    }
  }
};

Expected<DType> dtypeFromDescr(const std::string &descr,
                               const std::string &what) {
  std::string d = descr;
  if (d.size() >= 2 && (d[0] == '<' || d[0] == '|' || d[0] == '=')) {
    d = d.substr(1);
  } else if (!d.empty() && d[0] == '>') {
    // Single-byte types have no byte order; '>' on them is harmless.
    if (d != ">i1" && d != ">u1" && d != ">b1")
      return Status::error(strCat(what, ": big-endian dtype '", descr,
                                  "' is not supported (save little-endian)"));
    d = d.substr(1);
  }
  if (d == "f4")
    return DType::F32;
  if (d == "f2")
    return DType::F16;
  if (d == "f8")
    return DType::F64;
  if (d == "i8")
    return DType::I64;
  if (d == "i4")
    return DType::I32;
  if (d == "i1")
    return DType::I8;
  if (d == "u1")
    return DType::U8;
  if (d == "i2")
    return DType::I16;
  if (d == "u2")
    return DType::U16;
  if (d == "u4")
    return DType::U32;
  if (d == "u8")
    return DType::U64;
  if (d == "b1" || d == "?")
    return DType::Bool;
  // NumPy has no bfloat16: ml_dtypes' bfloat16 (what JAX and PyTorch users
  // save) is written as a 2-byte void, '<V2', and read back as bfloat16.
  if (d == "V2")
    return DType::BF16;
  return Status::error(strCat(what, ": unsupported dtype '", descr,
                              "' (supported: <f4 <f2 <f8 <i8 <i4 <i2 |i1 "
                              "<u8 <u4 <u2 |u1 |b1, and <V2 for bfloat16 as "
                              "ml_dtypes saves it)"));
}

Expected<const char *> descrOf(DType t) {
  switch (t) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::F64:
    return "<f8";
  case DType::I64:
    return "<i8";
  case DType::I32:
    return "<i4";
  case DType::I8:
    return "|i1";
  case DType::U8:
    return "|u1";
  case DType::Bool:
    return "|b1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::I16:
    return "<i2";
  case DType::BF16:
    // ml_dtypes' bfloat16 descr: np.load gives a 2-byte void array, which
    // `.view(ml_dtypes.bfloat16)` makes bfloat16 again.
    return "<V2";
  default:
    break;
  }
  return Status::error(strCat("NumPy has no dtype for ", dtypeName(t),
                              "; save the tensor as an ONNX .pb file"));
}

uint32_t readLE(const std::string &bytes, size_t pos, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(bytes[pos + i]);
  return v;
}

} // namespace

Expected<Tensor> parseNpy(const std::string &bytes, const std::string &what) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    return Status::error(strCat(what, ": not a .npy file (bad magic; "
                                      "expected \\x93NUMPY)"));
  int major = static_cast<unsigned char>(bytes[6]);
  int minor = static_cast<unsigned char>(bytes[7]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = readLE(bytes, 8, 2);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return Status::error(strCat(what, ": truncated .npy header"));
    headerLen = readLE(bytes, 8, 4);
    headerStart = 12;
  } else {
    return Status::error(strCat(what, ": unsupported .npy format version ",
                                major, ".", minor, " (supported: 1.0-3.0)"));
  }
  if (bytes.size() < headerStart + headerLen)
    return Status::error(
        strCat(what, ": truncated .npy header (needs ", headerLen, " bytes)"));
  std::string header = bytes.substr(headerStart, headerLen);

  HeaderParser p{header};
  std::string descr;
  bool fortran = false, haveDescr = false, haveOrder = false, haveShape = false;
  Shape shape;
  if (!p.consume('{'))
    return Status::error(strCat(what, ": malformed .npy header '", header,
                                "' (expected a dictionary)"));
  while (!p.consume('}')) {
    std::string key;
    if (!p.parseString(key) || !p.consume(':'))
      return Status::error(
          strCat(what, ": malformed .npy header '", header, "'"));
    if (key == "descr") {
      if (!p.parseString(descr))
        return Status::error(strCat(what, ": the .npy dtype is not a simple "
                                          "type string (structured arrays "
                                          "are not supported)"));
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string word;
      if (!p.parseWord(word) || (word != "True" && word != "False"))
        return Status::error(
            strCat(what, ": malformed fortran_order in .npy header"));
      fortran = word == "True";
      haveOrder = true;
    } else if (key == "shape") {
      if (!p.parseShape(shape))
        return Status::error(
            strCat(what, ": malformed shape in .npy header '", header, "'"));
      haveShape = true;
    } else {
      return Status::error(
          strCat(what, ": unexpected key '", key, "' in .npy header"));
    }
    if (!p.consume(',')) {
      if (!p.consume('}'))
        return Status::error(
            strCat(what, ": malformed .npy header '", header, "'"));
      break;
    }
  }
  if (!haveDescr || !haveOrder || !haveShape)
    return Status::error(strCat(what, ": .npy header lacks descr, "
                                      "fortran_order or shape"));
  Expected<DType> dtype = dtypeFromDescr(descr, what);
  if (!dtype)
    return dtype.status();

  // Guard the element count against overflow before allocating.
  std::optional<int64_t> count = checkedElementCount(shape);
  if (!count || shape.size() > static_cast<size_t>(kMaxTensorRank))
    return Status::error(strCat(what, ": shape ", shapeToString(shape),
                                " is larger than the limit of 2^40 elements "
                                "(docs/reliability.md)"));
  int64_t n = *count;
  size_t dataStart = headerStart + headerLen;
  size_t need = static_cast<size_t>(n) * dtypeSize(*dtype);
  if (bytes.size() - dataStart < need)
    return Status::error(strCat(what, ": truncated .npy data (",
                                dtypeName(*dtype), shapeToString(shape),
                                " needs ", need, " bytes, the file has ",
                                bytes.size() - dataStart, ")"));

  if (!fortran || shape.size() < 2) {
    Tensor t = Tensor::empty(*dtype, shape);
    if (need)
      std::memcpy(t.rawData(), bytes.data() + dataStart, need);
    if (*dtype == DType::Bool) {
      auto *b = static_cast<uint8_t *>(t.rawData());
      for (int64_t i = 0; i < n; ++i)
        b[i] = b[i] != 0;
    }
    return t;
  }
  // Fortran order: the data is C order of the reversed shape; read it so,
  // then permute the dims back and copy.
  Shape reversed(shape.rbegin(), shape.rend());
  Tensor t = Tensor::empty(*dtype, reversed);
  if (need)
    std::memcpy(t.rawData(), bytes.data() + dataStart, need);
  std::vector<int64_t> perm(shape.size());
  for (size_t i = 0; i < perm.size(); ++i)
    perm[i] = static_cast<int64_t>(perm.size() - 1 - i);
  return t.permute(perm).clone();
}

Expected<Tensor> readNpy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat(path, ": cannot open the file for reading"));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return Status::error(strCat(path, ": read error"));
  return parseNpy(ss.str(), path);
}

Status writeNpy(const std::string &path, const Tensor &tensor) {
  if (!tensor.defined())
    return Status::error(strCat(path, ": cannot write an absent tensor"));
  if (tensor.device() != Device::CPU)
    return Status::error(strCat(path, ": the tensor is on ",
                                deviceName(tensor.device()),
                                "; copy it to the cpu first"));
  Expected<const char *> descr = descrOf(tensor.dtype());
  if (!descr)
    return descr.status().withContext(path);

  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i)
    shape += std::to_string(tensor.shape()[i]) + ",";
  if (tensor.shape().size() > 1)
    shape.pop_back(); // (3,) for rank 1, (2,3) otherwise.
  shape += ")";
  std::string dict =
      strCat("{'descr': '", *descr,
             "', 'fortran_order': False, 'shape': ", shape, ", }");
  // Pad with spaces so the data starts at a multiple of 64, end with '\n'.
  bool v2 = dict.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string head = "\x93NUMPY";
  head += static_cast<char>(v2 ? 2 : 1);
  head += '\0';
  uint32_t len = static_cast<uint32_t>(dict.size());
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    head += static_cast<char>((len >> (8 * i)) & 0xff);

  Tensor data = tensor.contiguous();
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error(
          strCat(path, ": cannot open '", tmp, "' for writing"));
    out.write(head.data(), head.size());
    out.write(dict.data(), dict.size());
    if (data.nbytes())
      out.write(static_cast<const char *>(data.rawData()), data.nbytes());
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return Status::error(strCat(path, ": write error on '", tmp, "'"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error(
        strCat(path, ": cannot rename '", tmp, "' to the final name"));
  }
  return Status::ok();
}

} // namespace kiln
