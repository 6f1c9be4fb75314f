// Stimulus CSV: `cycle,<address or Program.var>,...`; each row's values are applied at the start of
// that cycle and hold until a later row changes them. Empty cells leave a column unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vm/runtime/runtime.h"

namespace scanback {

struct StimulusCell {
  bool input = false;  // true: writes the field inputs (offset relative to the %I area)
  ExternalWrite write;
};

struct StimulusRow {
  uint64_t cycle = 0;
  uint32_t line = 0;
  std::vector<StimulusCell> cells;
};

class Stimulus {
 public:
  // Errors are "path, line N: message".
  [[nodiscard]] static std::optional<Stimulus> parse(std::string_view text, const std::string& path,
                                                     const Program& program, std::string& error);
  [[nodiscard]] static std::optional<Stimulus> load(const std::string& path, const Program& program,
                                                    std::string& error);

  // Applies the row for `cycle`, if any; call before Runtime::startCycle() of that cycle.
  void apply(uint64_t cycle, Runtime& runtime);
  const std::vector<StimulusRow>& rows() const { return rows_; }

 private:
  std::vector<StimulusRow> rows_;
  size_t next_ = 0;
};

}  // namespace scanback
