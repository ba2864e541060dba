//===- Tensor.cpp - Strided tensors over shared storage -------------------===//
//
// This file implements Storage (64-byte aligned, zero-initialised CPU buffers
// and wrapped foreign memory) and the Tensor methods: layout queries, views
// (reshape, permute), copies (contiguous, clone), dtype conversion with ONNX
// Cast semantics, and element accessors.
//
//===----------------------------------------------------------------------===//

#include "kiln/runtime/Tensor.h"

#include "kiln/runtime/Cuda.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

namespace kiln {

const char *deviceName(Device d) {
  switch (d) {
  case Device::CPU:
    return "cpu";
  case Device::CUDA:
    return "cuda";
  }
  return "?";
}

int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = s;
    s *= std::max<int64_t>(shape[i], 1);
  }
  return strides;
}

std::string shapeToString(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return s + "]";
}

//===----------------------------------------------------------------------===//
// Storage
//===----------------------------------------------------------------------===//

std::shared_ptr<Storage> Storage::allocateCpu(size_t bytes) {
  std::shared_ptr<Storage> s(new Storage());
  // Round up to a multiple of the alignment (aligned_alloc requires it) and
  // never allocate zero bytes so data() is a valid pointer.
  size_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0)
    rounded = 64;
  void *p = std::aligned_alloc(64, rounded);
  if (p)
    std::memset(p, 0, rounded);
  s->data_ = p;
  s->bytes_ = bytes;
  s->device_ = Device::CPU;
  s->owned_ = true;
  return s;
}

std::shared_ptr<Storage> Storage::wrap(void *data, size_t bytes, Device device,
                                       std::shared_ptr<void> keepAlive) {
  std::shared_ptr<Storage> s(new Storage());
  s->data_ = data;
  s->bytes_ = bytes;
  s->device_ = device;
  s->owned_ = false;
  s->keepAlive_ = std::move(keepAlive);
  return s;
}

Expected<std::shared_ptr<Storage>> Storage::allocate(size_t bytes,
                                                     Device device) {
  if (device == Device::CPU) {
    std::shared_ptr<Storage> s = allocateCpu(bytes);
    if (!s->data())
      return Status::error(strCat("out of memory allocating ", bytes,
                                  " bytes on the CPU"));
    return s;
  }
  Expected<void *> p = cuda::allocate(bytes);
  if (!p)
    return p.status();
  std::shared_ptr<void> owner(*p, [](void *q) { cuda::deallocate(q); });
  return wrap(*p, bytes, Device::CUDA, std::move(owner));
}

Storage::~Storage() {
  if (owned_)
    std::free(data_);
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor Tensor::empty(DType dtype, const Shape &shape) {
  int64_t n = numElements(shape);
  auto storage = Storage::allocateCpu(
      static_cast<size_t>(std::max<int64_t>(n, 0)) * dtypeSize(dtype));
  return Tensor(std::move(storage), dtype, shape, contiguousStrides(shape), 0);
}

Expected<Tensor> Tensor::empty(DType dtype, const Shape &shape,
                               Device device) {
  if (device == Device::CPU)
    return empty(dtype, shape);
  int64_t n = std::max<int64_t>(numElements(shape), 0);
  auto storage = Storage::allocate(static_cast<size_t>(n) * dtypeSize(dtype),
                                   device);
  if (!storage)
    return storage.status();
  return Tensor(storage.take(), dtype, shape, contiguousStrides(shape), 0);
}

Expected<Tensor> Tensor::to(Device device) const {
  if (!defined())
    return *this;
  Device from = this->device();
  if (from == Device::CPU && device == Device::CPU)
    return clone();
  if (from != Device::CPU && !isContiguous())
    return Status::error(strCat(
        "Tensor::to(", deviceName(device), "): the ", deviceName(from),
        " tensor ", typeString(),
        " is not contiguous; only contiguous device tensors can be copied"));
  Tensor src = from == Device::CPU ? contiguous() : *this;
  Expected<Tensor> out = empty(dtype_, shape_, device);
  if (!out)
    return out.status();
  cuda::CopyKind kind = from == Device::CPU ? cuda::CopyKind::HostToDevice
                        : device == Device::CPU
                            ? cuda::CopyKind::DeviceToHost
                            : cuda::CopyKind::DeviceToDevice;
  KILN_RETURN_IF_ERROR(
      cuda::copy(out->rawData(), src.rawData(), nbytes(), kind));
  return out;
}

Tensor::Tensor(std::shared_ptr<Storage> storage, DType dtype, Shape shape,
               Shape strides, int64_t offset)
    : storage_(std::move(storage)), dtype_(dtype), shape_(std::move(shape)),
      strides_(std::move(strides)), offset_(offset) {}

bool Tensor::isContiguous() const {
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1)
      continue;
    if (shape_[i] == 0)
      return true;
    if (strides_[i] != expected)
      return false;
    expected *= shape_[i];
  }
  return true;
}

namespace {

/// Copies the strided elements of `src` into the contiguous buffer `dst`.
void copyStridedBytes(const Tensor &src, char *dst) {
  size_t elem = dtypeSize(src.dtype());
  int64_t n = src.numel();
  if (n <= 0)
    return;
  const char *base = static_cast<const char *>(src.storage()->data());
  int64_t rank = src.rank();
  if (rank == 0) {
    std::memcpy(dst, base + src.offset() * elem, elem);
    return;
  }
  const Shape &shape = src.shape();
  const Shape &strides = src.strides();
  std::vector<int64_t> idx(rank, 0);
  int64_t inner = shape[rank - 1];
  int64_t innerStride = strides[rank - 1];
  int64_t pos = src.offset();
  for (int64_t out = 0; out < n; out += inner) {
    if (innerStride == 1) {
      std::memcpy(dst + out * elem, base + pos * elem, inner * elem);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        std::memcpy(dst + (out + j) * elem,
                    base + (pos + j * innerStride) * elem, elem);
    }
    // Advance the outer multi-index.
    for (int64_t d = rank - 2; d >= 0; --d) {
      if (++idx[d] < shape[d]) {
        pos += strides[d];
        break;
      }
      pos -= strides[d] * (shape[d] - 1);
      idx[d] = 0;
    }
  }
}

template <typename To, typename From> To convertElement(From v) {
  using FC = typename ComputeType<From>::type;
  FC x = static_cast<FC>(v);
  if constexpr (std::is_same_v<To, bool>) {
    return x != FC(0);
  } else if constexpr (std::is_same_v<To, Half> ||
                       std::is_same_v<To, BFloat16>) {
    return To(static_cast<float>(x));
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<FC>) {
    // Truncate toward zero; NaN/out-of-range are unspecified, keep them
    // defined by clamping through int64 / saturating.
    if (std::isnan(x))
      return To(0);
    double d = std::trunc(static_cast<double>(x));
    if constexpr (std::is_unsigned_v<To>)
      if (d >= 9.2233720368547758e18 && d < 1.8446744073709552e19)
        return static_cast<To>(static_cast<uint64_t>(d));
    if (d >= 9.2233720368547758e18)
      return static_cast<To>(std::numeric_limits<int64_t>::max());
    if (d <= -9.2233720368547758e18)
      return static_cast<To>(std::numeric_limits<int64_t>::min());
    return static_cast<To>(static_cast<int64_t>(d));
  } else {
    return static_cast<To>(x);
  }
}

} // namespace

Tensor Tensor::contiguous() const {
  if (!defined() || isContiguous())
    return *this;
  return clone();
}

Tensor Tensor::clone() const {
  if (!defined())
    return *this;
  assert(device() == Device::CPU &&
         "Tensor::clone of a non-CPU tensor: use to(Device) instead");
  Tensor out = empty(dtype_, shape_);
  if (isContiguous()) {
    if (nbytes())
      std::memcpy(out.rawData(), rawData(), nbytes());
  } else {
    copyStridedBytes(*this, static_cast<char *>(out.rawData()));
  }
  return out;
}

Tensor Tensor::reshape(const Shape &shape) const {
  Tensor base = contiguous();
  return Tensor(base.storage_, dtype_, shape, contiguousStrides(shape),
                base.offset_);
}

Tensor Tensor::permute(const std::vector<int64_t> &perm) const {
  Shape shape(perm.size()), strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0)
      p += rank();
    assert(p >= 0 && p < rank() && "permute: axis out of range");
    shape[i] = shape_[p];
    strides[i] = strides_[p];
  }
  return Tensor(storage_, dtype_, std::move(shape), std::move(strides),
                offset_);
}

Tensor Tensor::to(DType dtype) const {
  if (!defined())
    return *this;
  assert(device() == Device::CPU &&
         "Tensor::to(DType) of a non-CPU tensor: copy it with "
         "to(Device::CPU) first");
  if (dtype == dtype_)
    return clone();
  Tensor src = contiguous();
  Tensor out = empty(dtype, shape_);
  int64_t n = numel();
  visitDType(dtype_, [&](auto fromTag) {
    using From = decltype(fromTag);
    visitDType(dtype, [&](auto toTag) {
      using To = decltype(toTag);
      const From *in = static_cast<const From *>(src.rawData());
      To *o = static_cast<To *>(out.rawData());
      for (int64_t i = 0; i < n; ++i)
        o[i] = convertElement<To, From>(in[i]);
    });
  });
  return out;
}

namespace {
/// Byte address of flat (C-order) element `flat` of a strided view.
const char *elementAddress(const Tensor &t, int64_t flat) {
  assert(t.device() == Device::CPU &&
         "element access to a non-CPU tensor: copy it with to(Device::CPU) "
         "first");
  int64_t pos = t.offset();
  for (int64_t d = t.rank() - 1; d >= 0; --d) {
    int64_t extent = t.shape()[d];
    if (extent <= 0)
      break;
    pos += (flat % extent) * t.strides()[d];
    flat /= extent;
  }
  return static_cast<const char *>(t.storage()->data()) +
         pos * dtypeSize(t.dtype());
}
} // namespace

double Tensor::getDouble(int64_t flatIndex) const {
  assert(defined() && flatIndex >= 0 && flatIndex < numel());
  const char *p = elementAddress(*this, flatIndex);
  return visitDType(dtype_, [&](auto tag) -> double {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<double>(static_cast<typename ComputeType<T>::type>(v));
  });
}

int64_t Tensor::getInt(int64_t flatIndex) const {
  assert(defined() && flatIndex >= 0 && flatIndex < numel());
  const char *p = elementAddress(*this, flatIndex);
  return visitDType(dtype_, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    T v;
    std::memcpy(&v, p, sizeof(T));
    return convertElement<int64_t, T>(v);
  });
}

std::vector<int64_t> Tensor::toIntVector() const {
  std::vector<int64_t> out;
  if (!defined())
    return out;
  int64_t n = numel();
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    out.push_back(getInt(i));
  return out;
}

std::vector<double> Tensor::toDoubleVector() const {
  std::vector<double> out;
  if (!defined())
    return out;
  int64_t n = numel();
  out.reserve(n);
  for (int64_t i = 0; i < n; ++i)
    out.push_back(getDouble(i));
  return out;
}

std::string Tensor::typeString() const {
  return std::string(dtypeName(dtype_)) + shapeToString(shape_);
}

} // namespace kiln
