// Which statement of one program version is "the same statement" in another: what lets `scanback
// trace diff` say where two runs of different versions split, and a rerun apply a debugger's write
// made at a statement boundary to the boundary of the same statement in the new version.
//
// Statements are matched file by file (by path, else by file name, else the only file of each) in
// source order, by their text (the statement's first line from its first token, white space
// collapsed), as `diff` matches lines: the longest common subsequence, and between two matched
// statements the unmatched ones of both versions paired in order (a statement whose condition or
// constant changed is the same statement, changed). Versions with the same source texts map each
// statement to itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vm/bytecode/program.h"

namespace scanback::compare {

inline constexpr uint32_t kNoStatement = UINT32_MAX;

class StatementMap {
 public:
  StatementMap(const Program& a, const Program& b);

  // The statement of B that is statement `a` of A; kNoStatement when B has none.
  uint32_t toB(uint32_t a) const { return a < toB_.size() ? toB_[a] : kNoStatement; }
  // The two versions have the same source texts: every statement is itself.
  bool identity() const { return identity_; }
  // Whether the paths (statement ids, of A and of B) run the same statements, boundary by
  // boundary; when they do not, `split` is the first boundary where they differ (the length of
  // the shorter when one is a prefix of the other).
  bool samePath(const std::vector<uint32_t>& a, const std::vector<uint32_t>& b, size_t* split = nullptr) const;

 private:
  std::vector<uint32_t> toB_;
  bool identity_ = false;
};

// The statement's text as a human recognises it: its first line from its first token, trimmed.
std::string statementText(const Program& program, uint32_t statement);
// "file:line" of a statement ("?" when it has no location).
std::string statementLocation(const Program& program, uint32_t statement);

// Whether two programs were compiled from the same source texts (their file paths may differ).
bool sameSources(const Program& a, const Program& b);

}  // namespace scanback::compare
