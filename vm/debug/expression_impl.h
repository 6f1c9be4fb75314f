// Internals of an Expression shared by compile.cpp and evaluator.cpp.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vm/debug/evaluator.h"
#include "vm/debug/nodes.h"

namespace scanback::debug {

struct Expression::Impl {
  const Program* program = nullptr;
  uint32_t pou = UINT32_MAX;
  std::string text;
  std::vector<std::unique_ptr<detail::Node>> nodes;  // owns the tree
  const detail::Node* root = nullptr;
  const Type* type = nullptr;
  bool storage = false;          // root is a place the user named
  bool readOnly = false;         // ... inside a constant
  bool usesContext = false;      // reads the frame or the instance: needs a context of `pou`
  uint32_t scratchSize = 0;      // bytes of string results
  bool stringFunctions = false;  // needs the string functions' work area
};

namespace detail {
// Parses, resolves and types `text`; null with `error` ("column N: ...") on failure.
[[nodiscard]] std::unique_ptr<Expression::Impl> compileExpression(const Program& program, uint32_t pou,
                                                                  std::string_view text, std::string& error);
}  // namespace detail

}  // namespace scanback::debug
