#include "net/auth_token.h"

#include <sys/random.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

namespace scanback::net {

std::optional<std::string> readAuthToken(const std::string& path, std::string& error, std::string& warning) {
  std::ifstream in(path);
  if (!in) {
    error = "cannot read the token file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string line;
  std::getline(in, line);
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) {
    error = "the token file " + path + " holds no token (its first line is empty)";
    return std::nullopt;
  }
  const size_t last = line.find_last_not_of(" \t\r");
  if (last - first + 1 < kMinAuthTokenBytes) {
    error = "the token in " + path + " has " + std::to_string(last - first + 1) + " bytes; a token needs at least " +
            std::to_string(kMinAuthTokenBytes) + " (head -c 24 /dev/urandom | base64 makes one)";
    return std::nullopt;
  }
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && (st.st_mode & (S_IRGRP | S_IROTH)) != 0)
    warning = "the token file " + path + " can be read by other users (chmod 600 it)";
  return line.substr(first, last - first + 1);
}

std::optional<std::string> generateAuthToken(std::string& error) {
  uint8_t bytes[32];
  size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::string("no random source for a token: ") + std::strerror(errno);
      return std::nullopt;
    }
    got += static_cast<size_t>(n);
  }
  static const char digits[] = "0123456789abcdef";
  std::string token;
  for (uint8_t b : bytes) {
    token += digits[b >> 4];
    token += digits[b & 15];
  }
  return token;
}

bool sameAuthToken(std::string_view given, std::string_view expected) {
  unsigned difference = given.size() != expected.size() ? 1u : 0u;
  for (size_t i = 0; i < expected.size(); ++i) {
    const unsigned char g = i < given.size() ? static_cast<unsigned char>(given[i]) : 0;
    difference |= g ^ static_cast<unsigned char>(expected[i]);
  }
  return difference == 0 && !expected.empty();
}

}  // namespace scanback::net
