// The build selects a SIMD kernel for simdjson On-Demand: with the default cpu_baseline
// (x86-64-v2 plus PCLMUL) it is `westmere`, with x86-64-v3 `haswell`, never the scalar
// `fallback` (meson.build explains why PCLMUL must be in the baseline).
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <string_view>

#include "input/framer.h"
#include "input/json_text.h"

TEST_SUITE_BEGIN("simd_kernel");

TEST_CASE("the On-Demand kernel of the input layer is a SIMD one") {
  const std::string_view kernel = atlas2kudu::json_kernel();
  INFO("simdjson kernel: " << std::string(kernel));
#if defined(__x86_64__)
  const bool simd = kernel == "westmere" || kernel == "haswell" || kernel == "icelake";
  CHECK_MESSAGE(simd, "built without SSE4.2+PCLMUL: check meson option cpu_baseline");
#elif defined(__aarch64__)
  CHECK(kernel == "arm64");
#else
  CHECK(!kernel.empty());
#endif
  CHECK(kernel != "fallback");
}

TEST_CASE("the binary names its kernels in --version") {
  const std::string command = std::string(ATLAS2KUDU_BINARY) + " --version";
  std::FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char line[256] = {};
  const bool read = std::fgets(line, sizeof line, pipe) != nullptr;
  CHECK(pclose(pipe) == 0);
  REQUIRE(read);
  const std::string text(line);
  CHECK(text.find(std::string("simdjson ") + std::string(atlas2kudu::json_kernel())) !=
        std::string::npos);
  CHECK(text.find("fallback") == std::string::npos);
  // And the framer's scan on this CPU.
  using atlas2kudu::Framer;
  CHECK(text.find(std::string(", framer ") +
                  std::string(Framer::kernel_name(Framer::default_kernel())) + ")") !=
        std::string::npos);
#if defined(__x86_64__)
  CHECK(text.find(Framer::cpu_has_avx2() ? "framer avx2" : "framer sse2") != std::string::npos);
#endif
}

TEST_SUITE_END();
