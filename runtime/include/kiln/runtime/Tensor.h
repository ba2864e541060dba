//===- Tensor.h - Strided tensors over shared storage ----------*- C++ -*-===//
//
// This file declares Storage (a reference-counted buffer on a device) and
// Tensor (a strided view of a Storage: shape, strides and offset in elements,
// dtype, device). Views (reshape of contiguous data, transpose, slice with
// steps) share storage; contiguous() copies only when the layout requires it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_TENSOR_H
#define KILN_RUNTIME_TENSOR_H

#include "kiln/runtime/DType.h"
#include "kiln/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace kiln {

/// Where a buffer lives.
enum class Device : uint8_t { CPU, CUDA };

/// Name of a device: "cpu", "cuda".
const char *deviceName(Device d);

using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for rank 0).
int64_t numElements(const Shape &shape);
/// Row-major (C-order) strides of a shape, in elements.
Shape contiguousStrides(const Shape &shape);
/// "[2, 3, 4]".
std::string shapeToString(const Shape &shape);

/// A reference-counted byte buffer on one device, 64-byte aligned on the CPU.
class Storage {
public:
  /// Allocates `bytes` zero-initialised bytes on the CPU.
  static std::shared_ptr<Storage> allocateCpu(size_t bytes);
  /// Allocates `bytes` bytes on `device`: zero-initialised on the CPU,
  /// uninitialised on CUDA (from kiln::cuda's caching allocator, returned to
  /// it when the storage dies). Fails when CUDA is unavailable or out of
  /// memory.
  static Expected<std::shared_ptr<Storage>> allocate(size_t bytes,
                                                     Device device);
  /// Wraps memory owned elsewhere (e.g. an mmap'd weights file); `keepAlive`
  /// is released when the storage dies.
  static std::shared_ptr<Storage> wrap(void *data, size_t bytes, Device device,
                                       std::shared_ptr<void> keepAlive);
  ~Storage();
  void *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

private:
  Storage() = default;
  void *data_ = nullptr;
  size_t bytes_ = 0;
  Device device_ = Device::CPU;
  bool owned_ = false;
  std::shared_ptr<void> keepAlive_;
};

/// A strided view of a Storage. A default-constructed Tensor is "absent"
/// (defined() is false). Element access and copies on the host (data(),
/// clone(), to(DType), getDouble()...) need CPU tensors; move a CUDA tensor
/// to the CPU with to(Device::CPU) first.
class Tensor {
public:
  Tensor() = default;
  /// A new contiguous, zero-filled CPU tensor.
  static Tensor empty(DType dtype, const Shape &shape);
  /// A new contiguous tensor on `device` (zero-filled on the CPU,
  /// uninitialised on CUDA).
  static Expected<Tensor> empty(DType dtype, const Shape &shape,
                                Device device);
  /// A view of existing storage.
  Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
         Shape strides, int64_t offset);
  /// A new CPU tensor holding a copy of `values` (converted to dtype T).
  template <typename T>
  static Tensor fromVector(const std::vector<T> &values, const Shape &shape) {
    Tensor t = empty(DTypeOf<T>::value, shape);
    T *p = t.data<T>();
    for (size_t i = 0; i < values.size(); ++i)
      p[i] = values[i];
    return t;
  }
  /// A rank-0 tensor.
  template <typename T> static Tensor scalar(T value) {
    return fromVector<T>({value}, {});
  }

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device() : Device::CPU; }
  const Shape &shape() const { return shape_; }
  const Shape &strides() const { return strides_; }
  int64_t offset() const { return offset_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numel() const { return numElements(shape_); }
  size_t nbytes() const { return numel() * dtypeSize(dtype_); }
  const std::shared_ptr<Storage> &storage() const { return storage_; }
  bool isContiguous() const;

  /// Pointer to the first element of the view (offset applied).
  void *rawData() const {
    return static_cast<char *>(storage_->data()) + offset_ * dtypeSize(dtype_);
  }
  /// Typed pointer to the first element; asserts the dtype matches.
  template <typename T> T *data() const {
    assert(DTypeOf<T>::value == dtype_ && "Tensor::data<T> with wrong T");
    assert(device() == Device::CPU &&
           "Tensor::data<T> of a non-CPU tensor: use rawData() for device "
           "pointers, or copy it with to(Device::CPU)");
    return static_cast<T *>(rawData());
  }

  /// This tensor if contiguous, else a contiguous copy.
  Tensor contiguous() const;
  /// A deep, contiguous copy.
  Tensor clone() const;
  /// A view with a new shape (same number of elements); copies first when
  /// the data is not contiguous.
  Tensor reshape(const Shape &shape) const;
  /// A view with permuted dimensions.
  Tensor permute(const std::vector<int64_t> &perm) const;
  /// A copy converted to another dtype (same as ONNX Cast semantics for the
  /// supported types: float to int truncates, anything to bool is != 0).
  /// CPU tensors only.
  Tensor to(DType dtype) const;
  /// A contiguous copy on `device` (CPU <-> CUDA, or a copy on the same
  /// device; CUDA to CUDA needs a contiguous source). Synchronous. Fails
  /// with the reason when CUDA is unavailable.
  Expected<Tensor> to(Device device) const;

  /// Reads element `i` of a contiguous copy as double / int64 (for tests,
  /// shape arithmetic and small parameter tensors).
  double getDouble(int64_t flatIndex) const;
  int64_t getInt(int64_t flatIndex) const;
  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> toIntVector() const;
  std::vector<double> toDoubleVector() const;

  /// "f32[2, 3]".
  std::string typeString() const;

private:
  std::shared_ptr<Storage> storage_;
  DType dtype_ = DType::F32;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
};

} // namespace kiln

#endif // KILN_RUNTIME_TENSOR_H
