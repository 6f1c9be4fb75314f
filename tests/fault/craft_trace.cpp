// craft_trace KIND PATH: writes one of the crafted traces of tests/support/crafted_traces.h, for
// tests/fault/crafted_trace.sh. KIND is huge-sources, sources-beyond-header, image-beyond-limit or
// image-mismatch.
#include <cstdio>
#include <string>

#include "tests/support/crafted_traces.h"

int main(int argc, char** argv) {
  using scanback::test::CraftedTrace;
  if (argc != 3) {
    std::fprintf(stderr, "usage: craft_trace KIND PATH\n");
    return 2;
  }
  const std::string kind = argv[1];
  for (CraftedTrace k : {CraftedTrace::HugeSources, CraftedTrace::SourcesBeyondHeader, CraftedTrace::ImageBeyondLimit,
                         CraftedTrace::ImageMismatch}) {
    if (kind != scanback::test::craftedTraceName(k)) continue;
    std::string error;
    if (!scanback::test::writeCraftedTrace(k, argv[2], error)) {
      std::fprintf(stderr, "craft_trace: %s: %s\n", argv[2], error.c_str());
      return 1;
    }
    return 0;
  }
  std::fprintf(stderr, "craft_trace: unknown kind '%s'\n", kind.c_str());
  return 2;
}
