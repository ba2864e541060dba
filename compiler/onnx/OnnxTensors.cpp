//===- OnnxTensors.cpp - ONNX TensorProto to runtime tensors --------------===//
//
// This file implements the conversions from ONNX TensorProto messages (inline
// typed fields, raw_data, and external data files laid out as the ONNX spec
// describes: location, offset, length) to runtime tensors, and the reader of
// serialized TensorProto files (.pb) of the ONNX test data sets.
//
//===----------------------------------------------------------------------===//

#include "OnnxTraceContext.h"
#include "OnnxTracer.h"

#include "kiln/runtime/SizeLimits.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace kiln {
namespace tracer {

std::optional<DType> dtypeFromOnnx(int32_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return DType::F32;
  case onnx::TensorProto::UINT8:
    return DType::U8;
  case onnx::TensorProto::INT8:
    return DType::I8;
  case onnx::TensorProto::INT32:
    return DType::I32;
  case onnx::TensorProto::INT64:
    return DType::I64;
  case onnx::TensorProto::BOOL:
    return DType::Bool;
  case onnx::TensorProto::FLOAT16:
    return DType::F16;
  case onnx::TensorProto::DOUBLE:
    return DType::F64;
  case onnx::TensorProto::BFLOAT16:
    return DType::BF16;
  case onnx::TensorProto::UINT16:
    return DType::U16;
  case onnx::TensorProto::UINT32:
    return DType::U32;
  case onnx::TensorProto::UINT64:
    return DType::U64;
  case onnx::TensorProto::INT16:
    return DType::I16;
  // The types newer than the protobuf definitions Kiln compiles against, by
  // number (onnx 1.22's TensorProto.DataType).
  case 17:
    return DType::F8E4M3FN;
  case 18:
    return DType::F8E4M3FNUZ;
  case 19:
    return DType::F8E5M2;
  case 20:
    return DType::F8E5M2FNUZ;
  case 21:
    return DType::U4;
  case 22:
    return DType::I4;
  case 25:
    return DType::U2;
  case 26:
    return DType::I2;
  default:
    return std::nullopt;
  }
}

int32_t onnxTypeFromDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return onnx::TensorProto::FLOAT;
  case DType::F16:
    return onnx::TensorProto::FLOAT16;
  case DType::BF16:
    return onnx::TensorProto::BFLOAT16;
  case DType::F64:
    return onnx::TensorProto::DOUBLE;
  case DType::I64:
    return onnx::TensorProto::INT64;
  case DType::I32:
    return onnx::TensorProto::INT32;
  case DType::I8:
    return onnx::TensorProto::INT8;
  case DType::U8:
    return onnx::TensorProto::UINT8;
  case DType::Bool:
    return onnx::TensorProto::BOOL;
  case DType::U16:
    return onnx::TensorProto::UINT16;
  case DType::U32:
    return onnx::TensorProto::UINT32;
  case DType::U64:
    return onnx::TensorProto::UINT64;
  case DType::I16:
    return onnx::TensorProto::INT16;
  case DType::F8E4M3FN:
    return 17;
  case DType::F8E4M3FNUZ:
    return 18;
  case DType::F8E5M2:
    return 19;
  case DType::F8E5M2FNUZ:
    return 20;
  case DType::U4:
    return 21;
  case DType::I4:
    return 22;
  case DType::U2:
    return 25;
  case DType::I2:
    return 26;
  }
  return onnx::TensorProto::UNDEFINED;
}

std::string onnxTypeName(int32_t onnxType) {
  // Names of the TensorProto.DataType enum (onnx 1.22), including the ones
  // newer than the protobuf definitions Kiln compiles against.
  static const char *const names[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",
      "INT8",           "UINT16",     "INT16",
      "INT32",          "INT64",      "STRING",
      "BOOL",           "FLOAT16",    "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",
      "COMPLEX128",     "BFLOAT16",   "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",          "INT4",       "FLOAT4E2M1",
      "FLOAT8E8M0",     "UINT2",      "INT2"};
  if (onnxType >= 0 &&
      onnxType < static_cast<int32_t>(sizeof(names) / sizeof(names[0])))
    return names[onnxType];
  return strCat("data type ", onnxType);
}

const char *supportedOnnxTypesNote() {
  return "(Kiln supports float, float16, bfloat16, double, int64, int32, "
         "int16, int8, uint64, uint32, uint16, uint8, bool, the float8 types "
         "FLOAT8E4M3FN, FLOAT8E4M3FNUZ, FLOAT8E5M2, FLOAT8E5M2FNUZ, and INT4, "
         "UINT4, INT2, UINT2)";
}

namespace {

/// Reads `length` bytes at `offset` of `path` into `out` (whole file when
/// length < 0).
Status readFileRange(const std::string &path, int64_t offset, int64_t length,
                     const std::string &tensorName, std::string &out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return Status::error(strCat("cannot open external data file '", path,
                                "' of tensor '", tensorName, "'"));
  int64_t size = static_cast<int64_t>(in.tellg());
  if (offset < 0 || offset > size)
    return Status::error(strCat("external data of tensor '", tensorName,
                                "': offset ", offset, " is outside the file '",
                                path, "' (", size, " bytes)"));
  if (length < 0)
    length = size - offset;
  if (length > size - offset)
    return Status::error(strCat("external data of tensor '", tensorName,
                                "': offset ", offset, " + length ", length,
                                " is past the end of '", path, "' (", size,
                                " bytes)"));
  out.resize(static_cast<size_t>(length));
  in.seekg(offset);
  if (length > 0 && !in.read(&out[0], length))
    return Status::error(strCat("cannot read external data file '", path,
                                "' of tensor '", tensorName, "'"));
  return Status::ok();
}

/// Unpacks `n` sub-byte integers of `dtype` (ONNX: element i in bits
/// [b*(i%k), b*(i%k)+b) of byte i/k, k = 8/b) from `byteAt` into one byte
/// each, sign-extended for the signed types.
template <typename ByteAt>
void unpackSubByte(DType dtype, ByteAt byteAt, int64_t n, uint8_t *out) {
  const int bits = packedBits(dtype), perByte = 8 / bits;
  const unsigned mask = (1u << bits) - 1u, signBit = 1u << (bits - 1);
  const bool isSigned = dtype == DType::I4 || dtype == DType::I2;
  for (int64_t i = 0; i < n; ++i) {
    unsigned v =
        (static_cast<unsigned>(byteAt(i / perByte)) >> (bits * (i % perByte))) &
        mask;
    if (isSigned && (v & signBit))
      v |= ~mask;
    out[i] = static_cast<uint8_t>(v);
  }
}

template <typename Src, typename Dst>
void copyConverted(const Src &src, Dst *dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = static_cast<Dst>(src.Get(static_cast<int>(i)));
}

} // namespace

Expected<ProtoTensor> readProtoTensor(const onnx::TensorProto &proto,
                                      const std::string &modelDir) {
  const std::string name =
      proto.name().empty() ? std::string("<unnamed>") : proto.name();
  ProtoTensor result;
  std::optional<DType> dtype = dtypeFromOnnx(proto.data_type());
  if (!dtype)
    return Status::error(strCat("tensor '", name, "' has unsupported dtype ",
                                onnxTypeName(proto.data_type()), " ",
                                supportedOnnxTypesNote()));
  result.dtype = *dtype;
  for (int64_t d : proto.dims()) {
    if (d < 0)
      return Status::error(
          strCat("tensor '", name, "' has a negative dimension ", d));
    result.shape.push_back(d);
  }
  if (result.shape.size() > static_cast<size_t>(kMaxTensorRank))
    return Status::error(strCat("tensor '", name, "' has rank ",
                                result.shape.size(),
                                ", more than the limit of ", kMaxTensorRank));
  std::optional<int64_t> count = checkedElementCount(result.shape);
  if (!count)
    return Status::error(strCat("tensor '", name, "' has shape ",
                                shapeToString(result.shape),
                                ": more than the limit of 2^40 elements "
                                "(docs/reliability.md)"));
  const int64_t numel = *count;
  // The bytes in the file: sub-byte integers are packed.
  const int bits = packedBits(*dtype);
  const size_t nbytes =
      (static_cast<size_t>(numel) * static_cast<size_t>(bits) + 7) / 8;

  // Raw bytes: inline raw_data or an external file.
  std::string externalBytes;
  const std::string *raw = nullptr;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : proto.external_data()) {
      try {
        if (kv.key() == "location")
          location = kv.value();
        else if (kv.key() == "offset")
          offset = std::stoll(kv.value());
        else if (kv.key() == "length")
          length = std::stoll(kv.value());
      } catch (...) {
        return Status::error(strCat("tensor '", name,
                                    "' has a malformed external data entry '",
                                    kv.key(), "' = '", kv.value(), "'"));
      }
    }
    if (location.empty())
      return Status::error(
          strCat("tensor '", name, "' uses external data without a location"));
    if (location[0] == '/' || location.find("..") != std::string::npos)
      return Status::error(strCat("tensor '", name,
                                  "': external data location '", location,
                                  "' must be a path inside the model's "
                                  "folder"));
    std::string path = modelDir.empty() ? location : modelDir + "/" + location;
    std::ifstream probe(path, std::ios::binary);
    if (!probe) {
      result.externalMissing = true;
      return result;
    }
    if (length >= 0 && static_cast<size_t>(length) < nbytes)
      return Status::error(strCat(
          "external data of tensor '", name, "' in '", path, "': length ",
          length, " is smaller than the ", nbytes, " bytes its shape needs"));
    KILN_RETURN_IF_ERROR(
        readFileRange(path, offset, int64_t(nbytes), name, externalBytes));
    raw = &externalBytes;
  } else if (proto.has_raw_data()) {
    raw = &proto.raw_data();
  }

  // The data present bounds the allocation: check it before allocating.
  if (raw) {
    if (raw->size() != nbytes)
      return Status::error(strCat("tensor '", name, "' holds ", raw->size(),
                                  " bytes of data, its shape ",
                                  shapeToString(result.shape), " needs ",
                                  nbytes));
    Tensor t = Tensor::empty(*dtype, result.shape);
    if (isSubByteInteger(*dtype))
      unpackSubByte(
          *dtype,
          [&](int64_t i) { return static_cast<unsigned char>((*raw)[i]); },
          numel, static_cast<uint8_t *>(t.rawData()));
    else if (nbytes)
      std::memcpy(t.rawData(), raw->data(), nbytes);
    result.tensor = t;
    return result;
  }

  // Typed fields.
  int64_t present = 0, needed = numel;
  if (isSubByteInteger(*dtype))
    needed = static_cast<int64_t>(nbytes); // One packed byte per int32.
  switch (*dtype) {
  case DType::F32:
    present = proto.float_data_size();
    break;
  case DType::F64:
    present = proto.double_data_size();
    break;
  case DType::I64:
    present = proto.int64_data_size();
    break;
  case DType::U32:
  case DType::U64:
    present = proto.uint64_data_size();
    break;
  default:
    present = proto.int32_data_size();
    break;
  }
  if (present != needed)
    return Status::error(
        strCat("tensor '", name, "' holds ", present, " values, its shape ",
               shapeToString(result.shape), " needs ", needed));
  Tensor t = Tensor::empty(*dtype, result.shape);
  switch (*dtype) {
  case DType::F32:
    copyConverted(proto.float_data(), t.data<float>(), numel);
    break;
  case DType::F64:
    copyConverted(proto.double_data(), t.data<double>(), numel);
    break;
  case DType::I64:
    copyConverted(proto.int64_data(), t.data<int64_t>(), numel);
    break;
  case DType::I32:
    copyConverted(proto.int32_data(), t.data<int32_t>(), numel);
    break;
  case DType::I8:
    copyConverted(proto.int32_data(), t.data<int8_t>(), numel);
    break;
  case DType::U8:
    copyConverted(proto.int32_data(), t.data<uint8_t>(), numel);
    break;
  case DType::U16:
    copyConverted(proto.int32_data(), t.data<uint16_t>(), numel);
    break;
  case DType::I16:
    copyConverted(proto.int32_data(), t.data<int16_t>(), numel);
    break;
  case DType::U32:
    copyConverted(proto.uint64_data(), t.data<uint32_t>(), numel);
    break;
  case DType::U64:
    copyConverted(proto.uint64_data(), t.data<uint64_t>(), numel);
    break;
  case DType::Bool: {
    bool *p = t.data<bool>();
    for (int64_t i = 0; i < numel; ++i)
      p[i] = proto.int32_data(static_cast<int>(i)) != 0;
    break;
  }
  case DType::F16:
  case DType::BF16: {
    auto *p = static_cast<uint16_t *>(t.rawData());
    for (int64_t i = 0; i < numel; ++i)
      p[i] = static_cast<uint16_t>(proto.int32_data(static_cast<int>(i)));
    break;
  }
  case DType::F8E4M3FN:
  case DType::F8E4M3FNUZ:
  case DType::F8E5M2:
  case DType::F8E5M2FNUZ: {
    auto *p = static_cast<uint8_t *>(t.rawData());
    for (int64_t i = 0; i < numel; ++i)
      p[i] = static_cast<uint8_t>(proto.int32_data(static_cast<int>(i)));
    break;
  }
  case DType::I4:
  case DType::U4:
  case DType::I2:
  case DType::U2:
    unpackSubByte(
        *dtype,
        [&](int64_t i) {
          return static_cast<uint8_t>(proto.int32_data(static_cast<int>(i)));
        },
        numel, static_cast<uint8_t *>(t.rawData()));
    break;
  }
  result.tensor = t;
  return result;
}

} // namespace tracer

Expected<Tensor> readTensorProtoFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(strCat("cannot open tensor file '", path, "'"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromString(bytes))
    return Status::error(strCat("'", path,
                                "' is not a serialized ONNX TensorProto "
                                "(truncated or corrupt file?)"));
  std::string dir;
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos)
    dir = path.substr(0, slash);
  else
    dir = ".";
  Expected<tracer::ProtoTensor> t = tracer::readProtoTensor(proto, dir);
  if (!t)
    return t.status().withContext(path);
  if (t->externalMissing)
    return Status::error(strCat(path, ": the external data file of tensor '",
                                proto.name(), "' is missing"));
  return t->tensor;
}

} // namespace kiln
