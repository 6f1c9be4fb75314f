#include "vm/syntax/lexer.h"

#include <charconv>
#include <limits>
#include <optional>
#include <unordered_map>

#include "vm/base/assert.h"
#include "vm/base/int128.h"

namespace scanback {

namespace {

constexpr uint64_t kNsPerSecond = 1'000'000'000ULL;
constexpr uint64_t kNsPerDay = 86'400ULL * kNsPerSecond;
constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
constexpr size_t kMaxLexErrors = 100;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool isIdentChar(char c) { return isLetter(c) || isDigit(c) || c == '_'; }
char toUpper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c; }
int hexValue(char c) {
  if (isDigit(c)) return c - '0';
  char u = toUpper(c);
  if (u >= 'A' && u <= 'F') return u - 'A' + 10;
  return -1;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// The named escapes STRING and WSTRING literals share ($$ $' $" $L $N $P $R $T), or 0.
char namedEscape(char e) {
  switch (e) {
    case '$': return '$';
    case '\'': return '\'';
    case '"': return '"';
    case 'L':
    case 'l':
    case 'N':
    case 'n': return '\n';
    case 'P':
    case 'p': return '\f';
    case 'R':
    case 'r': return '\r';
    case 'T':
    case 't': return '\t';
    default: return 0;
  }
}

// How an invalid escape's character is quoted in its error: control and non-ASCII bytes as '?'.
std::string shownEscape(char e) {
  const auto byte = static_cast<unsigned char>(e);
  return byte < 0x20 || byte >= 0x7f ? std::string("?") : std::string(1, e);
}

bool isLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }
unsigned daysInMonth(int64_t y, unsigned m) {
  static const unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && isLeapYear(y) ? 29 : kDays[m - 1];
}

// Looked up by the upper-case spelling as a string_view (no string made for each word).
struct KeywordHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using KeywordTable = std::unordered_map<std::string, TokenKind, KeywordHash, std::equal_to<>>;
constexpr size_t kLongestKeyword = 23;  // END_TEST_FUNCTION_BLOCK

const KeywordTable& keywordTable() {
  static const KeywordTable table = [] {
    KeywordTable t;
#define SCANBACK_KW_MAP(name, spelling) t.emplace(spelling, TokenKind::Kw##name);
    SCANBACK_ST_KEYWORDS(SCANBACK_KW_MAP)
#undef SCANBACK_KW_MAP
    return t;
  }();
  return table;
}

enum class PrefixClass { None, Int, Real, Bool, Time, Date, Tod, Dt };

// Classifies the identifier before a '#'. `normalised` receives the typePrefix to store.
PrefixClass classifyPrefix(const std::string& upper, std::string& normalised) {
  static const char* const kIntTypes[] = {"SINT",  "INT",   "DINT", "LINT", "USINT", "UINT",
                                          "UDINT", "ULINT", "BYTE", "WORD", "DWORD", "LWORD"};
  for (const char* t : kIntTypes)
    if (upper == t) {
      normalised = upper;
      return PrefixClass::Int;
    }
  if (upper == "REAL" || upper == "LREAL") {
    normalised = upper;
    return PrefixClass::Real;
  }
  if (upper == "BOOL") {
    normalised = upper;
    return PrefixClass::Bool;
  }
  if (upper == "T" || upper == "TIME") {
    normalised = "TIME";
    return PrefixClass::Time;
  }
  if (upper == "LT" || upper == "LTIME") {
    normalised = "LTIME";
    return PrefixClass::Time;
  }
  if (upper == "D" || upper == "DATE") {
    normalised = "DATE";
    return PrefixClass::Date;
  }
  if (upper == "TOD" || upper == "TIME_OF_DAY") {
    normalised = "TOD";
    return PrefixClass::Tod;
  }
  if (upper == "DT" || upper == "DATE_AND_TIME") {
    normalised = "DT";
    return PrefixClass::Dt;
  }
  return PrefixClass::None;
}

// Parses a duration body ("1h_30m", "1.5s", "1d2h3m4s5ms6us7ns") to a magnitude in ns.
[[nodiscard]] bool parseDuration(std::string_view s, uint64_t& magnitude, std::string& error) {
  static const struct {
    const char* name;
    uint64_t ns;
  } kUnits[] = {{"D", kNsPerDay},
                {"H", 3600 * kNsPerSecond},
                {"M", 60 * kNsPerSecond},
                {"S", kNsPerSecond},
                {"MS", 1'000'000},
                {"US", 1'000},
                {"NS", 1}};
  UInt128 total = 0;
  int lastRank = -1;
  bool any = false;
  bool hadFraction = false;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '_') {
      if (!any) {
        error = "unexpected '_'";
        return false;
      }
      ++i;
      continue;
    }
    if (hadFraction) {
      error = "a fraction is only allowed on the last unit";
      return false;
    }
    if (!isDigit(s[i])) {
      error = std::string("unexpected '") + s[i] + "'";
      return false;
    }
    UInt128 whole = 0;
    while (i < s.size() && (isDigit(s[i]) || s[i] == '_')) {
      if (s[i] != '_') {
        whole = whole * 10 + static_cast<unsigned>(s[i] - '0');
        if (whole > kInt64Max + 1ULL) {
          error = "value out of range";
          return false;
        }
      }
      ++i;
    }
    uint64_t frac = 0, fracScale = 1;
    bool fraction = false;
    if (i < s.size() && s[i] == '.') {
      fraction = true;
      ++i;
      if (i >= s.size() || !isDigit(s[i])) {
        error = "expected digits after '.'";
        return false;
      }
      while (i < s.size() && (isDigit(s[i]) || s[i] == '_')) {
        if (s[i] != '_' && fracScale < 1'000'000'000'000'000'000ULL) {
          frac = frac * 10 + static_cast<unsigned>(s[i] - '0');
          fracScale *= 10;
        }
        ++i;
      }
    }
    // unit: try two-letter units first
    int rank = -1;
    size_t unitLen = 0;
    for (int r = 0; r < 7; ++r) {
      std::string_view name = kUnits[r].name;
      if (i + name.size() > s.size()) continue;
      bool match = true;
      for (size_t k = 0; k < name.size(); ++k)
        if (toUpper(s[i + k]) != name[k]) match = false;
      if (match && name.size() > unitLen) {
        rank = r;
        unitLen = name.size();
      }
    }
    if (rank < 0) {
      error = i < s.size() ? std::string("unknown unit '") + s[i] + "'" : "missing unit (d, h, m, s, ms, us, ns)";
      return false;
    }
    if (rank <= lastRank) {
      error = "units must appear once each, largest first";
      return false;
    }
    i += unitLen;
    lastRank = rank;
    const uint64_t unit = kUnits[rank].ns;
    total += whole * unit;
    if (fraction) {
      UInt128 f = static_cast<UInt128>(frac) * unit;
      total += (f + fracScale / 2) / fracScale;  // round to the nearest ns
    }
    if (total > static_cast<UInt128>(kInt64Max) + 1) {
      error = "value out of range";
      return false;
    }
    hadFraction = fraction;
    any = true;
  }
  if (!any) {
    error = "missing value";
    return false;
  }
  magnitude = static_cast<uint64_t>(total);
  return true;
}

bool parseUnsigned(std::string_view s, uint64_t& out) {
  if (s.empty() || s.size() > 18) return false;
  out = 0;
  for (char c : s) {
    if (!isDigit(c)) return false;
    out = out * 10 + static_cast<unsigned>(c - '0');
  }
  return true;
}

// "YYYY-MM-DD" -> days since 1970-01-01.
[[nodiscard]] bool parseDate(std::string_view s, int64_t& days, std::string& error) {
  size_t d1 = s.find('-');
  size_t d2 = d1 == std::string_view::npos ? d1 : s.find('-', d1 + 1);
  uint64_t y, m, d;
  if (d2 == std::string_view::npos || !parseUnsigned(s.substr(0, d1), y) ||
      !parseUnsigned(s.substr(d1 + 1, d2 - d1 - 1), m) || !parseUnsigned(s.substr(d2 + 1), d) || y > 9999) {
    error = "expected YYYY-MM-DD";
    return false;
  }
  if (m < 1 || m > 12 || d < 1 || d > daysInMonth(static_cast<int64_t>(y), static_cast<unsigned>(m))) {
    error = "no such date";
    return false;
  }
  days = days_from_civil(static_cast<int64_t>(y), static_cast<unsigned>(m), static_cast<unsigned>(d));
  return true;
}

// "HH:MM:SS[.fraction]" -> ns since midnight. "HH:MM" is HH:MM:00: IEC wants the seconds, but
// CODESYS accepts them left out and writes TOD#00:00 in its own libraries' documentation (and
// OSCAT's DT_TO_STRF compares with TOD#12:00).
[[nodiscard]] bool parseTimeOfDay(std::string_view s, uint64_t& ns, std::string& error) {
  size_t c1 = s.find(':');
  size_t c2 = c1 == std::string_view::npos ? c1 : s.find(':', c1 + 1);
  if (c1 == std::string_view::npos) {
    error = "expected HH:MM:SS";
    return false;
  }
  const bool noSeconds = c2 == std::string_view::npos;
  if (noSeconds) c2 = s.size();
  std::string_view secText = noSeconds ? std::string_view("0") : s.substr(c2 + 1);
  std::string_view fracText;
  size_t dot = secText.find('.');
  if (dot != std::string_view::npos) {
    fracText = secText.substr(dot + 1);
    secText = secText.substr(0, dot);
  }
  uint64_t h, m, sec;
  if (!parseUnsigned(s.substr(0, c1), h) || !parseUnsigned(s.substr(c1 + 1, c2 - c1 - 1), m) ||
      !parseUnsigned(secText, sec) || (dot != std::string_view::npos && fracText.empty())) {
    error = "expected HH:MM:SS";
    return false;
  }
  uint64_t frac = 0, scale = 1;
  for (char c : fracText) {
    if (!isDigit(c)) {
      error = "expected HH:MM:SS";
      return false;
    }
    if (scale < kNsPerSecond) {  // sub-nanosecond digits are truncated
      frac = frac * 10 + static_cast<unsigned>(c - '0');
      scale *= 10;
    }
  }
  if (h > 23 || m > 59 || sec > 59) {
    error = "hour, minute or second out of range";
    return false;
  }
  ns = ((h * 60 + m) * 60 + sec) * kNsPerSecond + frac * (kNsPerSecond / scale);
  return true;
}

}  // namespace

class Lexer {
 public:
  Lexer(std::string_view text, FileId file, Diagnostics& diag) : src_(text), file_(file), diag_(diag) {
    // A UTF-8 byte order mark (editors on Windows write one) is not part of the text: skipped, and
    // not counted as columns, as editors do not show it.
    if (src_.substr(0, 3) == "\xEF\xBB\xBF") i_ = 3;
  }

  // The next token into `out` (whatever it held is replaced): EndOfFile at the end, and again at
  // every later call. Written in place, so that a token is never moved (the parser's window
  // reuses its slots, and their strings' memory).
  void next(Token& out) {
    out_ = &out;
    emitted_ = false;
    while (!emitted_) {
      if (i_ >= src_.size()) {
        begin();
        Token& eof = emit(TokenKind::EndOfFile);
        eof.span = SourceSpan{file_, line_, col_, line_, col_};
        return;
      }
      char c = src_[i_];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v') {
        bump();
        continue;
      }
      if (c == '(' && peekChar(1) == '*') {
        skipBlockComment('*', ')');
        continue;
      }
      if (c == '/' && peekChar(1) == '*') {
        skipBlockComment('*', '/');
        continue;
      }
      if (c == '/' && peekChar(1) == '/') {
        while (i_ < src_.size() && src_[i_] != '\n') bump();
        continue;
      }
      if (c == '{') {
        skipPragma();
        continue;
      }
      lexToken();  // emits at most one token (an unknown character none)
    }
  }

 private:
  std::string_view src_;
  FileId file_;
  Diagnostics& diag_;
  size_t i_ = 0;
  uint32_t line_ = 1;
  uint32_t col_ = 1;
  size_t errors_ = 0;
  Token* out_ = nullptr;  // the token being lexed (its payload is filled in after emit())
  bool emitted_ = false;
  // The token emitted before it: after a '.', a number is a bit index (lexNumberToken).
  TokenKind previousKind_ = TokenKind::EndOfFile;
  uint32_t previousEndLine_ = 0, previousEndCol_ = 0;

  // token start
  size_t startI_ = 0;
  uint32_t startLine_ = 1, startCol_ = 1;

  char peekChar(size_t ahead) const { return i_ + ahead < src_.size() ? src_[i_ + ahead] : '\0'; }
  char cur() const { return peekChar(0); }
  void bump() {
    if (i_ >= src_.size()) return;
    if (src_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }

  SourceSpan here(uint32_t length = 1) const { return SourceSpan{file_, line_, col_, line_, col_ + length}; }
  SourceSpan tokenSpan() const { return SourceSpan{file_, startLine_, startCol_, line_, col_}; }

  void error(const SourceSpan& span, std::string message) {
    if (errors_ == kMaxLexErrors) return;
    if (++errors_ == kMaxLexErrors) message = "too many lexical errors; further ones are not reported";
    diag_.error(span, std::move(message));
  }

  void skipBlockComment(char close1, char close2) {
    SourceSpan start = here(2);
    bump();
    bump();
    while (i_ < src_.size()) {
      if (src_[i_] == close1 && peekChar(1) == close2) {
        bump();
        bump();
        return;
      }
      bump();
    }
    error(start, "unterminated comment");
  }

  void skipPragma() {
    SourceSpan start = here();
    const size_t from = i_;
    while (i_ < src_.size()) {
      if (src_[i_] == '}') {
        bump();
        noteAttribute(src_.substr(from + 1, i_ - from - 2), start);
        return;
      }
      bump();
    }
    error(start, "unterminated pragma '{'");
  }

  // `{attribute 'qualified_only'}`: the attributes that mean something to scanback are kept (the
  // name lower-case), every other pragma is ignored, as CODESYS ignores pragmas it does not know.
  void noteAttribute(std::string_view body, const SourceSpan& span) {
    auto trim = [](std::string_view s) {
      while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r' || s.front() == '\n'))
        s.remove_prefix(1);
      while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
        s.remove_suffix(1);
      return s;
    };
    body = trim(body);
    constexpr std::string_view kWord = "attribute";
    if (body.size() <= kWord.size() || !equalsIgnoreCase(body.substr(0, kWord.size()), kWord)) return;
    body = trim(body.substr(kWord.size()));
    if (body.size() < 2 || body.front() != '\'') return;
    const size_t close = body.find('\'', 1);
    if (close == std::string_view::npos) return;
    std::string name(body.substr(1, close - 1));
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    attributes_.push_back(ast::Attribute{std::move(name), span});
  }

 public:
  std::vector<ast::Attribute> attributes_;

 private:
  void begin() {
    startI_ = i_;
    startLine_ = line_;
    startCol_ = col_;
  }

  Token& emit(TokenKind kind) {
    SB_ASSERT(!emitted_, "two tokens lexed at once ({} after {})", tokenKindName(kind), tokenKindName(out_->kind));
    emitted_ = true;
    Token& t = *out_;
    t.kind = kind;
    t.span = tokenSpan();
    t.text = src_.substr(startI_, i_ - startI_);
    t.intValue = 0;
    t.negative = false;
    t.boolValue = false;
    t.typePrefix = LiteralPrefix();
    t.stringValue.clear();
    t.area = 0;
    t.size = 0;
    t.parts.clear();
    previousKind_ = kind;
    previousEndLine_ = t.span.endLine;
    previousEndCol_ = t.span.endColumn;
    return t;
  }

  void lexToken() {
    begin();
    char c = cur();
    if (isLetter(c) || c == '_') return lexWord();
    if (isDigit(c)) return lexNumberToken();
    if (c == '\'') return lexString();
    if (c == '"') return lexWString();
    if (c == '%') return lexDirectAddress();
    lexOperator();
  }

  void lexOperator() {
    char c = cur(), n = peekChar(1);
    auto two = [&](TokenKind k) {
      bump();
      bump();
      emit(k);
    };
    auto one = [&](TokenKind k) {
      bump();
      emit(k);
    };
    switch (c) {
      case ':': return n == '=' ? two(TokenKind::Assign) : one(TokenKind::Colon);
      case '=': return n == '>' ? two(TokenKind::Arrow) : one(TokenKind::Eq);
      case '.': return n == '.' ? two(TokenKind::DotDot) : one(TokenKind::Dot);
      case ',': return one(TokenKind::Comma);
      case ';': return one(TokenKind::Semicolon);
      case '(': return one(TokenKind::LParen);
      case ')': return one(TokenKind::RParen);
      case '[': return one(TokenKind::LBracket);
      case ']': return one(TokenKind::RBracket);
      case '^': return one(TokenKind::Caret);
      case '*': return n == '*' ? two(TokenKind::Power) : one(TokenKind::Star);
      case '/': return one(TokenKind::Slash);
      case '+': return one(TokenKind::Plus);
      case '-': return one(TokenKind::Minus);
      case '<':
        if (n == '=') return two(TokenKind::Le);
        if (n == '>') return two(TokenKind::Ne);
        return one(TokenKind::Lt);
      case '>': return n == '=' ? two(TokenKind::Ge) : one(TokenKind::Gt);
      case '&': return one(TokenKind::Ampersand);
      case '#': return one(TokenKind::Hash);
      default: break;
    }
    // Unknown characters: one error for a run of them.
    SourceSpan span = here();
    auto known = [](char ch) {
      return isIdentChar(ch) || ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v' ||
             std::string_view(":=.,;()[]^*/+-<>&#'\"%{").find(ch) != std::string_view::npos;
    };
    std::string shown;
    unsigned char uc = static_cast<unsigned char>(c);
    if (uc >= 0x21 && uc < 0x7f) {
      shown = std::string("'") + c + "'";
    } else {
      static const char* kHex = "0123456789ABCDEF";
      shown = std::string("0x") + kHex[uc >> 4] + kHex[uc & 15];
    }
    while (i_ < src_.size() && !known(src_[i_])) bump();
    span.endLine = line_;
    span.endColumn = col_;
    error(span, "unexpected character " + shown);
  }

  void lexWord() {
    while (i_ < src_.size() && isIdentChar(src_[i_])) bump();
    std::string_view word = src_.substr(startI_, i_ - startI_);
    if (cur() != '#') {
      // The common case, without a string: a keyword, TRUE or FALSE, or an identifier.
      if (word.size() <= kLongestKeyword) {
        char buffer[kLongestKeyword];
        for (size_t k = 0; k < word.size(); ++k) buffer[k] = toUpper(word[k]);
        const std::string_view upper(buffer, word.size());
        if (upper == "TRUE" || upper == "FALSE") {
          Token& t = emit(TokenKind::BoolLiteral);
          t.boolValue = upper == "TRUE";
          return;
        }
        const KeywordTable& keywords = keywordTable();
        if (auto it = keywords.find(upper); it != keywords.end()) {
          emit(it->second);
          return;
        }
        if (upper == "__ISVALIDREF" || upper == "__QUERYINTERFACE" || upper == "__QUERYPOINTER") {
          emit(TokenKind::Identifier);  // CODESYS's operators: their two underscores are allowed
          return;
        }
      }
      identifier(word);
      return;
    }
    std::string upper = upperCase(word);

    if (cur() == '#' && (upper == "STRING" || upper == "WSTRING" || upper == "WCHAR") &&
        (peekChar(1) == '\'' || peekChar(1) == '"')) {
      // STRING#'...', WSTRING#"...", WCHAR#"x": the quotes must match the type.
      const bool wideQuote = peekChar(1) == '"';
      bump();  // '#'
      if (wideQuote == (upper == "STRING"))
        error(tokenSpan(), upper + "# takes a " + (upper == "STRING" ? "'...'" : "\"...\"") + " literal");
      if (wideQuote) return lexWString(upper == "STRING" ? "WSTRING" : upper);
      lexString();
      out_->typePrefix = LiteralPrefix("STRING");
      return;
    }
    if (cur() == '#') {
      std::string normalised;
      PrefixClass pc = classifyPrefix(upper, normalised);
      if (pc != PrefixClass::None && typedLiteralFollows(pc)) {
        bump();  // '#'
        return lexTypedLiteral(pc, normalised);
      }
    }

    if (upper == "TRUE" || upper == "FALSE") {
      Token& t = emit(TokenKind::BoolLiteral);
      t.boolValue = upper == "TRUE";
      return;
    }
    auto it = keywordTable().find(upper);
    if (it != keywordTable().end()) {
      emit(it->second);
      return;
    }
    // CODESYS's operators (__ISVALIDREF, __QUERYINTERFACE, __QUERYPOINTER) begin with two.
    const bool codesysOperator = upper == "__ISVALIDREF" || upper == "__QUERYINTERFACE" || upper == "__QUERYPOINTER";
    if (codesysOperator)
      emit(TokenKind::Identifier);
    else
      identifier(word);
  }

  void identifier(std::string_view word) {
    if (word.find("__") != std::string_view::npos || word.back() == '_')
      error(tokenSpan(), "invalid identifier '" + std::string(word) + "' (double or trailing underscore)");
    emit(TokenKind::Identifier);
  }

  // After "PREFIX" with cur() == '#': does a literal value follow (rather than an enum value)?
  bool typedLiteralFollows(PrefixClass pc) const {
    char a = peekChar(1), b = peekChar(2);
    bool signedDigit = isDigit(a) || ((a == '-' || a == '+') && isDigit(b));
    switch (pc) {
      case PrefixClass::Bool: {
        if (isDigit(a)) return true;
        std::string rest;
        for (size_t k = i_ + 1; k < src_.size() && isIdentChar(src_[k]); ++k) rest += toUpper(src_[k]);
        return rest == "TRUE" || rest == "FALSE";
      }
      case PrefixClass::Date:
      case PrefixClass::Tod:
      case PrefixClass::Dt: return isDigit(a);
      default: return signedDigit;
    }
  }

  void lexTypedLiteral(PrefixClass pc, const std::string& prefix) {
    switch (pc) {
      case PrefixClass::Time: return lexDuration(prefix);
      case PrefixClass::Date:
      case PrefixClass::Tod:
      case PrefixClass::Dt: return lexDateTime(pc, prefix);
      case PrefixClass::Bool: {
        bool value = false, ok = true;
        if (isLetter(cur())) {
          std::string w;
          while (isIdentChar(cur())) {
            w += toUpper(cur());
            bump();
          }
          value = w == "TRUE";
        } else {
          NumberValue n = lexNumber(false);
          ok = n.ok && !n.isReal && n.intValue <= 1;
          value = n.intValue == 1;
          if (n.ok && !ok) error(tokenSpan(), "BOOL literal must be 0, 1, TRUE or FALSE");
        }
        Token& t = emit(TokenKind::BoolLiteral);
        t.boolValue = ok && value;
        t.typePrefix = LiteralPrefix(prefix);
        return;
      }
      case PrefixClass::Int:
      case PrefixClass::Real: {
        bool negative = false;
        if (cur() == '-' || cur() == '+') {
          negative = cur() == '-';
          bump();
        }
        NumberValue n = lexNumber(false);
        if (pc == PrefixClass::Real) {
          Token& t = emit(TokenKind::RealLiteral);
          double v = n.isReal ? n.realValue : static_cast<double>(n.intValue);
          t.realValue = negative ? -v : v;
          t.typePrefix = LiteralPrefix(prefix);
        } else {
          if (n.ok && n.isReal) error(tokenSpan(), "a " + prefix + " literal cannot have a fraction or exponent");
          Token& t = emit(TokenKind::IntLiteral);
          t.intValue = n.isReal ? 0 : n.intValue;
          t.negative = negative;
          t.typePrefix = LiteralPrefix(prefix);
        }
        return;
      }
      case PrefixClass::None: break;
    }
  }

  struct NumberValue {
    bool ok = true;
    bool isReal = false;
    uint64_t intValue = 0;
    double realValue = 0.0;
  };

  // Lexes a number at cur() (a digit): decimal, based (2#, 8#, 16#) or real. Reports errors.
  NumberValue lexNumber(bool intOnly) {
    NumberValue r;
    size_t digitsStart = i_;
    while (isDigit(cur()) || cur() == '_') bump();
    std::string_view digits = src_.substr(digitsStart, i_ - digitsStart);

    if (cur() == '#' && digits.find('_') == std::string_view::npos) {
      // based integer
      uint64_t base = 0;
      for (char c : digits) base = base > 100 ? base : base * 10 + static_cast<unsigned>(c - '0');
      bump();  // '#'
      size_t valueStart = i_;
      while (isIdentChar(cur())) bump();
      std::string_view value = src_.substr(valueStart, i_ - valueStart);
      if (base != 2 && base != 8 && base != 16) {
        error(tokenSpan(), "invalid number base " + std::string(digits) + " (use 2#, 8# or 16#)");
        r.ok = false;
        return r;
      }
      bool any = false;
      for (char c : value) {
        if (c == '_') continue;
        int v = hexValue(c);
        if (v < 0 || static_cast<uint64_t>(v) >= base) {
          error(tokenSpan(), std::string("invalid digit '") + c + "' in base-" + std::to_string(base) + " literal");
          r.ok = false;
          return r;
        }
        if (r.intValue > (std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(v)) / base) {
          error(tokenSpan(), "integer literal is too large");
          r.ok = false;
          r.intValue = 0;
          return r;
        }
        r.intValue = r.intValue * base + static_cast<uint64_t>(v);
        any = true;
      }
      if (!any || value.find("__") != std::string_view::npos || value.back() == '_') {
        error(tokenSpan(), "invalid based literal '" + std::string(src_.substr(startI_, i_ - startI_)) + "'");
        r.ok = false;
        r.intValue = 0;
      }
      return r;
    }

    bool real = false;
    if (!intOnly) {
      if (cur() == '.' && isDigit(peekChar(1))) {
        real = true;
        bump();
        while (isDigit(cur()) || cur() == '_') bump();
      }
      if ((cur() == 'e' || cur() == 'E') &&
          (isDigit(peekChar(1)) || ((peekChar(1) == '-' || peekChar(1) == '+') && isDigit(peekChar(2))))) {
        real = true;
        bump();
        if (cur() == '-' || cur() == '+') bump();
        while (isDigit(cur())) bump();
      }
    }
    std::string_view text = src_.substr(digitsStart, i_ - digitsStart);
    // A letter or underscore glued to a number is an error ("12abc").
    if (isIdentChar(cur())) {
      while (isIdentChar(cur())) bump();
      error(tokenSpan(), "invalid numeric literal '" + std::string(src_.substr(startI_, i_ - startI_)) + "'");
      r.ok = false;
      r.isReal = real;
      return r;
    }
    if (text.find("__") != std::string_view::npos || text.find("_.") != std::string_view::npos ||
        text.find("_e") != std::string_view::npos || text.find("_E") != std::string_view::npos || text.back() == '_') {
      error(tokenSpan(), "misplaced '_' in numeric literal '" + std::string(text) + "'");
      r.ok = false;
    }
    std::string clean;
    for (char c : text)
      if (c != '_') clean += c;
    if (real) {
      r.isReal = true;
      double v = 0;
      auto res = std::from_chars(clean.data(), clean.data() + clean.size(), v);
      if (res.ec != std::errc() && r.ok) {
        error(tokenSpan(), "real literal '" + std::string(text) + "' is out of range");
        r.ok = false;
        v = 0;
      }
      r.realValue = v;
      return r;
    }
    for (char c : clean) {
      uint64_t d = static_cast<uint64_t>(c - '0');
      if (r.intValue > (std::numeric_limits<uint64_t>::max() - d) / 10) {
        error(tokenSpan(), "integer literal '" + std::string(text) + "' is too large");
        r.ok = false;
        r.intValue = 0;
        return r;
      }
      r.intValue = r.intValue * 10 + d;
    }
    return r;
  }

  void lexNumberToken() {
    // After a '.', a number is a bit index or member: "x.1.2" is bit 1 then bit 2, never a real.
    bool afterDot = previousKind_ == TokenKind::Dot && previousEndLine_ == startLine_ && previousEndCol_ == startCol_;
    NumberValue n = lexNumber(afterDot);
    if (n.isReal) {
      Token& t = emit(TokenKind::RealLiteral);
      t.realValue = n.realValue;
    } else {
      Token& t = emit(TokenKind::IntLiteral);
      t.intValue = n.intValue;
    }
  }

  void lexDuration(const std::string& prefix) {
    bool negative = false;
    if (cur() == '-' || cur() == '+') {
      negative = cur() == '-';
      bump();
    }
    size_t bodyStart = i_;
    while (isIdentChar(cur()) || (cur() == '.' && isDigit(peekChar(1)))) bump();
    std::string_view body = src_.substr(bodyStart, i_ - bodyStart);
    uint64_t magnitude = 0;
    std::string why;
    bool ok = parseDuration(body, magnitude, why);
    if (ok && !negative && magnitude > kInt64Max) {
      ok = false;
      why = "value out of range";
    }
    if (!ok) {
      error(tokenSpan(),
            "invalid " + prefix + " literal '" + std::string(src_.substr(startI_, i_ - startI_)) + "': " + why);
      magnitude = 0;
    }
    Token& t = emit(TokenKind::TimeLiteral);
    t.intValue = negative ? (~magnitude + 1) : magnitude;  // two's complement of the signed value
    t.typePrefix = LiteralPrefix(prefix);
  }

  void lexDateTime(PrefixClass pc, const std::string& prefix) {
    size_t bodyStart = i_;
    for (;;) {
      char c = cur();
      if (isDigit(c) || c == '_') {
        bump();
      } else if ((c == '-' && pc != PrefixClass::Tod) || ((c == ':' || c == '.') && pc != PrefixClass::Date)) {
        if (!isDigit(peekChar(1))) break;
        bump();
      } else {
        break;
      }
    }
    // Glued letters make the literal invalid rather than starting a new token.
    while (isIdentChar(cur())) bump();
    std::string body;
    for (char c : src_.substr(bodyStart, i_ - bodyStart))
      if (c != '_') body += c;
    std::string why;
    bool ok = true;
    int64_t days = 0;
    uint64_t tod = 0;
    Int128 ns = 0;
    if (pc == PrefixClass::Date) {
      ok = parseDate(body, days, why);
      ns = static_cast<Int128>(days) * kNsPerDay;
    } else if (pc == PrefixClass::Tod) {
      ok = parseTimeOfDay(body, tod, why);
      ns = tod;
    } else {
      size_t d1 = body.find('-');
      size_t d2 = d1 == std::string::npos ? d1 : body.find('-', d1 + 1);
      size_t d3 = d2 == std::string::npos ? d2 : body.find('-', d2 + 1);
      if (d3 == std::string::npos) {
        ok = false;
        why = "expected YYYY-MM-DD-HH:MM:SS";
      } else {
        ok = parseDate(std::string_view(body).substr(0, d3), days, why) &&
             parseTimeOfDay(std::string_view(body).substr(d3 + 1), tod, why);
        ns = static_cast<Int128>(days) * kNsPerDay + tod;
      }
    }
    if (ok && (ns > static_cast<Int128>(kInt64Max) || ns < -static_cast<Int128>(kInt64Max) - 1)) {
      ok = false;
      why = "out of range";
    }
    if (!ok) {
      error(tokenSpan(),
            "invalid " + prefix + " literal '" + std::string(src_.substr(startI_, i_ - startI_)) + "': " + why);
      ns = 0;
    }
    TokenKind kind = pc == PrefixClass::Date  ? TokenKind::DateLiteral
                     : pc == PrefixClass::Tod ? TokenKind::TodLiteral
                                              : TokenKind::DtLiteral;
    Token& t = emit(kind);
    t.intValue = static_cast<uint64_t>(static_cast<int64_t>(ns));
    t.typePrefix = LiteralPrefix(prefix);
  }

  void lexString() {
    bump();  // opening quote
    std::string value;
    for (;;) {
      char c = cur();
      if (i_ >= src_.size() || c == '\n' || c == '\r') {
        error(tokenSpan(), "unterminated string literal");
        break;
      }
      if (c == '\'' && peekChar(1) == '\'') {  // 'it''s': a doubled quote is one (CODESYS, TwinCAT)
        value += c;
        bump();
        bump();
        continue;
      }
      if (c == '\'') {
        bump();
        break;
      }
      if (c != '$') {
        value += c;
        bump();
        continue;
      }
      SourceSpan escSpan = here(2);
      char e = peekChar(1);
      if (i_ + 1 >= src_.size() || e == '\n' || e == '\r') {
        bump();
        continue;  // reported as unterminated
      }
      if (const char named = namedEscape(e)) {
        value += named;
      } else {
        int hi = hexValue(e), lo = hexValue(peekChar(2));
        if (hi >= 0 && lo >= 0) {
          value += static_cast<char>(hi * 16 + lo);
          bump();
          bump();
          bump();
          continue;
        }
        error(escSpan, "invalid escape '$" + shownEscape(e) + "' in string (use $$ $' $L $N $P $R $T or $hh)");
        bump();
        bump();
        continue;
      }
      bump();
      bump();
    }
    Token& t = emit(TokenKind::StringLiteral);
    t.stringValue = std::move(value);
  }

  // `"..."`: a WSTRING literal. The source is UTF-8; stringValue receives the UTF-16 code units,
  // little-endian (a character beyond U+FFFF becomes a surrogate pair). `$XXXX` is one code unit.
  void lexWString(const std::string& prefix = "WSTRING") {
    bump();  // opening quote
    std::string units;
    auto put = [&](uint32_t u) {
      units += static_cast<char>(u & 0xFF);
      units += static_cast<char>(u >> 8);
    };
    for (;;) {
      const char c = cur();
      if (i_ >= src_.size() || c == '\n' || c == '\r') {
        error(tokenSpan(), "unterminated WSTRING literal");
        break;
      }
      if (c == '"' && peekChar(1) == '"') {  // "say ""hi""": a doubled quote is one, as in a STRING
        put('"');
        bump();
        bump();
        continue;
      }
      if (c == '"') {
        bump();
        break;
      }
      if (c == '$') {
        lexWideEscape(put);
        continue;
      }
      const SourceSpan at = here();
      const std::optional<uint32_t> cp = decodeUtf8();
      if (!cp) {
        error(at, "invalid UTF-8 in a WSTRING literal");
        continue;
      }
      if (*cp >= 0x10000) {
        put(0xD800 + ((*cp - 0x10000) >> 10));
        put(0xDC00 + ((*cp - 0x10000) & 0x3FF));
      } else {
        put(*cp);
      }
    }
    Token& t = emit(TokenKind::StringLiteral);
    t.stringValue = std::move(units);
    t.typePrefix = LiteralPrefix(prefix);
  }

  template <class Put>
  void lexWideEscape(Put& put) {
    const SourceSpan escSpan = here(2);
    const char e = peekChar(1);
    if (i_ + 1 >= src_.size() || e == '\n' || e == '\r') {
      bump();
      return;  // reported as unterminated
    }
    const char named = namedEscape(e);
    if (!named) {
      int digits[4];
      bool hex = true;
      for (int k = 0; k < 4; ++k) hex = hex && (digits[k] = hexValue(peekChar(1 + k))) >= 0;
      if (hex) {
        put(static_cast<uint32_t>(((digits[0] * 16 + digits[1]) * 16 + digits[2]) * 16 + digits[3]));
        for (int k = 0; k < 5; ++k) bump();
        return;
      }
      error(escSpan, "invalid escape '$" + shownEscape(e) + "' in WSTRING (use $$ $\" $L $N $P $R $T or $hhhh)");
      bump();
      bump();
      return;
    }
    put(static_cast<uint32_t>(named));
    bump();
    bump();
  }

  // One UTF-8 encoded code point at the cursor, consumed; nullopt (one byte consumed) when malformed.
  std::optional<uint32_t> decodeUtf8() {
    const auto lead = static_cast<unsigned char>(cur());
    bump();
    if (lead < 0x80) return lead;
    int more = lead >= 0xF0 && lead < 0xF5 ? 3 : lead >= 0xE0 ? 2 : lead >= 0xC2 && lead < 0xE0 ? 1 : -1;
    if (more < 0) return std::nullopt;
    uint32_t cp = lead & (0x3F >> more);
    for (int k = 0; k < more; ++k) {
      const auto next = static_cast<unsigned char>(cur());
      if ((next & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (next & 0x3F);
      bump();
    }
    const uint32_t smallest[] = {0, 0x80, 0x800, 0x10000};
    if (cp < smallest[more] || cp > 0x10FFFF || (cp >= 0xD800 && cp < 0xE000)) return std::nullopt;
    return cp;
  }

  void lexDirectAddress() {
    bump();  // '%'
    size_t bodyStart = i_;
    while (isIdentChar(cur()) || cur() == '*' || (cur() == '.' && isDigit(peekChar(1)))) bump();
    std::string body = upperCase(src_.substr(bodyStart, i_ - bodyStart));
    Token t;
    std::string why;
    size_t k = 0;
    if (body.empty() || (body[0] != 'I' && body[0] != 'Q' && body[0] != 'M')) {
      why = "expected area I, Q or M after '%'";
    } else {
      t.area = body[k++];
      if (k < body.size() && std::string_view("XBWDL").find(body[k]) != std::string_view::npos) {
        t.size = body[k++];
      } else {
        t.size = 'X';
      }
      if (k < body.size() && body[k] == '*') {
        t.size = '*';
        if (++k != body.size()) why = "unexpected text after '*'";
      } else {
        // numbers separated by '.'
        while (why.empty()) {
          size_t start = k;
          uint64_t v = 0;
          while (k < body.size() && isDigit(body[k])) {
            v = v * 10 + static_cast<unsigned>(body[k] - '0');
            if (v > 0xFFFFFFFFULL) {
              why = "address out of range";
              break;
            }
            ++k;
          }
          if (!why.empty()) break;
          if (k == start) {
            why = "expected a number";
            break;
          }
          t.parts.push_back(static_cast<uint32_t>(v));
          if (k < body.size() && body[k] == '.') {
            ++k;
            continue;
          }
          if (k != body.size()) why = "unexpected character in address";
          break;
        }
        if (why.empty()) {
          if (t.size == 'X' && (t.parts.size() != 2 || t.parts[1] > 7))
            why = "a bit address is byte.bit with bit 0..7 (e.g. %IX0.3)";
          else if (t.size != 'X' && t.parts.size() != 1)
            why = "a byte/word/double/long address is a single number (e.g. %IW2)";
        }
      }
    }
    if (!why.empty()) {
      error(tokenSpan(), "invalid direct address '" + std::string(src_.substr(startI_, i_ - startI_)) + "': " + why);
      t.parts.clear();
      if (t.area == 0) t.area = 'I';
      if (t.size == 0) t.size = 'X';
    }
    Token& out = emit(TokenKind::DirectAddress);
    out.area = t.area;
    out.size = t.size;
    out.parts = std::move(t.parts);
  }
};

std::string_view tokenKindName(TokenKind kind) {
  switch (kind) {
    case TokenKind::EndOfFile: return "end of file";
    case TokenKind::Identifier: return "identifier";
    case TokenKind::IntLiteral: return "integer literal";
    case TokenKind::RealLiteral: return "real literal";
    case TokenKind::BoolLiteral: return "BOOL literal";
    case TokenKind::StringLiteral: return "string literal";
    case TokenKind::TimeLiteral: return "TIME literal";
    case TokenKind::DateLiteral: return "DATE literal";
    case TokenKind::TodLiteral: return "TIME_OF_DAY literal";
    case TokenKind::DtLiteral: return "DATE_AND_TIME literal";
    case TokenKind::DirectAddress: return "direct address";
    case TokenKind::Assign: return ":=";
    case TokenKind::Arrow: return "=>";
    case TokenKind::DotDot: return "..";
    case TokenKind::Dot: return ".";
    case TokenKind::Comma: return ",";
    case TokenKind::Semicolon: return ";";
    case TokenKind::Colon: return ":";
    case TokenKind::LParen: return "(";
    case TokenKind::RParen: return ")";
    case TokenKind::LBracket: return "[";
    case TokenKind::RBracket: return "]";
    case TokenKind::Caret: return "^";
    case TokenKind::Power: return "**";
    case TokenKind::Star: return "*";
    case TokenKind::Slash: return "/";
    case TokenKind::Plus: return "+";
    case TokenKind::Minus: return "-";
    case TokenKind::Lt: return "<";
    case TokenKind::Gt: return ">";
    case TokenKind::Le: return "<=";
    case TokenKind::Ge: return ">=";
    case TokenKind::Eq: return "=";
    case TokenKind::Ne: return "<>";
    case TokenKind::Ampersand: return "&";
    case TokenKind::Hash: return "#";
#define SCANBACK_KW_NAME(name, spelling) \
  case TokenKind::Kw##name: return spelling;
      SCANBACK_ST_KEYWORDS(SCANBACK_KW_NAME)
#undef SCANBACK_KW_NAME
    case TokenKind::Count_: break;
  }
  return "?";
}

bool isKeyword(TokenKind kind) { return kind >= TokenKind::KwProgram && kind < TokenKind::Count_; }

TokenStream::TokenStream(std::string_view text, FileId file, Diagnostics& diagnostics)
    : lexer_(std::make_unique<Lexer>(text, file, diagnostics)) {}
TokenStream::~TokenStream() = default;
void TokenStream::next(Token& out) { lexer_->next(out); }
const std::vector<ast::Attribute>& TokenStream::attributes() const { return lexer_->attributes_; }

std::vector<Token> lex(std::string_view text, FileId file, Diagnostics& diagnostics) {
  Lexer lexer(text, file, diagnostics);
  std::vector<Token> tokens;
  do lexer.next(tokens.emplace_back());
  while (tokens.back().kind != TokenKind::EndOfFile);
  return tokens;
}

std::vector<Token> lex(const SourceSet& sources, FileId file, Diagnostics& diagnostics) {
  return lex(sources.file(file).text, file, diagnostics);
}

}  // namespace scanback
