// A small check that a JUnit file (or any XML a command writes) is well-formed, shared by the tests
// of `scanback test --junit` and `scanback trace diff --junit`.
#pragma once

#include <string>
#include <vector>

namespace scanback::test {

// A small check that `xml` is well-formed: elements nest and close, attribute values are quoted,
// and '&' only starts one of the five entities or a character reference.
[[nodiscard]] inline bool wellFormedXml(const std::string& xml, std::string& why) {
  std::vector<std::string> open;
  size_t i = 0;
  if (xml.rfind("<?xml ", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      const size_t semi = xml.find(';', i);
      const std::string entity = semi == std::string::npos ? "" : xml.substr(i, semi - i + 1);
      if (entity != "&amp;" && entity != "&lt;" && entity != "&gt;" && entity != "&quot;" && entity != "&apos;" &&
          entity.rfind("&#", 0) != 0) {
        why = "bad entity at " + std::to_string(i);
        return false;
      }
      i = semi + 1;
      continue;
    }
    if (xml[i] != '<') {
      if (xml[i] == '>') {
        why = "stray '>' at " + std::to_string(i);
        return false;
      }
      ++i;
      continue;
    }
    const bool closing = xml[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1);
    const size_t nameEnd = xml.find_first_of(" />", j);
    const std::string name = xml.substr(j, nameEnd - j);
    j = nameEnd;
    char quote = 0;
    for (; j < xml.size() && (quote || xml[j] != '>'); ++j) {
      if (quote && xml[j] == quote)
        quote = 0;
      else if (!quote && (xml[j] == '"' || xml[j] == '\''))
        quote = xml[j];
      else if (quote && xml[j] == '<') {
        why = "'<' in an attribute at " + std::to_string(j);
        return false;
      }
    }
    if (j >= xml.size()) {
      why = "unclosed tag " + name;
      return false;
    }
    const bool empty = xml[j - 1] == '/';
    if (closing) {
      if (open.empty() || open.back() != name) {
        why = "</" + name + "> closes nothing open";
        return false;
      }
      open.pop_back();
    } else if (!empty) {
      open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty()) why = "<" + open.back() + "> is not closed";
  return open.empty();
}

}  // namespace scanback::test
