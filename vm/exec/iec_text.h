// IEC 61131-3 text forms of values: T#1s500ms, D#2024-01-15, TOD#08:30:00, DT#..., used by
// the string conversion functions, the printed state and the debugger.
#pragma once

#include <cstdint>
#include <string>

namespace scanback {

std::string formatDuration(int64_t ns, bool ltime = false);  // "T#1s500ms", "LTIME#5us", "T#0s"
std::string formatDate(int64_t ns);                          // "D#2024-01-15"
std::string formatTimeOfDay(int64_t ns);                     // "TOD#08:30:15.5"
std::string formatDateAndTime(int64_t ns);                   // "DT#2024-01-15-08:30:00"
std::string formatReal(double value, bool single);           // shortest text that reads back exactly

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
int64_t daysFromCivil(int64_t year, unsigned month, unsigned day);
void civilFromDays(int64_t days, int64_t& year, unsigned& month, unsigned& day);

inline constexpr int64_t kNsPerSecond = 1'000'000'000;
inline constexpr int64_t kNsPerDay = 86'400 * kNsPerSecond;

}  // namespace scanback
