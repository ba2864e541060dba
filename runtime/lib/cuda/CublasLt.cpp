//===- CublasLt.cpp - Row-major batched GEMM through cuBLASLt -------------===//
//
// This file implements kiln::cuda::matmul with cuBLASLt, loaded with dlopen
// ("libcublasLt.so.13", then ".so.12", then ".so"). cuBLASLt is column-major;
// a row-major D = op(A) op(B) (m x n) is the column-major n x m matrix
// D^T = op(B)^T op(A)^T, so the call passes B as cuBLASLt's A and A as its B
// with the same transposition flags, and the bias (n values, one per column
// of the row-major D) becomes the per-row bias of the column-major D^T.
//
// f32 computes with CUBLAS_COMPUTE_32F (no TF32), so results match the CPU
// reference within 1e-3; f16 and bf16 accumulate in fp32. A plan (the
// descriptors and an algorithm) is built once per shape, stride, flag and
// alignment combination and cached; a mutex per plan serialises the
// bias-pointer update with the enqueue. Without a caller workspace, each
// stream gets its own 32 MiB workspace, kept for the process's lifetime.
//
// The algorithm is the heuristic's first answer, the same on every run of
// every process. KILN_CUBLASLT_AUTOTUNE=1 autotunes instead when the plan is
// built: the heuristic's first kMaxCandidates answers each run on the call's
// own operands, timed with CUDA events, and the fastest is kept (a few runs
// of the GEMM once per plan, on the first call; skipped when D overlaps A or
// B, which the timing runs would overwrite). Measured on the H200 (f32, TF32
// off, mlp_train and gpt2_block_train train steps): within 0.6% of the
// heuristic's choice, so it is not the default.
//
//===----------------------------------------------------------------------===//

#include "CublasLt.h"

#include "kiln/runtime/Cuda.h"

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#ifdef KILN_HAVE_CUDA
#include "CudaDriver.h"

#include <cublasLt.h>
#include <dlfcn.h>
#endif

namespace kiln {
namespace cuda {

#ifdef KILN_HAVE_CUDA

namespace {

constexpr size_t kDefaultWorkspaceBytes = size_t(32) << 20;

/// How many of the heuristic's algorithms autotuning times, and how many
/// timed runs each gets (after one untimed run).
constexpr int kMaxCandidates = 8;
constexpr int kTimedRuns = 3;

/// The cuBLASLt entry points.
struct Lt {
  decltype(&::cublasLtCreate) create;
  decltype(&::cublasLtGetStatusString) statusString;
  decltype(&::cublasLtMatmulDescCreate) descCreate;
  decltype(&::cublasLtMatmulDescSetAttribute) descSet;
  decltype(&::cublasLtMatmulDescDestroy) descDestroy;
  decltype(&::cublasLtMatrixLayoutCreate) layoutCreate;
  decltype(&::cublasLtMatrixLayoutSetAttribute) layoutSet;
  decltype(&::cublasLtMatrixLayoutDestroy) layoutDestroy;
  decltype(&::cublasLtMatmulPreferenceCreate) prefCreate;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) prefSet;
  decltype(&::cublasLtMatmulPreferenceDestroy) prefDestroy;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) heuristic;
  decltype(&::cublasLtMatmul) matmul;
  cublasLtHandle_t handle = nullptr;
  std::string library;
};

struct LoadedLt {
  Lt lt{};
  Status status;
};

LoadedLt *loadLt() {
  auto *l = new LoadedLt();
  void *lib = openCudaLibrary(
      {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"},
      /*folderEnv=*/nullptr, l->lt.library);
  if (!lib) {
    l->status = Status::error(
        "cuBLASLt not found (tried libcublasLt.so.13, .so.12 and .so on the "
        "library path, $CUDA_HOME/lib64 and /usr/local/cuda/lib64): install "
        "the CUDA toolkit's cuBLAS libraries or add their folder to "
        "LD_LIBRARY_PATH");
    return l;
  }
  Lt &lt = l->lt;
  std::string missing;
  auto bind = [&](auto &fn, const char *name) {
    void *p = dlsym(lib, name);
    if (!p && missing.empty())
      missing = name;
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
  };
  bind(lt.create, "cublasLtCreate");
  bind(lt.statusString, "cublasLtGetStatusString");
  bind(lt.descCreate, "cublasLtMatmulDescCreate");
  bind(lt.descSet, "cublasLtMatmulDescSetAttribute");
  bind(lt.descDestroy, "cublasLtMatmulDescDestroy");
  bind(lt.layoutCreate, "cublasLtMatrixLayoutCreate");
  bind(lt.layoutSet, "cublasLtMatrixLayoutSetAttribute");
  bind(lt.layoutDestroy, "cublasLtMatrixLayoutDestroy");
  bind(lt.prefCreate, "cublasLtMatmulPreferenceCreate");
  bind(lt.prefSet, "cublasLtMatmulPreferenceSetAttribute");
  bind(lt.prefDestroy, "cublasLtMatmulPreferenceDestroy");
  bind(lt.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  bind(lt.matmul, "cublasLtMatmul");
  if (!missing.empty()) {
    l->status = Status::error(strCat(lt.library, ": lacks '", missing,
                                     "': cuBLASLt is too old for Kiln"));
    return l;
  }
  cublasStatus_t s = lt.create(&lt.handle);
  if (s != CUBLAS_STATUS_SUCCESS)
    l->status =
        Status::error(strCat("cublasLtCreate failed: ", lt.statusString(s)));
  return l;
}

/// cuBLASLt, loaded once, after the driver's context is current.
Expected<const Lt *> cublasLt() {
  Expected<const Driver *> d = driver();
  if (!d)
    return d.status();
  static LoadedLt *loaded = loadLt();
  if (!loaded->status)
    return loaded->status;
  return &loaded->lt;
}

/// The largest power of two (at most 256) dividing the address and, for
/// batches, the byte stride between matrices.
uint32_t alignmentOf(const void *p, int64_t strideBytes) {
  uint64_t bits = reinterpret_cast<uintptr_t>(p) | uint64_t(strideBytes) | 256;
  return static_cast<uint32_t>(bits & (~bits + 1));
}

using PlanKey = std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t,
                           int64_t, int64_t, bool, bool, bool, int, uint32_t,
                           uint32_t, uint32_t, size_t>;

/// The descriptors and algorithm of one GEMM configuration.
struct Plan {
  const Lt *lt = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t layoutA = nullptr, layoutB = nullptr,
                         layoutD = nullptr;
  cublasLtMatmulAlgo_t algo{};
  std::mutex mutex;
  ~Plan() {
    if (layoutA)
      lt->layoutDestroy(layoutA);
    if (layoutB)
      lt->layoutDestroy(layoutB);
    if (layoutD)
      lt->layoutDestroy(layoutD);
    if (desc)
      lt->descDestroy(desc);
  }
};

Status ltCheck(const Lt &lt, cublasStatus_t s, const char *what) {
  if (s == CUBLAS_STATUS_SUCCESS)
    return Status::ok();
  return Status::error(strCat("cuBLASLt: ", what,
                              " failed: ", lt.statusString(s), " (",
                              static_cast<int>(s), ")"));
}

/// A column-major rows x cols layout, batched when batch > 1.
Status makeLayout(const Lt &lt, cublasLtMatrixLayout_t &layout,
                  cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld,
                  int64_t batch, int64_t stride) {
  KILN_RETURN_IF_ERROR(ltCheck(
      lt, lt.layoutCreate(&layout, type, rows, cols, ld), "layout create"));
  if (batch > 1) {
    int32_t count = static_cast<int32_t>(batch);
    KILN_RETURN_IF_ERROR(
        ltCheck(lt,
                lt.layoutSet(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                             sizeof(count)),
                "setting the batch count"));
    KILN_RETURN_IF_ERROR(ltCheck(
        lt,
        lt.layoutSet(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                     &stride, sizeof(stride)),
        "setting the batch stride"));
  }
  return Status::ok();
}

/// Whether autotuning is on (KILN_CUBLASLT_AUTOTUNE=1).
bool autotuneEnabled() {
  static const bool enabled = [] {
    const char *env = std::getenv("KILN_CUBLASLT_AUTOTUNE");
    return env && std::string(env) == "1";
  }();
  return enabled;
}

/// The compute type of f32 GEMMs: CUBLAS_COMPUTE_32F (FMA, no TF32), or for
/// measurements KILN_CUBLASLT_F32_COMPUTE=bf16x9 (cuBLAS's f32 emulation on
/// bf16 tensor cores, three bf16 terms per operand) or =tf32 (one TF32
/// pass: faster, less precise). f16/bf16 GEMMs are not affected. Measured
/// on an H100 (BENCHMARKS.md, fifteenth session): bf16x9 runs at the FMA
/// kernels' speed there (cuBLAS emulates on Blackwell), tf32 is 3-6x faster
/// and 4e-4 off PyTorch's f32.
cublasComputeType_t f32ComputeType() {
  static const cublasComputeType_t type = [] {
    const char *env = std::getenv("KILN_CUBLASLT_F32_COMPUTE");
    std::string v = env ? env : "";
    if (v == "bf16x9")
      return CUBLAS_COMPUTE_32F_EMULATED_16BFX9;
    if (v == "tf32")
      return CUBLAS_COMPUTE_32F_FAST_TF32;
    return CUBLAS_COMPUTE_32F;
  }();
  return type;
}

/// Whether D's bytes overlap A's or B's (batched extents included).
bool outputOverlapsOperands(const MatmulArgs &x, size_t elem) {
  auto extent = [&](const void *p, int64_t rows, int64_t cols,
                    int64_t stride) {
    auto begin = reinterpret_cast<uintptr_t>(p);
    uint64_t bytes =
        (uint64_t(x.batch - 1) * uint64_t(stride) + uint64_t(rows * cols)) *
        elem;
    return std::make_pair(begin, begin + bytes);
  };
  auto a = extent(x.a, x.m, x.k, x.strideA);
  auto b = extent(x.b, x.k, x.n, x.strideB);
  auto d = extent(x.d, x.m, x.n, x.strideD);
  auto overlaps = [&](std::pair<uintptr_t, uintptr_t> o) {
    return d.first < o.second && o.first < d.second;
  };
  return overlaps(a) || overlaps(b);
}

/// The fastest of `candidates` on x's own operands: each runs once, then
/// kTimedRuns times between two events; the smallest total wins. A
/// candidate that fails to run is skipped; the first one is kept when no
/// timing works.
cublasLtMatmulAlgo_t
fastestAlgorithm(const Lt &lt, const Plan &plan, const MatmulArgs &x,
                 const std::vector<cublasLtMatmulHeuristicResult_t> &candidates,
                 void *workspace, size_t workspaceBytes) {
  float alpha = 1.0f, beta = 0.0f;
  auto stream = static_cast<cudaStream_t>(x.stream);
  auto runOnce = [&](const cublasLtMatmulAlgo_t &algo) {
    return lt.matmul(lt.handle, plan.desc, &alpha, x.b, plan.layoutA, x.a,
                     plan.layoutB, &beta, x.d, plan.layoutD, x.d, plan.layoutD,
                     &algo, workspace, workspaceBytes, stream) ==
           CUBLAS_STATUS_SUCCESS;
  };
  cublasLtMatmulAlgo_t best = candidates.front().algo;
  double bestMs = -1;
  for (const cublasLtMatmulHeuristicResult_t &c : candidates) {
    if (!runOnce(c.algo))
      continue;
    StreamTimer timer;
    if (!timer.start(x.stream))
      break;
    bool ok = true;
    for (int r = 0; r < kTimedRuns && ok; ++r)
      ok = runOnce(c.algo);
    if (!timer.stop())
      break;
    Expected<double> ms = timer.elapsedMilliseconds();
    if (!ms)
      break;
    if (ok && (bestMs < 0 || *ms < bestMs)) {
      bestMs = *ms;
      best = c.algo;
    }
  }
  return best;
}

Expected<std::unique_ptr<Plan>> buildPlan(const Lt &lt, const MatmulArgs &x,
                                          cudaDataType_t type, size_t elem,
                                          uint32_t alignA, uint32_t alignB,
                                          uint32_t alignD, void *workspace,
                                          size_t workspaceBytes) {
  auto plan = std::make_unique<Plan>();
  plan->lt = &lt;
  KILN_RETURN_IF_ERROR(
      ltCheck(lt,
              lt.descCreate(&plan->desc,
                            type == CUDA_R_32F ? f32ComputeType()
                                               : CUBLAS_COMPUTE_32F,
                            CUDA_R_32F),
              "matmul descriptor create"));
  // cuBLASLt's A is our B, its B is our A (see the file comment).
  int32_t opA = x.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  int32_t opB = x.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  KILN_RETURN_IF_ERROR(ltCheck(
      lt,
      lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof(opA)),
      "setting TRANSA"));
  KILN_RETURN_IF_ERROR(ltCheck(
      lt,
      lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof(opB)),
      "setting TRANSB"));
  uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool bias = x.bias != nullptr;
  if (x.epilogue == 1)
    epilogue = bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
  else if (x.epilogue == 2)
    epilogue = bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
  else if (bias)
    epilogue = CUBLASLT_EPILOGUE_BIAS;
  KILN_RETURN_IF_ERROR(
      ltCheck(lt,
              lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                         sizeof(epilogue)),
              "setting the epilogue"));
  if (bias) {
    int32_t biasType = type;
    KILN_RETURN_IF_ERROR(
        ltCheck(lt,
                lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                           &biasType, sizeof(biasType)),
                "setting the bias type"));
    KILN_RETURN_IF_ERROR(
        ltCheck(lt,
                lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                           &x.bias, sizeof(x.bias)),
                "setting the bias pointer"));
  }
  // Cublas A (= our B, n x k after op): stored column-major as n x k
  // (ld n) when not transposed, else k x n (ld k).
  KILN_RETURN_IF_ERROR(makeLayout(lt, plan->layoutA, type, x.transB ? x.k : x.n,
                                  x.transB ? x.n : x.k, x.transB ? x.k : x.n,
                                  x.batch, x.strideB));
  // Cublas B (= our A, k x m after op): k x m (ld k), or m x k (ld m).
  KILN_RETURN_IF_ERROR(makeLayout(lt, plan->layoutB, type, x.transA ? x.m : x.k,
                                  x.transA ? x.k : x.m, x.transA ? x.m : x.k,
                                  x.batch, x.strideA));
  KILN_RETURN_IF_ERROR(
      makeLayout(lt, plan->layoutD, type, x.n, x.m, x.n, x.batch, x.strideD));

  cublasLtMatmulPreference_t pref = nullptr;
  KILN_RETURN_IF_ERROR(ltCheck(lt, lt.prefCreate(&pref), "preference create"));
  struct PrefGuard {
    const Lt &lt;
    cublasLtMatmulPreference_t pref;
    ~PrefGuard() { lt.prefDestroy(pref); }
  } prefGuard{lt, pref};
  uint64_t ws = workspaceBytes;
  KILN_RETURN_IF_ERROR(
      ltCheck(lt,
              lt.prefSet(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                         sizeof(ws)),
              "setting the workspace size"));
  struct {
    cublasLtMatmulPreferenceAttributes_t attr;
    uint32_t value;
  } aligns[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignB},
                {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignA},
                {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignD},
                {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignD}};
  for (auto &al : aligns)
    KILN_RETURN_IF_ERROR(
        ltCheck(lt, lt.prefSet(pref, al.attr, &al.value, sizeof(al.value)),
                "setting an alignment"));
  bool tune = autotuneEnabled() && !outputOverlapsOperands(x, elem);
  std::vector<cublasLtMatmulHeuristicResult_t> results(tune ? kMaxCandidates
                                                            : 1);
  int found = 0;
  KILN_RETURN_IF_ERROR(ltCheck(
      lt,
      lt.heuristic(lt.handle, plan->desc, plan->layoutA, plan->layoutB,
                   plan->layoutD, plan->layoutD, pref,
                   static_cast<int>(results.size()), results.data(), &found),
      "choosing an algorithm (cublasLtMatmulAlgoGetHeuristic)"));
  if (found == 0)
    return Status::error(strCat(
        "cuBLASLt has no algorithm for this matmul (batch ", x.batch, ", m ",
        x.m, ", n ", x.n, ", k ", x.k, ", dtype ", x.dtype, ", epilogue ",
        x.epilogue, ", strides ", x.strideA, "/", x.strideB, "/", x.strideD,
        ", alignments ", alignA, "/", alignB, "/", alignD, ")"));
  results.resize(found);
  plan->algo = results.size() > 1
                   ? fastestAlgorithm(lt, *plan, x, results, workspace,
                                      workspaceBytes)
                   : results.front().algo;
  return plan;
}

struct PlanCache {
  std::mutex mutex;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;
  std::map<void *, void *> workspaces; // stream -> default workspace
};

PlanCache &planCache() {
  static PlanCache *c = new PlanCache();
  return *c;
}

} // namespace

Status matmul(const MatmulArgs &x) {
  cudaDataType_t type;
  size_t elem = 0;
  switch (x.dtype) {
  case 0:
    type = CUDA_R_32F;
    elem = 4;
    break;
  case 1:
    type = CUDA_R_16F;
    elem = 2;
    break;
  case 2:
    type = CUDA_R_16BF;
    elem = 2;
    break;
  default:
    return Status::error(strCat("kiln_cuda_matmul: dtype code ", x.dtype,
                                " is not f32 (0), f16 (1) or bf16 (2)"));
  }
  KILN_CHECK(x.batch >= 1 && x.m >= 1 && x.n >= 1 && x.k >= 1,
             "kiln_cuda_matmul: batch, m, n and k must be positive (got ",
             x.batch, ", ", x.m, ", ", x.n, ", ", x.k, ")");
  KILN_CHECK(x.a && x.b && x.d, "kiln_cuda_matmul: a null A, B or D");
  KILN_CHECK(x.epilogue >= 0 && x.epilogue <= 2, "kiln_cuda_matmul: epilogue ",
             x.epilogue, " is not 0 (none), 1 (relu) or 2 (gelu, tanh)");
  KILN_CHECK(x.strideA >= 0 && x.strideB >= 0 && x.strideD >= 0,
             "kiln_cuda_matmul: negative batch stride");
  KILN_CHECK(x.batch == 1 || x.strideD >= x.m * x.n,
             "kiln_cuda_matmul: D's batch stride ", x.strideD,
             " is smaller than m * n = ", x.m * x.n,
             " (batches would overlap)");
  Expected<const Lt *> ltOr = cublasLt();
  if (!ltOr)
    return ltOr.status();
  const Lt &lt = **ltOr;

  PlanCache &cache = planCache();
  void *workspace = x.workspace;
  size_t workspaceBytes = x.workspaceBytes;
  if (!workspace) {
    std::lock_guard<std::mutex> lock(cache.mutex);
    void *&ws = cache.workspaces[x.stream];
    if (!ws) {
      Expected<void *> p = allocate(kDefaultWorkspaceBytes);
      if (!p)
        return p.status().withContext("cuBLASLt workspace");
      ws = *p;
    }
    workspace = ws;
    workspaceBytes = kDefaultWorkspaceBytes;
  }
  int64_t batchStride = x.batch > 1 ? 1 : 0;
  uint32_t alignA = alignmentOf(x.a, batchStride * x.strideA * elem);
  uint32_t alignB = alignmentOf(x.b, batchStride * x.strideB * elem);
  uint32_t alignD = alignmentOf(x.d, batchStride * x.strideD * elem);
  PlanKey key{x.dtype,           x.batch,    x.m,       x.n,      x.k,
              x.strideA,         x.strideB,  x.strideD, x.transA, x.transB,
              x.bias != nullptr, x.epilogue, alignA,    alignB,   alignD,
              workspaceBytes};
  Plan *plan = nullptr;
  {
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) {
      plan = it->second.get();
    } else {
      Expected<std::unique_ptr<Plan>> built =
          buildPlan(lt, x, type, elem, alignA, alignB, alignD, workspace,
                    workspaceBytes);
      if (!built)
        return built.status();
      plan = built->get();
      cache.plans.emplace(key, built.take());
    }
  }
  float alpha = 1.0f, beta = 0.0f;
  std::lock_guard<std::mutex> lock(plan->mutex);
  if (x.bias)
    KILN_RETURN_IF_ERROR(
        ltCheck(lt,
                lt.descSet(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                           &x.bias, sizeof(x.bias)),
                "setting the bias pointer"));
  return ltCheck(lt,
                 lt.matmul(lt.handle, plan->desc, &alpha, x.b, plan->layoutA,
                           x.a, plan->layoutB, &beta, x.d, plan->layoutD, x.d,
                           plan->layoutD, &plan->algo, workspace,
                           workspaceBytes, static_cast<cudaStream_t>(x.stream)),
                 "cublasLtMatmul");
}

#else // !KILN_HAVE_CUDA

Status matmul(const MatmulArgs &) { return available(); }

#endif // KILN_HAVE_CUDA

} // namespace cuda
} // namespace kiln
