//===- SafeTensors.h - Reading and writing .safetensors files --*- C++ -*-===//
//
// This file declares readSafeTensors and writeSafeTensors, the runtime's
// reader and writer of the safetensors format
// (https://github.com/huggingface/safetensors): an 8-byte little-endian
// header length N, N bytes of JSON
//
//   {"fc1.weight": {"dtype": "F32", "shape": [16, 8],
//                   "data_offsets": [0, 512]},
//    "__metadata__": {"format": "kiln-training"}}
//
// then the data buffer, each tensor's bytes at [begin, end) of it,
// row-major and little-endian. Dtypes: F32, F16, BF16, F64, I64, I32, I8,
// U8, BOOL (kiln's nine). Training packages keep their weights and
// checkpoints in this format (docs/runtime-api.md, "Training packages").
//
// The reader treats the file as untrusted input: every size, offset and
// name is checked before any byte is read, and every error names the file
// and, where there is one, the tensor.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SAFETENSORS_H
#define KILN_RUNTIME_SAFETENSORS_H

#include "kiln/runtime/Executor.h"
#include "kiln/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace kiln {

/// The largest JSON header readSafeTensors accepts (100 MB).
inline constexpr uint64_t kSafeTensorsMaxHeaderBytes = 100ull << 20;

/// The safetensors name of a dtype: "F32", "F16", "BF16", "F64", "I64",
/// "I32", "I16", "I8", "U64", "U32", "U16", "U8", "BOOL", "F8_E4M3",
/// "F8_E5M2"; nullptr for the dtypes safetensors has no name for (the fnuz
/// float8 formats, the sub-byte integers).
const char *safeTensorsDTypeName(DType dtype);

/// The dtype of a safetensors name, or nullopt for one kiln has no dtype
/// for ("C64", ...).
std::optional<DType> parseSafeTensorsDType(const std::string &name);

/// Reads every tensor of the safetensors file `path` into new contiguous
/// CPU tensors, in the order of their data in the file. When `metadata` is
/// given it receives the "__metadata__" map (empty when absent). Errors
/// name the file and the tensor ("w.safetensors: tensor 'fc1.weight':
/// data_offsets [0, 12] hold 12 bytes but f32[4] needs 16"); a corrupt or
/// truncated file is an error, never a crash.
Expected<NamedTensors>
readSafeTensors(const std::string &path,
                std::map<std::string, std::string> *metadata = nullptr);

/// Writes `tensors` (names unique and not "__metadata__"; CPU or CUDA,
/// any layout: CUDA tensors are copied to the CPU, strided ones made
/// contiguous) and `metadata` to `path` in the order given. The file is
/// written under a temporary name in the same folder and renamed, so a
/// failed write never leaves a valid-looking file at `path`. Errors name
/// the file and the tensor.
Status
writeSafeTensors(const std::string &path, const NamedTensors &tensors,
                 const std::map<std::string, std::string> &metadata = {});

} // namespace kiln

#endif // KILN_RUNTIME_SAFETENSORS_H
