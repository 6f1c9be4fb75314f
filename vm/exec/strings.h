// STRING operations on the image layout [u16 length][capacity bytes]. Results are truncated to
// the destination's capacity; positions are 1-based as in IEC 61131-3 and clamped to the string.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace scanback {

inline constexpr size_t kStringScratchBytes = 2 * 65536 + 64;
inline constexpr uint32_t kStringHeaderBytes = 2;

inline std::string_view stringView(const uint8_t* s) {
  uint16_t n;
  std::memcpy(&n, s, 2);
  return {reinterpret_cast<const char*>(s + kStringHeaderBytes), n};
}
void stringAssign(uint8_t* d, uint32_t capacity, std::string_view value);
void stringConcat(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, char* scratch);
void stringLeft(uint8_t* d, uint32_t capacity, std::string_view s, int64_t n, char* scratch);
void stringRight(uint8_t* d, uint32_t capacity, std::string_view s, int64_t n, char* scratch);
void stringMid(uint8_t* d, uint32_t capacity, std::string_view s, int64_t len, int64_t pos, char* scratch);
void stringInsert(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, int64_t pos, char* scratch);
void stringDelete(uint8_t* d, uint32_t capacity, std::string_view s, int64_t len, int64_t pos, char* scratch);
void stringReplace(uint8_t* d, uint32_t capacity, std::string_view a, std::string_view b, int64_t len, int64_t pos,
                   char* scratch);
int64_t stringFind(std::string_view haystack, std::string_view needle);  // 1-based, 0 when absent

size_t formatInteger(char* buf, int64_t v);
size_t formatUnsigned(char* buf, uint64_t v);
size_t copyText(char* buf, std::string_view text);  // buf holds 64 bytes
int64_t parseStringInteger(std::string_view s);     // 0 when not a number
double parseStringReal(std::string_view s);
bool parseStringBool(std::string_view s);

}  // namespace scanback
