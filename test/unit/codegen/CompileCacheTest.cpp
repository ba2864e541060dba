//===- CompileCacheTest.cpp - Tests of the compile cache -----------------===//
//
// This file tests the compile cache (codegen/CompileCache.h): keys that
// change with every part, entries stored and fetched, the cache turned off,
// eviction of the least recently used entries, and the host-compiler run
// that skips the compiler on a hit (a fake compiler counts its runs).
//
//===----------------------------------------------------------------------===//

#include "codegen/CompileCache.h"
#include "codegen/HostCompiler.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace fs = std::filesystem;
using namespace kiln;

namespace {

/// A fresh folder under the temp folder, removed at the end of the scope.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string &name) {
    path = fs::temp_directory_path() /
           (name + "-" + std::to_string(::getpid()) + "-" +
            std::to_string(
                std::chrono::steady_clock::now().time_since_epoch().count()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Sets an environment variable for the scope, restoring the old value.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const std::string &n, const std::string &value) : name(n) {
    if (const char *v = std::getenv(n.c_str()))
      old = v;
    ::setenv(n.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace

TEST_CASE("cache keys differ when any part differs", "[cache]") {
  std::string base = CacheKey("k").add("ab").add("c").hex();
  CHECK(base.size() == 64);
  CHECK(base == CacheKey("k").add("ab").add("c").hex());
  // Length prefixes: moving a byte between parts changes the key.
  CHECK(base != CacheKey("k").add("a").add("bc").hex());
  CHECK(base != CacheKey("k2").add("ab").add("c").hex());
  CHECK(base != CacheKey("k").add("ab").add("d").hex());
}

TEST_CASE("directory contents are part of a key", "[cache]") {
  TempDir a("kiln-cache-dir-a"), b("kiln-cache-dir-b");
  for (const TempDir *d : {&a, &b}) {
    fs::create_directories(d->path / "sub");
    std::ofstream(d->path / "sub" / "h.h") << "int x;";
  }
  // Same contents in different folders: same key (a clone elsewhere hits).
  CHECK(CacheKey("d").addDirectoryContents(a.path.string()).hex() ==
        CacheKey("d").addDirectoryContents(b.path.string()).hex());
  TempDir c("kiln-cache-dir-c");
  fs::create_directories(c.path / "sub");
  std::ofstream(c.path / "sub" / "h.h") << "int y;";
  CHECK(CacheKey("d").addDirectoryContents(a.path.string()).hex() !=
        CacheKey("d").addDirectoryContents(c.path.string()).hex());
}

TEST_CASE("entries are stored, fetched and evicted", "[cache]") {
  TempDir dir("kiln-cache");
  ScopedEnv env("KILN_CACHE_DIR", (dir.path / "cache").string());
  ScopedEnv limit("KILN_CACHE_MAX_MB", "1");
  std::optional<CompileCache> cache = CompileCache::open();
  REQUIRE(cache);
  std::string key = CacheKey("t").add("x").hex();
  fs::path out = dir.path / "out.bin";
  CHECK_FALSE(cache->fetch(key, ".bin", out.string()));
  CHECK_FALSE(cache->fetchText(key, ".txt"));
  cache->storeText(key, ".bin", std::string("\0\1payload", 9));
  REQUIRE(cache->fetch(key, ".bin", out.string()));
  CHECK(readFile(out) == std::string("\0\1payload", 9));
  cache->storeText(key, ".txt", "log");
  CHECK(cache->fetchText(key, ".txt") == std::optional<std::string>("log"));

  // Three 400 KB entries exceed 1 MB: the least recently used goes first.
  std::string big(400 << 10, 'z');
  std::string k1 = CacheKey("t").add("1").hex(),
              k2 = CacheKey("t").add("2").hex(),
              k3 = CacheKey("t").add("3").hex();
  cache->storeText(k1, ".bin", big);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache->storeText(k2, ".bin", big);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  cache->storeText(k3, ".bin", big);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  REQUIRE(cache->fetch(k1, ".bin", out.string())); // k1 is now the newest
  cache->evict();
  CHECK(cache->fetch(k1, ".bin", out.string()));
  CHECK(cache->fetch(k3, ".bin", out.string()));
  CHECK_FALSE(cache->fetch(k2, ".bin", out.string()));
}

TEST_CASE("KILN_CACHE_DIR=off turns the cache off", "[cache]") {
  ScopedEnv env("KILN_CACHE_DIR", "off");
  CHECK_FALSE(CompileCache::open());
}

TEST_CASE("the host compiler runs once per distinct build", "[cache]") {
  TempDir dir("kiln-cache-host");
  ScopedEnv env("KILN_CACHE_DIR", (dir.path / "cache").string());
  // A fake compiler: counts its runs, writes the output file (after -o).
  fs::path cxx = dir.path / "fake-cxx";
  fs::path count = dir.path / "runs";
  {
    std::ofstream script(cxx);
    script << "#!/bin/sh\necho run >> '" << count.string() << "'\n"
           << "while [ $# -gt 1 ]; do [ \"$1\" = -o ] && echo so > \"$2\"; "
              "shift; done\necho 'a warning' >&2\n";
  }
  fs::permissions(cxx, fs::perms::owner_all);
  fs::path include = dir.path / "include";
  fs::create_directories(include);
  std::ofstream(include / "h.h") << "// header";
  mlir::MLIRContext context;
  auto build = [&](const std::string &kernels, const std::string &pkg) {
    PackageBuild b;
    b.dir = (dir.path / pkg).string();
    fs::create_directories(b.dir);
    b.wrapper = "// wrapper";
    b.cxx = b.cxxPath = cxx.string();
    b.isa = "x86-64-v2";
    b.includeDir = include.string();
    b.library = "libm.so";
    b.symbolPrefix = "m";
    REQUIRE(succeeded(runHostCompiler(mlir::UnknownLoc::get(&context), b,
                                      {{"kernels.cpp", kernels}}, {})));
    CHECK(fs::exists(fs::path(b.dir) / "libm.so"));
    CHECK(readFile(fs::path(b.dir) / "exports.map").find("global: m_*;") !=
          std::string::npos);
    CHECK(b.warnings == "a warning\n");
    CHECK(b.command.find(b.dir) == std::string::npos);
  };
  auto runs = [&] {
    std::string text = readFile(count);
    return std::count(text.begin(), text.end(), '\n');
  };
  build("// kernels 1", "p1");
  CHECK(runs() == 1);
  build("// kernels 1", "p2"); // a hit, in another folder
  CHECK(runs() == 1);
  build("// kernels 2", "p3"); // other sources
  CHECK(runs() == 2);
  std::ofstream(include / "h.h") << "// header changed";
  // The memo of the include folder's hash is per process: a new folder.
  fs::path include2 = dir.path / "include2";
  fs::copy(include, include2);
  include = include2;
  build("// kernels 2", "p4");
  CHECK(runs() == 3);
}
