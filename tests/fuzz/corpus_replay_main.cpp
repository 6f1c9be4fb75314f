// Runs a fuzz target's LLVMFuzzerTestOneInput over every file in the directories given: its seed
// corpus and the regressions (inputs that once crashed it), in the normal test suite and under the
// sanitizers, without libFuzzer (tests/fuzz/README.md). Exits non-zero when a directory is missing;
// a crash fails the test by itself.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (!fs::is_directory(argv[i], ec)) {
      std::fprintf(stderr, "%s: no such directory\n", argv[i]);
      return 1;
    }
    std::vector<fs::path> files;
    // Dot files are not inputs: `.keep` holds an empty regressions folder in git.
    for (const auto& e : fs::directory_iterator(argv[i]))
      if (e.is_regular_file() && e.path().filename().string().front() != '.') files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::fprintf(stderr, "%s\n", f.c_str());
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++inputs;
    }
  }
  std::printf("%zu inputs ran\n", inputs);
  return 0;
}
