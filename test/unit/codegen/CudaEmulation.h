//===- CudaEmulation.h - Generated CUDA kernels on the host -----*- C++ -*-===//
//
// This file implements what the emulated CUDA tests share: the emulation of
// the CUDA built-ins the printers use (one std::thread per CUDA thread of a
// block, blocks one after another (a grid of x, y and z), __syncthreads as
// a block barrier, __syncwarp as a warp barrier, __shfl_xor_sync through a
// per-warp barrier and exchange slots, the flash-attention kernels'
// mma.sync m16n8k16 and ldmatrix (.trans too) through the same kind of
// slots, cp.async as a copy at once, __trap as abort) and the build of a
// kernels.cu (its f16/bf16 conversions and float max/min, which are PTX,
// replaced by the host prelude's code, kiln_erff's rcp.approx and ex2.approx by
// a division and exp2f) with the test's launch thunks into a
// shared library loaded with dlopen.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TEST_UNIT_CODEGEN_CUDAEMULATION_H
#define KILN_TEST_UNIT_CODEGEN_CUDAEMULATION_H

#include "CudaTestUtils.h"

#include <catch2/catch.hpp>

#include <string>
#include <vector>

namespace kiln {
namespace test {

/// The emulation of the CUDA built-ins the printer uses.
inline const char *const kEmulation = R"EMU(
#include <condition_variable>
#include <cstdlib>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>
#undef INFINITY
#undef NAN
#undef INT64_MAX
#undef INT64_MIN
// The prelude's typedefs would clash with <cstdint>'s.
#define int8_t kiln_emu_int8_t
#define uint8_t kiln_emu_uint8_t
#define uint16_t kiln_emu_uint16_t
#define int32_t kiln_emu_int32_t
#define uint32_t kiln_emu_uint32_t
#define int64_t kiln_emu_int64_t
#define uint64_t kiln_emu_uint64_t
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__ __restrict
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
struct kiln_emu_dim3 { unsigned x = 0, y = 0, z = 0; };
static thread_local kiln_emu_dim3 threadIdx;
static kiln_emu_dim3 blockIdx, blockDim, gridDim;
struct kiln_emu_barrier {
  std::mutex m;
  std::condition_variable cv;
  unsigned n = 0, count = 0, generation = 0;
  void wait() {
    std::unique_lock<std::mutex> lock(m);
    unsigned g = generation;
    if (++count == n) {
      count = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != g; });
    }
  }
};
static kiln_emu_barrier kiln_emu_block, kiln_emu_warp[32];
static unsigned long long kiln_emu_slots[1024];
static inline void __syncthreads() { kiln_emu_block.wait(); }
[[noreturn]] static inline void __trap() { std::abort(); }
template <class T> static T __shfl_xor_sync(unsigned, T v, int mask) {
  unsigned t = threadIdx.x;
  unsigned long long bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  kiln_emu_slots[t] = bits;
  kiln_emu_warp[t >> 5].wait();
  bits = kiln_emu_slots[t ^ (unsigned)mask];
  kiln_emu_warp[t >> 5].wait();
  T r;
  std::memcpy(&r, &bits, sizeof(T));
  return r;
}
static inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof(f));
  return f;
}
static inline float __uint_as_float(unsigned u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
static inline unsigned __float_as_uint(float f) {
  unsigned u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
template <class F> static void kiln_emu_launch(unsigned grid, unsigned block, F f,
                                               unsigned gridY = 1,
                                               unsigned gridZ = 1) {
  gridDim.x = grid;
  gridDim.y = gridY;
  gridDim.z = gridZ;
  blockDim.x = block;
  kiln_emu_block.n = block;
  for (unsigned w = 0; w < 32; ++w)
    kiln_emu_warp[w].n = block > 32 * w ? (block - 32 * w < 32 ? block - 32 * w : 32) : 0;
  for (unsigned z = 0; z < gridZ; ++z)
    for (unsigned y = 0; y < gridY; ++y)
      for (unsigned b = 0; b < grid; ++b) {
        blockIdx.x = b;
        blockIdx.y = y;
        blockIdx.z = z;
        std::vector<std::thread> threads;
        for (unsigned t = 0; t < block; ++t)
          threads.emplace_back([=] { threadIdx.x = t; f(); });
        for (std::thread &th : threads)
          th.join();
      }
}
// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: each lane publishes
// its row address (lanes 8m..8m+7 the rows of matrix m). Not transposed,
// register m of lane l is row l >> 2 of matrix m, columns 2 (l & 3) and
// 2 (l & 3) + 1; transposed, rows 2 (l & 3) and 2 (l & 3) + 1, column l >> 2.
static const void *kiln_emu_row_slots[1024];
static inline void kiln_emu_ldsm(unsigned (&r)[4], const void *p,
                                 bool transposed) {
  const unsigned t = threadIdx.x, w = t >> 5, lane = t & 31;
  kiln_emu_row_slots[t] = p;
  kiln_emu_warp[w].wait();
  const unsigned g = lane >> 2, c2 = 2 * (lane & 3);
  auto row = [&](unsigned m, unsigned i) {
    return (const unsigned short *)kiln_emu_row_slots[(w << 5) + m * 8 + i];
  };
  for (unsigned m = 0; m < 4; ++m)
    r[m] = transposed
               ? (unsigned)row(m, c2)[g] | ((unsigned)row(m, c2 + 1)[g] << 16)
               : (unsigned)row(m, g)[c2] | ((unsigned)row(m, g)[c2 + 1] << 16);
  kiln_emu_warp[w].wait(); // every lane has read the addresses
}
// What a cp.async with no valid source writes.
static const unsigned char kiln_emu_zeros[16] = {};
// CUDA's 16-byte vector type, as the flash-attention kernels use it.
struct alignas(16) uint4 { unsigned x, y, z, w; };
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) {
  return uint4{x, y, z, w};
}
// mma.sync.aligned.m16n8k16.row.col.f32 with f16 or bf16 inputs: each lane
// publishes its fragments, the warp's A (16 x 16) and B (16 x 8) are
// gathered, and each lane accumulates its four elements of C.
static unsigned kiln_emu_mma_slots[1024][6];
static inline float kiln_emu_half(unsigned h, bool bf16) {
  if (bf16)
    return __uint_as_float(h << 16);
  unsigned e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  float v = e == 0    ? std::ldexp((float)m, -24)
            : e == 31 ? __uint_as_float(m ? 0x7fc00000u : 0x7f800000u)
                      : std::ldexp((float)(m | 0x400u), (int)e - 25);
  return (h & 0x8000u) ? -v : v;
}
static inline void kiln_emu_mma(float (&c)[4], const unsigned (&a)[4],
                                unsigned b0, unsigned b1, bool bf16) {
  const unsigned t = threadIdx.x, w = t >> 5, lane = t & 31;
  unsigned *slot = kiln_emu_mma_slots[t];
  for (int i = 0; i < 4; ++i)
    slot[i] = a[i];
  slot[4] = b0;
  slot[5] = b1;
  kiln_emu_warp[w].wait();
  float A[16][16], B[16][8];
  for (unsigned l = 0; l < 32; ++l) {
    const unsigned *s = kiln_emu_mma_slots[(w << 5) + l];
    const unsigned g = l >> 2, c2 = 2 * (l & 3);
    auto lo = [&](unsigned x) { return kiln_emu_half(x & 0xffffu, bf16); };
    auto hi = [&](unsigned x) { return kiln_emu_half(x >> 16, bf16); };
    A[g][c2] = lo(s[0]), A[g][c2 + 1] = hi(s[0]);
    A[g + 8][c2] = lo(s[1]), A[g + 8][c2 + 1] = hi(s[1]);
    A[g][c2 + 8] = lo(s[2]), A[g][c2 + 9] = hi(s[2]);
    A[g + 8][c2 + 8] = lo(s[3]), A[g + 8][c2 + 9] = hi(s[3]);
    B[c2][g] = lo(s[4]), B[c2 + 1][g] = hi(s[4]);
    B[c2 + 8][g] = lo(s[5]), B[c2 + 9][g] = hi(s[5]);
  }
  kiln_emu_warp[w].wait(); // every lane has read the slots
  const unsigned g = lane >> 2, c2 = 2 * (lane & 3);
  const unsigned rows[4] = {g, g, g + 8, g + 8};
  const unsigned cols[4] = {c2, c2 + 1, c2, c2 + 1};
  for (int i = 0; i < 4; ++i) {
    float acc = c[i];
    for (int k = 0; k < 16; ++k)
      acc += A[rows[i]][k] * B[k][cols[i]];
    c[i] = acc;
  }
}
static inline void __syncwarp() {
  kiln_emu_warp[threadIdx.x >> 5].wait();
}
)EMU";

/// Builds kernels.cu of `kernels` for the emulation, followed by `thunks`
/// (the test's `extern "C"` launchers, calling kiln_emu_launch), into a
/// shared library and opens it; fails the test when the host compiler
/// rejects the source. The folder is kept with KILN_KEEP_KERNELS set
/// (`dir` names it).
inline void *buildEmulation(const std::vector<CudaKernel> &kernels,
                            const std::string &thunks, std::string &dir) {
  // The device's f16/bf16 conversions are PTX instructions: the emulation
  // uses the host prelude's integer code (the same rounding).
  std::string cu = emitCudaKernelsFile(kernels, "test");
  std::string cpp = cppKernelPrelude();
  size_t a =
      cu.find("__device__ __forceinline__ uint16_t kiln_float_to_f16_bits");
  size_t b = cu.find("struct kiln_f16 {");
  size_t c = cpp.find("static inline uint16_t kiln_float_to_f16_bits");
  size_t d = cpp.find("struct kiln_f16 {");
  REQUIRE(a < b);
  REQUIRE(c < d);
  REQUIRE(b != std::string::npos);
  REQUIRE(d != std::string::npos);
  cu.replace(a, b - a, cpp.substr(c, d - c));
  // The float max/min specializations are PTX too: the generic helpers
  // (same NaN semantics) stand in.
  size_t e = cu.find("// float max and min with the helpers' NaN semantics");
  size_t f = cu.find("// Vector access:");
  REQUIRE(e < f);
  REQUIRE(f != std::string::npos);
  cu.erase(e, f - e);
  // The flash-attention kernels' helpers are PTX too: each asm statement
  // becomes its emulation (the MMA and ldmatrix through the warp's slots,
  // cp.async a copy at once whose waits are no-ops, the conversion of two
  // floats the host prelude's rounding).
  auto replaceAsm = [&](const std::string &start, const std::string &with) {
    for (size_t at = cu.find(start); at != std::string::npos;
         at = cu.find(start, at)) {
      size_t end = cu.find(");", at);
      REQUIRE(end != std::string::npos);
      cu.replace(at, end + 2 - at, with);
    }
  };
  // kiln_erff's reciprocal and exp2 from the special-function unit.
  replaceAsm("asm(\"rcp.approx.ftz.f32", "t = 1.0f / d;");
  replaceAsm("asm(\"ex2.approx.ftz.f32", "e = exp2f(a);");
  const std::string asmV = "asm volatile(\"";
  replaceAsm(asmV + "ldmatrix.sync.aligned.m8n8.x4.trans",
             "kiln_emu_ldsm(r, p, true);");
  replaceAsm(asmV + "ldmatrix.sync.aligned.m8n8.x4.shared",
             "kiln_emu_ldsm(r, p, false);");
  replaceAsm(asmV + "cp.async.cg.shared.global",
             "std::memcpy(dst, valid ? src : kiln_emu_zeros, 16);");
  replaceAsm(asmV + "cp.async.commit_group", ";");
  replaceAsm(asmV + "cp.async.wait_group", ";");
  for (std::string type : {"bf16", "f16"}) {
    replaceAsm(asmV + "mma.sync.aligned.m16n8k16.row.col.f32." + type + ".",
               "kiln_emu_mma(c, a, b0, b1, " +
                   std::string(type == "bf16" ? "true" : "false") + ");");
    std::string to = "kiln_float_to_" + type + "_bits";
    replaceAsm("asm(\"cvt.rn." + type + "x2.f32", "r = (uint32_t)" + to +
                                                      "(lo) | ((uint32_t)" +
                                                      to + "(hi) << 16);");
  }
  std::string source = std::string(kEmulation) + cu + "\n" + thunks;
  static int counter = 0;
  dir = "/tmp/kiln-cuda-emu-" + std::to_string(getpid()) + "-" +
        std::to_string(counter++);
  std::system(("mkdir -p " + dir).c_str());
  std::ofstream(dir + "/kernels.cpp") << source;
  std::string cmd = std::string(KILN_TEST_CXX) +
                    " -O1 -std=c++17 -pthread -Wno-unknown-pragmas -shared "
                    "-fPIC -o " +
                    dir + "/kernels.so " + dir + "/kernels.cpp > " + dir +
                    "/log.txt 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::ifstream log(dir + "/log.txt");
    FAIL(std::string(std::istreambuf_iterator<char>(log), {}));
  }
  void *handle = dlopen((dir + "/kernels.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle);
  return handle;
}

} // namespace test
} // namespace kiln

#endif // KILN_TEST_UNIT_CODEGEN_CUDAEMULATION_H
