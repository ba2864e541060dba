//===- TensorFiles.cpp - Tensor files the CLI reads and writes ------------===//
//
// This file implements reading and writing tensors as .npy (through the
// runtime) and as ONNX TensorProto .pb files (through ONNX's protobuf
// classes; the reader is the tracer's).
//
//===----------------------------------------------------------------------===//

#include "TensorFiles.h"

#include "compiler/onnx/OnnxTracer.h"
#include "kiln/runtime/Counted.h"
#include "kiln/runtime/TensorIO.h"

#include "onnx/onnx_pb.h"

#include <cstdio>
#include <fstream>

namespace kiln {

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

Expected<Tensor> readTensorFile(const std::string &path) {
  if (endsWith(path, ".npy"))
    return readNpy(path);
  if (endsWith(path, ".pb"))
    return readTensorProtoFile(path);
  return Status::error(strCat("'", path,
                              "': unknown tensor file type; use a .npy file "
                              "or a serialized ONNX TensorProto (.pb)"));
}

Status writeTensorFile(const std::string &path, const Tensor &tensor,
                       const std::string &name) {
  if (endsWith(path, ".npy"))
    return writeNpy(path, tensor);
  if (!endsWith(path, ".pb"))
    return Status::error(
        strCat("'", path, "': unknown output file type; use .npy or .pb"));
  onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(tracer::onnxTypeFromDType(tensor.dtype()));
  for (int64_t d : tensor.shape())
    proto.add_dims(d);
  Tensor data = tensor.contiguous();
  std::string raw(static_cast<const char *>(data.rawData()), data.nbytes());
  if (isSubByteInteger(tensor.dtype())) {
    // ONNX packs them: element i in bits [b*(i%k), b*(i%k)+b) of byte i/k.
    int bits = packedBits(tensor.dtype()), perByte = 8 / bits;
    std::string packed((raw.size() + perByte - 1) / perByte, '\0');
    for (size_t i = 0; i < raw.size(); ++i)
      packed[i / perByte] = static_cast<char>(
          packed[i / perByte] |
          ((static_cast<unsigned char>(raw[i]) & ((1u << bits) - 1u))
           << (bits * (i % perByte))));
    raw = std::move(packed);
  }
  proto.set_raw_data(raw);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out || !proto.SerializeToOstream(&out))
      return Status::error(strCat("cannot write '", tmp, "'"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return Status::error(strCat("cannot rename '", tmp, "' to '", path, "'"));
  return Status::ok();
}

Expected<NamedTensors>
readInputArguments(const std::vector<ValueSignature> &signature,
                   const std::vector<std::string> &args) {
  NamedTensors inputs;
  size_t next = 0;
  for (const std::string &arg : args) {
    std::string name, file;
    size_t eq = arg.find('=');
    if (eq == std::string::npos) {
      if (next >= signature.size())
        return Status::error(strCat("input file '", arg,
                                    "': the model has only ",
                                    counted(signature.size(), "input",
                                            "inputs")));
      name = signature[next].name;
      file = arg;
    } else {
      name = arg.substr(0, eq);
      file = arg.substr(eq + 1);
    }
    ++next;
    Expected<Tensor> tensor = readTensorFile(file);
    if (!tensor)
      return tensor.status().withContext(strCat("--input ", name));
    inputs.emplace_back(name, tensor.take());
  }
  return inputs;
}

} // namespace kiln
