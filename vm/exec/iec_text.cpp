#include "vm/exec/iec_text.h"

#include <fmt/format.h>

#include <cmath>

namespace scanback {

std::string formatDuration(int64_t ns, bool ltime) {
  std::string out = ltime ? "LTIME#" : "T#";
  // Magnitude as unsigned so that INT64_MIN is representable.
  uint64_t m = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  if (ns < 0) out += '-';
  if (m == 0) return out + "0s";
  struct Unit {
    uint64_t ns;
    const char* name;
  };
  static constexpr Unit units[] = {{86'400'000'000'000ULL, "d"},
                                   {3'600'000'000'000ULL, "h"},
                                   {60'000'000'000ULL, "m"},
                                   {1'000'000'000ULL, "s"},
                                   {1'000'000ULL, "ms"},
                                   {1'000ULL, "us"},
                                   {1ULL, "ns"}};
  for (const Unit& u : units) {
    uint64_t n = m / u.ns;
    m %= u.ns;
    if (n) out += std::to_string(n) + u.name;
  }
  return out;
}

int64_t daysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void civilFromDays(int64_t z, int64_t& year, unsigned& month, unsigned& day) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  day = doy - (153 * mp + 2) / 5 + 1;
  month = mp < 10 ? mp + 3 : mp - 9;
  year = y + (month <= 2);
}

namespace {
int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

std::string clock(int64_t nsOfDay) {
  int64_t s = nsOfDay / kNsPerSecond;
  int64_t frac = nsOfDay % kNsPerSecond;
  std::string out = fmt::format("{:02}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  if (frac) {
    std::string digits = fmt::format("{:09}", frac);
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    out += '.' + digits;
  }
  return out;
}

std::string ymd(int64_t days) {
  int64_t y;
  unsigned m, d;
  civilFromDays(days, y, m, d);
  return fmt::format("{:04}-{:02}-{:02}", y, m, d);
}
}  // namespace

std::string formatDate(int64_t ns) { return "D#" + ymd(floorDiv(ns, kNsPerDay)); }

std::string formatTimeOfDay(int64_t ns) {
  int64_t t = ns % kNsPerDay;
  if (t < 0) t += kNsPerDay;
  return "TOD#" + clock(t);
}

std::string formatDateAndTime(int64_t ns) {
  int64_t days = floorDiv(ns, kNsPerDay);
  return "DT#" + ymd(days) + "-" + clock(ns - days * kNsPerDay);
}

std::string formatReal(double value, bool single) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "Inf" : "-Inf";
  std::string s = single ? fmt::format("{}", static_cast<float>(value)) : fmt::format("{}", value);
  return s;
}

}  // namespace scanback
