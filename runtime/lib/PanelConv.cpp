//===- PanelConv.cpp - A convolution of few output pixels on panels -------===//
//
// This file implements PanelConv (PanelConv.h): the packing of the weights
// into 64-column panels, and the run: the im2col copy of the input (each
// thread a share of its rows), the panels split among the OpenMP threads, each
// panel taken in chunks of kChunk steps of k, each chunk multiplied by
// every block of up to 7 rows (28 AVX-512 accumulators) while the next
// chunk is prefetched into the L2, a line per step spread over the blocks.
// The partial sums of a chunk go to y and come back for the next one; the
// first chunk starts from the residual and the bias, the last applies
// ReLU. Without AVX-512 (checked once, at creation) a portable loop
// computes the same sums in the same order per element.
//
//===----------------------------------------------------------------------===//

#include "PanelConv.h"

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

namespace kiln {

namespace {

/// The columns of a panel (4 AVX-512 vectors).
constexpr int64_t kCols = 64;
/// The rows of a register block: 7 x 4 accumulators, 4 panel vectors.
constexpr int kBlockRows = 7;
/// The steps of k of a chunk: 32 KB of a panel, held in the 48 KB L1.
constexpr int64_t kChunk = 128;
constexpr int64_t kLine = 64;

/// What a register block computes: rows [r0, r0 + R) of the panel's
/// columns over one chunk of k.
struct BlockArgs {
  /// The block's first row of the left operand at the chunk's first k.
  const float *a;
  int64_t lda;
  /// The chunk of the panel, [steps][64].
  const float *b;
  int64_t steps;
  /// Where the sums start ([R][ldy] at the block's first row and the
  /// panel's first column; null: zero), and the bias to add (null: none).
  const float *start, *bias;
  bool relu;
  /// The panel's columns that exist, per vector.
  const __mmask16 *mask;
  float *y;
  int64_t ldy;
  /// The lines of the next chunk this block prefetches, `perStep` a step.
  const char *prefetch, *prefetchEnd;
  int64_t perStep;
};

template <int R>
__attribute__((target("avx512f,fma"))) void blockAvx512(const BlockArgs &p) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512 v = p.start ? _mm512_maskz_loadu_ps(p.mask[j],
                                                 p.start + i * p.ldy + 16 * j)
                         : _mm512_setzero_ps();
      if (p.bias)
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(p.mask[j], p.bias + 16 * j));
      acc[i][j] = v;
    }
  const char *prefetch = p.prefetch;
  for (int64_t s = 0; s < p.steps; ++s) {
    for (int64_t q = 0; q < p.perStep && prefetch < p.prefetchEnd;
         ++q, prefetch += kLine)
      _mm_prefetch(prefetch, _MM_HINT_T1);
    const float *row = p.b + s * kCols;
    __m512 b0 = _mm512_load_ps(row), b1 = _mm512_load_ps(row + 16),
           b2 = _mm512_load_ps(row + 32), b3 = _mm512_load_ps(row + 48);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      __m512 ai = _mm512_set1_ps(p.a[i * p.lda + s]);
      acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm512_fmadd_ps(ai, b2, acc[i][2]);
      acc[i][3] = _mm512_fmadd_ps(ai, b3, acc[i][3]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
      __m512 v =
          p.relu ? _mm512_max_ps(acc[i][j], _mm512_setzero_ps()) : acc[i][j];
      _mm512_mask_storeu_ps(p.y + i * p.ldy + 16 * j, p.mask[j], v);
    }
}

using BlockFn = void (*)(const BlockArgs &);

/// The AVX-512 block of `rows` rows.
BlockFn avx512Block(int64_t rows) {
  static const BlockFn blocks[kBlockRows] = {
      blockAvx512<1>, blockAvx512<2>, blockAvx512<3>, blockAvx512<4>,
      blockAvx512<5>, blockAvx512<6>, blockAvx512<7>};
  return blocks[rows - 1];
}

/// The portable block: the same sums in the same order per element.
void blockPortable(int64_t rows, const BlockArgs &p, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < cols; ++c) {
      float v = p.start ? p.start[i * p.ldy + c] : 0.f;
      if (p.bias)
        v += p.bias[c];
      for (int64_t s = 0; s < p.steps; ++s)
        v += p.a[i * p.lda + s] * p.b[s * kCols + c];
      p.y[i * p.ldy + c] = p.relu ? std::max(v, 0.f) : v;
    }
}

} // namespace

PanelConv::PanelConv(const Geometry &g, const float *w,
                     bool weightsChannelsFirst, bool relu, bool portable)
    : g_(g), rows_(g.batch * g.outH * g.outW),
      depth_(g.kernelH * g.kernelW * g.channels), relu_(relu),
      avx512_(!portable && __builtin_cpu_supports("avx512f")) {
  assert(rows_ >= 1 && rows_ <= kMaxRows && depth_ >= 1 && g.outChannels >= 1 &&
         "OneDnnPrimitives::addConv checks the geometry");
  const int64_t count = (g.outChannels + kCols - 1) / kCols;
  const size_t floats = static_cast<size_t>(count * depth_ * kCols);
  panels_ = allocateHugePageFloats(floats);
  std::fill(panels_.get(), panels_.get() + floats, 0.f);
  const int64_t kh = g.kernelH, kw = g.kernelW, c = g.channels;
  for (int64_t o = 0; o < g.outChannels; ++o) {
    float *panel = panels_.get() + (o / kCols) * depth_ * kCols + o % kCols;
    for (int64_t ky = 0; ky < kh; ++ky)
      for (int64_t kx = 0; kx < kw; ++kx)
        for (int64_t ci = 0; ci < c; ++ci) {
          int64_t k = (ky * kw + kx) * c + ci;
          panel[k * kCols] = weightsChannelsFirst
                                 ? w[((o * c + ci) * kh + ky) * kw + kx]
                                 : w[((o * kh + ky) * kw + kx) * c + ci];
        }
  }
}

bool PanelConv::readsInputDirectly() const {
  const Geometry &g = g_;
  return g.kernelH == 1 && g.kernelW == 1 && g.strideH == 1 && g.strideW == 1 &&
         g.padH == 0 && g.padW == 0 && g.outH == g.inH && g.outW == g.inW;
}

void PanelConv::copyRows(const float *x, float *lhs, int64_t r0,
                         int64_t r1) const {
  const Geometry &g = g_;
  const size_t pixelBytes = static_cast<size_t>(g.channels) * sizeof(float);
  float *row = lhs + r0 * depth_;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t n = r / (g.outH * g.outW), oy = r / g.outW % g.outH,
                  ox = r % g.outW;
    for (int64_t ky = 0; ky < g.kernelH; ++ky)
      for (int64_t kx = 0; kx < g.kernelW; ++kx, row += g.channels) {
        int64_t iy = oy * g.strideH + ky - g.padH;
        int64_t ix = ox * g.strideW + kx - g.padW;
        if (iy < 0 || iy >= g.inH || ix < 0 || ix >= g.inW)
          std::memset(row, 0, pixelBytes);
        else
          std::memcpy(row, x + ((n * g.inH + iy) * g.inW + ix) * g.channels,
                      pixelBytes);
      }
  }
}

void PanelConv::run(const float *x, const float *bias, const float *residual,
                    float *y) const {
  // The left operand: x itself, or its im2col copy in the calling thread's
  // scratch, each thread copying a share of the rows.
  thread_local std::vector<float> scratch;
  const bool direct = readsInputDirectly();
  if (!direct)
    scratch.resize(static_cast<size_t>(rows_ * depth_));
  const float *a = direct ? x : scratch.data();
  float *copy = direct ? nullptr : scratch.data();
  const int64_t n = g_.outChannels, rows = rows_, depth = depth_;
  const int64_t count = (n + kCols - 1) / kCols;
  const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  const float *panels = panels_.get();
  const bool avx512 = avx512_, relu = relu_;
  const int64_t blocks = (rows + kBlockRows - 1) / kBlockRows;
#pragma omp parallel num_threads(threads) if (threads > 1 && count > 1)
  {
    // Each thread a share of the im2col rows, then, once every row is
    // copied, a contiguous range of panels, whose chunks follow one another
    // in memory: the next chunk is the next kChunk x 64 floats.
    int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (copy) {
      copyRows(x, copy, rows * t / nt, rows * (t + 1) / nt);
#pragma omp barrier
    }
    int64_t p0 = count * t / nt, p1 = count * (t + 1) / nt;
    const char *end =
        reinterpret_cast<const char *>(panels + p1 * depth * kCols);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t col = p * kCols, valid = std::min(kCols, n - col);
      __mmask16 mask[4];
      for (int j = 0; j < 4; ++j) {
        int64_t v = std::clamp<int64_t>(valid - 16 * j, 0, 16);
        mask[j] = static_cast<__mmask16>(v == 16 ? 0xFFFF : (1u << v) - 1);
      }
      const float *panel = panels + p * depth * kCols;
      for (int64_t k0 = 0; k0 < depth; k0 += kChunk) {
        const int64_t steps = std::min(kChunk, depth - k0);
        const bool first = k0 == 0, last = k0 + steps == depth;
        // The next chunk's lines, a share for each block.
        const char *next =
            reinterpret_cast<const char *>(panel + (k0 + steps) * kCols);
        const int64_t nextLines = std::max<int64_t>(
            0, std::min<int64_t>(end - next, kChunk * kCols * sizeof(float)) /
                   kLine);
        const int64_t share = (nextLines + blocks - 1) / blocks;
        for (int64_t r0 = 0, b = 0; r0 < rows; r0 += kBlockRows, ++b) {
          const int64_t r = std::min<int64_t>(kBlockRows, rows - r0);
          BlockArgs args;
          args.a = a + r0 * depth + k0;
          args.lda = depth;
          args.b = panel + k0 * kCols;
          args.steps = steps;
          args.start = first ? (residual ? residual + r0 * n + col : nullptr)
                             : y + r0 * n + col;
          args.bias = first && bias ? bias + col : nullptr;
          args.relu = last && relu;
          args.mask = mask;
          args.y = y + r0 * n + col;
          args.ldy = n;
          args.prefetch = next + std::min(b * share, nextLines) * kLine;
          args.prefetchEnd =
              next + std::min((b + 1) * share, nextLines) * kLine;
          args.perStep = (share + steps - 1) / steps;
          if (avx512)
            avx512Block(r)(args);
          else
            blockPortable(r, args, valid);
        }
      }
    }
  }
}

} // namespace kiln
