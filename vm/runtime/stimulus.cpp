#include "vm/runtime/stimulus.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "vm/base/text.h"
#include "vm/runtime/forces.h"
#include "vm/runtime/values.h"

namespace scanback {

namespace {

// Splits a CSV line; commas inside '...' or "..." belong to the value.
std::vector<std::string> splitCells(std::string_view line) {
  std::vector<std::string> cells;
  std::string cur;
  char quote = 0;
  bool escaped = false;
  for (char c : line) {
    if (quote) {
      cur += c;
      if (escaped)
        escaped = false;  // $' and $" do not end the value
      else if (c == '$')
        escaped = true;
      else if (c == quote)
        quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
      cur += c;
    } else if (c == ',') {
      cells.emplace_back(trimSpace(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  cells.emplace_back(trimSpace(cur));
  return cells;
}

struct Column {
  VariableLocation where;
  bool input = false;
};

}  // namespace

std::optional<Stimulus> Stimulus::parse(std::string_view text, const std::string& path, const Program& program,
                                        std::string& error) {
  Stimulus s;
  std::vector<Column> columns;
  bool haveHeader = false;
  uint32_t lineNo = 0;
  size_t pos = 0;
  bool haveLast = false;
  uint64_t lastCycle = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(pos, end - pos));
    pos = end + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string t(trimSpace(line));
    if (t.empty() || t[0] == '#') {
      if (end == text.size()) break;
      continue;
    }
    std::vector<std::string> cells = splitCells(t);
    if (!haveHeader) {
      if (!equalsIgnoreCase(cells[0], "cycle")) {
        error = fmt::format("{}, line {}: the first column must be 'cycle', not '{}'", path, lineNo, cells[0]);
        return std::nullopt;
      }
      for (size_t i = 1; i < cells.size(); ++i) {
        std::string why;
        const std::optional<VariableLocation> loc = findWritableScalar(program, cells[i], why);
        if (!loc) {
          error = fmt::format("{}, line {}: column {} '{}': {}", path, lineNo, i + 1, cells[i], why);
          return std::nullopt;
        }
        Column c;
        c.where = *loc;
        c.input = loc->offset >= program.input.offset && loc->offset < program.input.offset + program.input.size;
        columns.push_back(c);
      }
      haveHeader = true;
      if (end == text.size()) break;
      continue;
    }
    if (cells.size() != columns.size() + 1) {
      error = fmt::format("{}, line {}: expected {} values, found {}", path, lineNo, columns.size() + 1, cells.size());
      return std::nullopt;
    }
    char* stop = nullptr;
    const unsigned long long cycle = std::strtoull(cells[0].c_str(), &stop, 10);
    if (cells[0].empty() || *stop || cells[0][0] == '-') {
      error = fmt::format("{}, line {}: cycle '{}' is not a cycle number", path, lineNo, cells[0]);
      return std::nullopt;
    }
    if (haveLast && cycle <= lastCycle) {
      error = fmt::format("{}, line {}: cycle {} does not come after cycle {}", path, lineNo, cycle, lastCycle);
      return std::nullopt;
    }
    haveLast = true;
    lastCycle = cycle;
    StimulusRow row;
    row.cycle = cycle;
    row.line = lineNo;
    for (size_t i = 0; i < columns.size(); ++i) {
      const std::string& value = cells[i + 1];
      if (value.empty()) continue;
      const Column& c = columns[i];
      std::vector<uint8_t> bytes;
      std::string why;
      if (!encodeValue(program, value, *c.where.type, bytes, why)) {
        error = fmt::format("{}, line {}: column '{}': {}", path, lineNo, c.where.path, why);
        return std::nullopt;
      }
      StimulusCell cell;
      cell.input = c.input;
      cell.write.offset = c.input ? c.where.offset - program.input.offset : c.where.offset;
      cell.write.bit = c.where.bit;
      cell.write.bytes = std::move(bytes);
      cell.write.author = WriteAuthor::Stimulus;
      row.cells.push_back(std::move(cell));
    }
    s.rows_.push_back(std::move(row));
    if (end == text.size()) break;
  }
  if (!haveHeader) {
    error = fmt::format("{}: no header line (cycle,<name>,...)", path);
    return std::nullopt;
  }
  return s;
}

std::optional<Stimulus> Stimulus::load(const std::string& path, const Program& program, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = fmt::format("{}: cannot read the file", path);
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, program, error);
}

void Stimulus::apply(uint64_t cycle, Runtime& runtime) {
  while (next_ < rows_.size() && rows_[next_].cycle < cycle) ++next_;
  if (next_ >= rows_.size() || rows_[next_].cycle != cycle) return;
  for (const StimulusCell& c : rows_[next_].cells) {
    if (c.input) {
      std::vector<uint8_t>& in = runtime.inputs();
      applyWrite(in.data(), static_cast<uint32_t>(in.size()), c.write);
      runtime.noteInputAuthor(c.write.offset, static_cast<uint32_t>(c.write.bytes.size()), WriteAuthor::Stimulus);
    } else {
      runtime.queueWrite(c.write);
    }
  }
  ++next_;
}

}  // namespace scanback
