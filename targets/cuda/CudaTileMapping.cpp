//===- CudaTileMapping.cpp - Pointwise transposes through shared memory ---===//
//
// This file implements the CUDA printer's tiled mapping of a pointwise loop
// nest that reads an input transposed: the output's innermost variable B
// (the stores' unit stride) walks the input at a large stride, and another
// variable A is the input's unit stride (GPT-2's K^T: [B, T, heads, 64] ->
// [B, heads, 64, T]). One thread per element would read one float per 32-byte
// sector. Here a block takes 32 x 32 tiles of (A, B): its threads read each
// such load coalesced along A into a shared-memory tile (32 x 33 floats: no
// bank conflicts either way), wait, then compute and store coalesced along
// B, reading the tile transposed. Other loads are read directly.
//
//===----------------------------------------------------------------------===//

#include "targets/cuda/CudaPrinterImpl.h"

#include <algorithm>
#include <functional>

namespace kiln {
namespace cudaprinter {

using namespace codegen;

namespace {

/// The largest number of loads one kernel tiles (each takes 32 x 33
/// elements of shared memory).
constexpr size_t kMaxTiledLoads = 4;
/// Both tiled variables need at least this extent to pay for the tiles.
constexpr int64_t kMinTiledExtent = 16;

} // namespace

bool CudaPrinter::printTiledTranspose(const Stmt &loop) {
  // Tiles are laid out at compile time: run-time extents take the plain
  // pointwise mapping.
  if (loop.vars.size() < 2 || blockSize % 32 != 0 || blockSize < 64 ||
      anyRunTimeExtent(loop.vars))
    return false;
  int b = loop.vars.back();
  // Stores are contiguous along B; some load is strided along B and
  // contiguous along A, another variable.
  int a = -1;
  for (const Stmt &s : loop.body) {
    if (s.kind != Stmt::Kind::Load && s.kind != Stmt::Kind::Store &&
        s.kind != Stmt::Kind::Compute && s.kind != Stmt::Kind::Const)
      return false;
    std::optional<int64_t> cb = coefficientOf(s.index, b);
    if (s.kind == Stmt::Kind::Store && cb != 1)
      return false;
    if (s.kind != Stmt::Kind::Load || !cb || *cb == 1 || *cb == 0 || a >= 0)
      continue;
    for (int v : loop.vars)
      if (v != b && coefficientOf(s.index, v) == 1)
        a = v;
  }
  if (a < 0 || k.vars[a].extent < kMinTiledExtent ||
      k.vars[b].extent < kMinTiledExtent)
    return false;
  std::vector<const Stmt *> tiled;
  for (const Stmt &s : loop.body)
    if (s.kind == Stmt::Kind::Load && coefficientOf(s.index, a) == 1 &&
        coefficientOf(s.index, b) != 1)
      tiled.push_back(&s);
  if (tiled.empty() || tiled.size() > kMaxTiledLoads)
    return false;

  int64_t ea = k.vars[a].extent, eb = k.vars[b].extent;
  int64_t na = (ea + 31) / 32, nb = (eb + 31) / 32;
  std::vector<int> others;
  for (int v : loop.vars)
    if (v != a && v != b)
      others.push_back(v);
  int64_t tiles = na * nb * tripCount(others);
  int rows = static_cast<int>(blockSize / 32);
  needBlocks(tiles, std::to_string(tiles));
  auto tileOf = [](const Stmt *s) {
    return "kiln_tile" + std::to_string(s->result);
  };
  for (const Stmt *s : tiled) {
    ScalarType t = k.temps[s->result];
    sharedDecls.push_back("__shared__ " + computeCType(t) + " " + tileOf(s) +
                          "[32][33];");
    bool wide = t == ScalarType::F64 || t == ScalarType::I64;
    sharedBytes += 32 * 33 * (wide ? 8 : 4);
  }
  mappings.push_back("32 x 32 tiles of (" + names[a] + ", " + names[b] +
                     ") through shared memory: " + std::to_string(tiles) +
                     " tiles, " + std::to_string(tiled.size()) +
                     " transposed load(s) read coalesced");

  std::string A = names[a], B = names[b];
  std::string inTile = "if (" + A + " < " + std::to_string(ea) + " && " + B +
                       " < " + std::to_string(eb) + ") {";
  open("for (" + it + " kiln_t = blockIdx.x; kiln_t < " +
       std::to_string(tiles) + "; kiln_t += gridDim.x) {");
  line(it + " kiln_rest = kiln_t;");
  line("const " + it + " kiln_b0 = (kiln_rest % " + std::to_string(nb) +
       ") * 32;");
  line("kiln_rest /= " + std::to_string(nb) + ";");
  line("const " + it + " kiln_a0 = (kiln_rest % " + std::to_string(na) +
       ") * 32;");
  line("kiln_rest /= " + std::to_string(na) + ";");
  for (auto v = others.rbegin(); v != others.rend(); ++v) {
    line("[[maybe_unused]] const " + it + " " + names[*v] + " = kiln_rest % " +
         std::to_string(k.vars[*v].extent) + ";");
    line("kiln_rest /= " + std::to_string(k.vars[*v].extent) + ";");
  }
  line("const int kiln_tx = threadIdx.x % 32, kiln_ty = threadIdx.x / 32;");
  // One pass over the tile: `a` and `b` are the tile offsets of A and B
  // (one of them the thread's lane), then `body` for an element inside.
  auto tilePass = [&](const std::string &a, const std::string &b,
                      const std::function<void()> &body) {
    open("for (int kiln_k = kiln_ty; kiln_k < 32; kiln_k += " +
         std::to_string(rows) + ") {");
    line("const " + it + " " + A + " = kiln_a0 + " + a + ", " + B +
         " = kiln_b0 + " + b + ";");
    open(inTile);
    body();
    close();
    close();
    line("__syncthreads();");
  };
  // Read: threads along A (the input's unit stride).
  tilePass("kiln_tx", "kiln_k", [&] {
    for (const Stmt *s : tiled)
      line(tileOf(s) + "[kiln_tx][kiln_k] = " + loadText(*s) + ";");
  });
  // Compute and store: threads along B (the output's unit stride).
  tilePass("kiln_k", "kiln_tx", [&] {
    for (const Stmt &s : loop.body) {
      if (std::find(tiled.begin(), tiled.end(), &s) == tiled.end()) {
        printStmt(s, false);
        continue;
      }
      exprs[s.result] = "t" + std::to_string(s.result);
      line("const " + computeCType(k.temps[s.result]) + " " +
           exprs[s.result] + " = " + tileOf(&s) + "[kiln_k][kiln_tx];");
    }
  });
  close();
  return true;
}

} // namespace cudaprinter
} // namespace kiln
