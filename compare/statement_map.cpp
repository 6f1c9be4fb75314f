#include "compare/statement_map.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

namespace scanback::compare {

namespace {

// Beyond this many cells the middle of two files is paired in order instead (a rewrite of a file
// of thousands of statements: the longest common subsequence would cost seconds).
constexpr size_t kMaxLcsCells = 4u << 20;

// The text of `statement` from its first token to the end of its line (or of the statement),
// with runs of white space made one space: what two versions of it are matched by.
std::string matchText(const Program& program, uint32_t statement) {
  const SourceSpan& s = program.statements[statement].span;
  if (!s.valid() || s.file >= program.sources.size()) return {};
  const std::string& text = program.sources.file(s.file).text;
  size_t at = 0;
  for (uint32_t line = 1; line < s.line && at != std::string::npos; ++line) {
    at = text.find('\n', at);
    if (at != std::string::npos) ++at;
  }
  if (at == std::string::npos) return {};
  at = std::min(text.size(), at + (s.column ? s.column - 1 : 0));
  size_t end = text.find('\n', at);
  if (end == std::string::npos) end = text.size();
  if (s.endLine == s.line && s.endColumn > s.column) end = std::min(end, at + (s.endColumn - s.column));
  std::string out;
  bool space = false;
  for (size_t i = at; i < end; ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The statements of one file of a program, in source order, with their text.
struct FileStatements {
  std::vector<uint32_t> ids;
  std::vector<std::string> texts;
};

std::vector<FileStatements> statementsByFile(const Program& program) {
  std::vector<FileStatements> files(program.sources.size());
  std::vector<uint32_t> ids(program.statements.size());
  for (uint32_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::sort(ids.begin(), ids.end(), [&](uint32_t a, uint32_t b) {
    const SourceSpan &x = program.statements[a].span, &y = program.statements[b].span;
    if (x.file != y.file) return x.file < y.file;
    if (x.line != y.line) return x.line < y.line;
    if (x.column != y.column) return x.column < y.column;
    return a < b;
  });
  for (uint32_t id : ids) {
    const SourceSpan& s = program.statements[id].span;
    if (!s.valid() || s.file >= files.size()) continue;
    files[s.file].ids.push_back(id);
    files[s.file].texts.push_back(matchText(program, id));
  }
  return files;
}

// Pairs the statements of one file in version A with those of its version in B.
void matchFile(const FileStatements& a, const FileStatements& b, std::vector<uint32_t>& toB) {
  const size_t n = a.ids.size(), m = b.ids.size();
  // Common prefix and suffix first: most edits leave most of a file as it was.
  size_t pre = 0;
  while (pre < n && pre < m && a.texts[pre] == b.texts[pre]) ++pre;
  size_t suf = 0;
  while (suf < n - pre && suf < m - pre && a.texts[n - 1 - suf] == b.texts[m - 1 - suf]) ++suf;
  for (size_t i = 0; i < pre; ++i) toB[a.ids[i]] = b.ids[i];
  for (size_t i = 0; i < suf; ++i) toB[a.ids[n - 1 - i]] = b.ids[m - 1 - i];
  const size_t an = n - pre - suf, bn = m - pre - suf;
  if (an == 0 || bn == 0) return;
  // The matched pairs of the middle (indexes into it), in order.
  std::vector<std::pair<size_t, size_t>> anchors;
  if ((an + 1) * (bn + 1) <= kMaxLcsCells) {
    std::vector<uint32_t> len((an + 1) * (bn + 1), 0);  // len[i][j]: LCS of a[i..] and b[j..]
    auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (bn + 1) + j]; };
    for (size_t i = an; i-- > 0;)
      for (size_t j = bn; j-- > 0;)
        at(i, j) = a.texts[pre + i] == b.texts[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
    for (size_t i = 0, j = 0; i < an && j < bn;) {
      if (a.texts[pre + i] == b.texts[pre + j]) {
        anchors.emplace_back(i++, j++);
      } else if (at(i + 1, j) >= at(i, j + 1)) {
        ++i;
      } else {
        ++j;
      }
    }
  }
  anchors.emplace_back(an, bn);  // the end, so that the last stretch is paired too
  size_t i0 = 0, j0 = 0;
  for (const auto& [i, j] : anchors) {
    // Between two matches: the changed statements, paired in order.
    for (size_t k = 0; k < std::min(i - i0, j - j0); ++k) toB[a.ids[pre + i0 + k]] = b.ids[pre + j0 + k];
    if (i < an) toB[a.ids[pre + i]] = b.ids[pre + j];
    i0 = i + 1;
    j0 = j + 1;
  }
}

std::string fileName(const std::string& path) { return std::filesystem::path(path).filename().string(); }

}  // namespace

bool sameSources(const Program& a, const Program& b) {
  if (a.sources.size() != b.sources.size() || a.test != b.test || a.codesysConversions != b.codesysConversions)
    return false;
  for (size_t i = 0; i < a.sources.size(); ++i)
    if (a.sources.file(static_cast<FileId>(i)).text != b.sources.file(static_cast<FileId>(i)).text) return false;
  return true;
}

StatementMap::StatementMap(const Program& a, const Program& b) : toB_(a.statements.size(), kNoStatement) {
  if (sameSources(a, b) && a.statements.size() == b.statements.size()) {
    identity_ = true;
    for (uint32_t i = 0; i < toB_.size(); ++i) toB_[i] = i;
    return;
  }
  const std::vector<FileStatements> fa = statementsByFile(a), fb = statementsByFile(b);
  // Files pair by path, then by file name, then the only file of each version with the other.
  std::vector<int> pairOf(a.sources.size(), -1);
  std::vector<bool> taken(b.sources.size(), false);
  auto pairBy = [&](auto key) {
    for (size_t i = 0; i < a.sources.size(); ++i) {
      if (pairOf[i] >= 0) continue;
      for (size_t j = 0; j < b.sources.size(); ++j) {
        if (taken[j] ||
            key(a.sources.file(static_cast<FileId>(i)).path) != key(b.sources.file(static_cast<FileId>(j)).path))
          continue;
        pairOf[i] = static_cast<int>(j);
        taken[j] = true;
        break;
      }
    }
  };
  pairBy([](const std::string& p) { return p; });
  pairBy([](const std::string& p) { return fileName(p); });
  if (a.sources.size() == 1 && b.sources.size() == 1) pairOf[0] = 0;
  for (size_t i = 0; i < a.sources.size(); ++i)
    if (pairOf[i] >= 0) matchFile(fa[i], fb[static_cast<size_t>(pairOf[i])], toB_);
}

bool StatementMap::samePath(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, size_t* split) const {
  const size_t n = std::min(a.size(), b.size());
  for (size_t k = 0; k < n; ++k) {
    if (toB(a[k]) != b[k]) {
      if (split) *split = k;
      return false;
    }
  }
  if (a.size() == b.size()) return true;
  if (split) *split = n;
  return false;
}

std::string statementText(const Program& program, uint32_t statement) {
  if (statement >= program.statements.size()) return {};
  const SourceSpan& s = program.statements[statement].span;
  if (!s.valid() || s.file >= program.sources.size()) return {};
  const std::string& text = program.sources.file(s.file).text;
  size_t begin = 0;
  for (uint32_t line = 1; line < s.line && begin != std::string::npos; ++line) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  if (begin == std::string::npos) return {};
  begin = std::min(text.size(), begin + (s.column ? s.column - 1 : 0));
  const size_t end = text.find('\n', begin);
  std::string out = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  const size_t last = out.find_last_not_of(" \t\r");
  return last == std::string::npos ? std::string() : out.substr(0, last + 1);
}

std::string statementLocation(const Program& program, uint32_t statement) {
  if (statement >= program.statements.size()) return "?";
  const SourceSpan& s = program.statements[statement].span;
  if (s.file >= program.sources.size()) return "?";
  return fmt::format("{}:{}", program.sources.file(s.file).path, s.line);
}

}  // namespace scanback::compare
