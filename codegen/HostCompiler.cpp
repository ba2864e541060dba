//===- HostCompiler.cpp - Builds a package's library ----------------------===//
//
// This file implements the host-compiler run shared by every target:
//
//   <cxx> -std=c++17 -O3 -march=<isa> -fno-tree-slp-vectorize
//         -fno-trapping-math -fno-math-errno -fPIC -shared
//         -fvisibility=hidden -Wl,-soname,lib<name>.so -Wl,-Bsymbolic
//         -Wl,--version-script=exports.map -I<runtime include>
//         <target flags> <target sources> wrapper.cpp -o lib<name>.so
//
// (the library is not linked against libkiln_runtime.so: the runtime
// symbols resolve from the loading process). exports.map, written into the
// package, exports the <name>_* symbols and nothing else, so packages linked
// into one program never bind each other's code; -Bsymbolic binds the
// library's own calls of its exports (a CUDA step calls its kernel's
// launcher) to its own definitions, even where a package of the same name
// is already loaded into the process. The manifest's copy of the
// command names the package's files relative to it and the runtime's
// headers as <kiln include>: a package holds no path of the build machine. The
// log is kept for the manifest; a failure is a diagnostic with the log's first
// lines, paths made relative to the package, and the generated source line of
// the first error. The result is kept in the compile cache (CompileCache.h)
// under a key of the command (paths of the package made relative), the
// compiler's identity, the sources and the runtime headers' contents; a hit
// skips the compiler.
//
//===----------------------------------------------------------------------===//

#include "codegen/HostCompiler.h"
#include "codegen/CompileCache.h"

#include "mlir/IR/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include <cassert>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

using namespace mlir;

namespace kiln {

namespace {

/// The first lines of a compiler log, with the temp folder's path removed
/// and, after them, the generated source line of the first error.
std::string summarizeCompilerLog(
    const std::string &log, const std::string &tmpDir,
    const std::map<std::string, std::string> &sources) {
  std::string cleaned;
  std::string prefix = tmpDir + "/";
  for (size_t pos = 0;;) {
    size_t hit = log.find(prefix, pos);
    cleaned += log.substr(pos, hit == std::string::npos ? hit : hit - pos);
    if (hit == std::string::npos)
      break;
    pos = hit + prefix.size();
  }
  std::istringstream lines(cleaned);
  std::string line, head;
  for (int n = 0; n < 30 && std::getline(lines, line); ++n)
    head += "  " + line + "\n";
  std::smatch m;
  static const std::regex errorLine(
      R"(([A-Za-z0-9_]+\.cpp):([0-9]+):[0-9:]* *(fatal )?error:)");
  if (std::regex_search(cleaned, m, errorLine) && sources.count(m[1].str())) {
    const std::string &text = sources.at(m[1].str());
    int target = std::stoi(m[2]);
    std::istringstream src(text);
    std::string s;
    for (int n = 1; std::getline(src, s); ++n)
      if (n == target) {
        head += "generated source " + m[1].str() + ":" + m[2].str() + ": " + s +
                "\n";
        break;
      }
  }
  return head;
}


} // namespace

LogicalResult runHostCompiler(Location loc, PackageBuild &build,
                              const std::map<std::string, std::string> &sources,
                              const std::vector<std::string> &extraFlags) {
  assert(!build.library.empty() && !build.symbolPrefix.empty() &&
         "the package writer names the library and its symbols");
  auto start = std::chrono::steady_clock::now();
  // -march=<isa level> (host: the compiling machine's level; a package for
  // other machines names a lower one with --cpu-isa; the loader checks the
  // CPU). AVX-512 (x86-64-v4) made softmax 1.4x faster than AVX2.
  // -fno-trapping-math, -fno-math-errno: the kernels never read floating-
  // point exception flags or errno; without these GCC keeps the selects of
  // kiln_expf and sqrtf's error branch, and the loops stay scalar (softmax
  // measured 2x slower). IEEE results are unchanged.
  // -fno-tree-slp-vectorize: GCC 12's straight-line (SLP) vectorizer, tuned
  // for some CPUs (Rocket Lake: -march=native or -mtune=native), miscompiles
  // the wrapper's attribute tables (a std::vector<int64_t>{1, 1, 0, 0} held
  // {1, 1, 1, 1}); loop vectorization, which the kernels rely on, stays on.
  std::vector<std::string> args = {build.cxx,
                                   "-std=c++17",
                                   "-O3",
                                   "-march=" + build.isa,
                                   "-fno-tree-slp-vectorize",
                                   "-fno-trapping-math",
                                   "-fno-math-errno",
                                   "-fPIC",
                                   "-shared",
                                   "-fvisibility=hidden",
                                   "-Wl,-soname," + build.library,
                                   "-Wl,-Bsymbolic",
                                   "-Wl,--version-script=" + build.dir +
                                       "/exports.map",
                                   "-I" + build.includeDir};
  args.insert(args.end(), extraFlags.begin(), extraFlags.end());
  std::map<std::string, std::string> allSources = sources;
  allSources["wrapper.cpp"] = build.wrapper;
  for (const auto &[name, text] : sources)
    args.push_back(build.dir + "/" + name);
  args.push_back(build.dir + "/wrapper.cpp");
  std::string library = build.dir + "/" + build.library;
  args.push_back("-o");
  args.push_back(library);
  // Only the package's own symbols are exported.
  std::string exports =
      "{\n  global: " + build.symbolPrefix + "_*;\n  local: *;\n};\n";
  allSources["exports.map"] = exports;
  {
    std::ofstream out(build.dir + "/exports.map", std::ios::binary);
    out << exports;
    if (!(out.flush()))
      return emitError(loc) << "cannot write '" << build.dir << "/exports.map'";
  }
  // The command as the manifest shows it and the cache key reads it: the
  // package's paths relative to it, the runtime's headers by role.
  auto shown = [&](const std::string &a) {
    std::string s = a;
    for (size_t at; (at = s.find(build.dir + "/")) != std::string::npos;)
      s.erase(at, build.dir.size() + 1);
    if (a == "-I" + build.includeDir)
      s = "-I<kiln include>";
    return s;
  };
  build.command.clear();
  for (const std::string &a : args)
    build.command += (build.command.empty() ? "" : " ") + shown(a);
  std::optional<CompileCache> cache = CompileCache::open();
  std::string key;
  if (cache) {
    CacheKey k("host-compiler-v2");
    for (const std::string &a : args)
      k.add(shown(a));
    k.addFileIdentity(build.cxxPath).addDirectoryContents(build.includeDir);
    for (const auto &[name, text] : allSources)
      k.add(name).add(text);
    key = k.hex();
    if (std::optional<std::string> log = cache->fetchText(key, ".log"))
      if (cache->fetch(key, ".so", library)) {
        build.warnings = *log;
        build.hostSeconds = std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - start)
                                .count();
        return success();
      }
  }
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string logPath = build.dir + "/compiler.log";
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(build.cxxPath, argRefs, std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &execError);
  build.hostSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::string log;
  {
    std::ifstream in(logPath);
    std::stringstream ss;
    ss << in.rdbuf();
    log = ss.str();
  }
  if (rc != 0)
    return emitError(loc)
           << "the host C++ compiler failed (" << build.cxx
           << (execError.empty() ? "" : ": " + execError) << ", exit status "
           << rc << ") building " << build.library << ":\n"
           << summarizeCompilerLog(log, build.dir, allSources)
           << "no package was written; this is a Kiln bug unless the "
              "compiler given by --cxx is unusable";
  llvm::sys::fs::remove(logPath);
  build.warnings = log;
  if (cache && llvm::sys::fs::exists(library)) {
    cache->store(key, ".so", library);
    cache->storeText(key, ".log", log);
  }
  return success();
}

} // namespace kiln
