#include "vm/syntax/lexer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace scanback {
namespace {

struct Lexed {
  SourceSet sources;
  Diagnostics diag;
  std::vector<Token> tokens;
  std::string errors() const { return diag.format(sources); }
};

Lexed lexText(const std::string& text) {
  // A token's text is a view of the source: the texts lexed here live as long as the tests, so
  // that a token copied out of a Lexed (single()) still reads its text.
  static std::deque<std::string> texts;
  const std::string& kept = texts.emplace_back(text);
  Lexed l;
  l.sources.add("t.st", text);
  l.tokens = lex(kept, 0, l.diag);
  return l;
}

// Lexes text that must produce exactly one token (plus EOF) and no errors.
Token single(const std::string& text) {
  Lexed l = lexText(text);
  EXPECT_FALSE(l.diag.hasErrors()) << text << "\n" << l.errors();
  EXPECT_EQ(l.tokens.size(), 2u) << text;
  return l.tokens.empty() ? Token{} : l.tokens[0];
}

std::vector<TokenKind> kinds(const std::string& text) {
  Lexed l = lexText(text);
  EXPECT_FALSE(l.diag.hasErrors()) << l.errors();
  std::vector<TokenKind> out;
  for (const Token& t : l.tokens) out.push_back(t.kind);
  return out;
}

int64_t ns(const Token& t) { return static_cast<int64_t>(t.intValue); }

constexpr int64_t kS = 1'000'000'000;

TEST(Lexer, EmptyInputGivesEof) {
  Lexed l = lexText("");
  ASSERT_EQ(l.tokens.size(), 1u);
  EXPECT_EQ(l.tokens[0].kind, TokenKind::EndOfFile);
  EXPECT_EQ(l.tokens[0].span.line, 1u);
  EXPECT_EQ(l.tokens[0].span.column, 1u);
}

TEST(Lexer, KeywordsAreCaseInsensitive) {
  using K = TokenKind;
  EXPECT_EQ(kinds("if If IF iF end_if Function_Block"),
            (std::vector<K>{K::KwIf, K::KwIf, K::KwIf, K::KwIf, K::KwEndIf, K::KwFunctionBlock, K::EndOfFile}));
  EXPECT_EQ(
      kinds("ref_to var_in_out non_retain persistent mod xor"),
      (std::vector<K>{K::KwRefTo, K::KwVarInOut, K::KwNonRetain, K::KwPersistent, K::KwMod, K::KwXor, K::EndOfFile}));
}

TEST(Lexer, Identifiers) {
  Lexed l = lexText("myVar _x a_b_c x1 THIS Task On");
  ASSERT_FALSE(l.diag.hasErrors()) << l.errors();
  ASSERT_EQ(l.tokens.size(), 8u);
  for (int i = 0; i < 7; ++i) EXPECT_EQ(l.tokens[i].kind, TokenKind::Identifier) << i;
  EXPECT_EQ(l.tokens[0].text, "myVar");  // spelling kept
  EXPECT_EQ(l.tokens[2].text, "a_b_c");
}

TEST(Lexer, DoubleOrTrailingUnderscoreIsAnError) {
  Lexed l = lexText("a__b c_");
  EXPECT_EQ(l.diag.errorCount(), 2u) << l.errors();
  EXPECT_EQ(l.tokens[0].kind, TokenKind::Identifier);
}

TEST(Lexer, CommentsAndPragmas) {
  using K = TokenKind;
  EXPECT_EQ(kinds("a (* comment\n over lines *) b // line comment\n c /* block */ d {pragma} e (**) f"),
            (std::vector<K>{K::Identifier, K::Identifier, K::Identifier, K::Identifier, K::Identifier, K::Identifier,
                            K::EndOfFile}));
  Lexed l = lexText("a (* never closed");
  EXPECT_EQ(l.diag.errorCount(), 1u);
  EXPECT_NE(l.errors().find("t.st:1:3: error: unterminated comment"), std::string::npos) << l.errors();
  Lexed p = lexText("{ attribute");
  EXPECT_EQ(p.diag.errorCount(), 1u);
}

TEST(Lexer, Operators) {
  using K = TokenKind;
  EXPECT_EQ(kinds(":= => .. . , ; : ( ) [ ] ^ ** * / + - < > <= >= = <> & #"),
            (std::vector<K>{K::Assign, K::Arrow,  K::DotDot,    K::Dot,      K::Comma,    K::Semicolon, K::Colon,
                            K::LParen, K::RParen, K::LBracket,  K::RBracket, K::Caret,    K::Power,     K::Star,
                            K::Slash,  K::Plus,   K::Minus,     K::Lt,       K::Gt,       K::Le,        K::Ge,
                            K::Eq,     K::Ne,     K::Ampersand, K::Hash,     K::EndOfFile}));
  // no spaces
  EXPECT_EQ(kinds("a:=b**2<=c"), (std::vector<K>{K::Identifier, K::Assign, K::Identifier, K::Power, K::IntLiteral,
                                                 K::Le, K::Identifier, K::EndOfFile}));
}

TEST(Lexer, IntegerLiterals) {
  Token t = single("123");
  EXPECT_EQ(t.kind, TokenKind::IntLiteral);
  EXPECT_EQ(t.intValue, 123u);
  EXPECT_FALSE(t.negative);
  EXPECT_TRUE(t.typePrefix.empty());
  EXPECT_EQ(single("1_000_000").intValue, 1000000u);
  EXPECT_EQ(single("16#FF").intValue, 255u);
  EXPECT_EQ(single("16#ff").intValue, 255u);
  EXPECT_EQ(single("16#DEAD_BEEF").intValue, 0xDEADBEEFu);
  EXPECT_EQ(single("2#1010").intValue, 10u);
  EXPECT_EQ(single("2#1010_1010").intValue, 0xAAu);
  EXPECT_EQ(single("8#17").intValue, 15u);
  EXPECT_EQ(single("18446744073709551615").intValue, 18446744073709551615ull);
  EXPECT_EQ(single("16#FFFFFFFFFFFFFFFF").intValue, 18446744073709551615ull);
}

TEST(Lexer, IntegerLiteralErrors) {
  EXPECT_EQ(lexText("18446744073709551616").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("16#1FFFFFFFFFFFFFFFF").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("2#102").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("8#9").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("10#5").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("16#").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("1__0").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("12abc").diag.errorCount(), 1u);
  Lexed l = lexText("x := 16#FG;");
  EXPECT_NE(l.errors().find("t.st:1:6: error: invalid digit 'G'"), std::string::npos) << l.errors();
  EXPECT_EQ(l.tokens[2].kind, TokenKind::IntLiteral);  // still a token, so parsing continues
  EXPECT_EQ(l.tokens[3].kind, TokenKind::Semicolon);
}

TEST(Lexer, RealLiterals) {
  Token t = single("1.5");
  EXPECT_EQ(t.kind, TokenKind::RealLiteral);
  EXPECT_DOUBLE_EQ(t.realValue, 1.5);
  EXPECT_DOUBLE_EQ(single("1.5E3").realValue, 1500.0);
  EXPECT_DOUBLE_EQ(single("1e-3").realValue, 0.001);
  EXPECT_DOUBLE_EQ(single("2.0e-3").realValue, 0.002);
  EXPECT_DOUBLE_EQ(single("1E+2").realValue, 100.0);
  EXPECT_DOUBLE_EQ(single("1_000.25").realValue, 1000.25);
  EXPECT_EQ(single("1e3").kind, TokenKind::RealLiteral);
  EXPECT_EQ(lexText("1e999").diag.errorCount(), 1u);
}

TEST(Lexer, RangeIsNotAReal) {
  using K = TokenKind;
  EXPECT_EQ(kinds("1..5"), (std::vector<K>{K::IntLiteral, K::DotDot, K::IntLiteral, K::EndOfFile}));
  EXPECT_EQ(kinds("[-2..2]"), (std::vector<K>{K::LBracket, K::Minus, K::IntLiteral, K::DotDot, K::IntLiteral,
                                              K::RBracket, K::EndOfFile}));
}

TEST(Lexer, NumbersAfterDotAreBitIndices) {
  using K = TokenKind;
  // w.1.2 is bit access, never the real 1.2
  EXPECT_EQ(kinds("w.1.2"),
            (std::vector<K>{K::Identifier, K::Dot, K::IntLiteral, K::Dot, K::IntLiteral, K::EndOfFile}));
  EXPECT_EQ(kinds("x := 1.2"), (std::vector<K>{K::Identifier, K::Assign, K::RealLiteral, K::EndOfFile}));
}

TEST(Lexer, TypedIntegerLiterals) {
  Token t = single("INT#5");
  EXPECT_EQ(t.kind, TokenKind::IntLiteral);
  EXPECT_EQ(t.intValue, 5u);
  EXPECT_FALSE(t.negative);
  EXPECT_EQ(t.typePrefix, "INT");
  EXPECT_EQ(t.text, "INT#5");

  t = single("INT#-5");
  EXPECT_EQ(t.intValue, 5u);
  EXPECT_TRUE(t.negative);
  EXPECT_EQ(t.typePrefix, "INT");

  t = single("dint#-7");
  EXPECT_EQ(t.typePrefix, "DINT");
  EXPECT_TRUE(t.negative);
  EXPECT_EQ(t.intValue, 7u);

  t = single("BYTE#16#FF");
  EXPECT_EQ(t.kind, TokenKind::IntLiteral);
  EXPECT_EQ(t.typePrefix, "BYTE");
  EXPECT_EQ(t.intValue, 255u);

  t = single("LWORD#2#1010");
  EXPECT_EQ(t.intValue, 10u);
  EXPECT_EQ(single("UDINT#1_000").intValue, 1000u);
  EXPECT_EQ(lexText("INT#1.5").diag.errorCount(), 1u);
}

TEST(Lexer, TypedRealAndBoolLiterals) {
  Token t = single("REAL#1.5");
  EXPECT_EQ(t.kind, TokenKind::RealLiteral);
  EXPECT_DOUBLE_EQ(t.realValue, 1.5);
  EXPECT_EQ(t.typePrefix, "REAL");
  t = single("LREAL#-2.5e2");
  EXPECT_DOUBLE_EQ(t.realValue, -250.0);
  EXPECT_EQ(t.typePrefix, "LREAL");
  t = single("REAL#3");
  EXPECT_EQ(t.kind, TokenKind::RealLiteral);
  EXPECT_DOUBLE_EQ(t.realValue, 3.0);

  t = single("BOOL#1");
  EXPECT_EQ(t.kind, TokenKind::BoolLiteral);
  EXPECT_TRUE(t.boolValue);
  EXPECT_EQ(t.typePrefix, "BOOL");
  EXPECT_FALSE(single("BOOL#0").boolValue);
  EXPECT_TRUE(single("BOOL#TRUE").boolValue);
  EXPECT_FALSE(single("bool#false").boolValue);
  t = single("TRUE");
  EXPECT_EQ(t.kind, TokenKind::BoolLiteral);
  EXPECT_TRUE(t.boolValue);
  EXPECT_TRUE(t.typePrefix.empty());
  EXPECT_FALSE(single("False").boolValue);
  EXPECT_EQ(lexText("BOOL#2").diag.errorCount(), 1u);
}

TEST(Lexer, QualifiedEnumValueIsThreeTokens) {
  using K = TokenKind;
  EXPECT_EQ(kinds("State#Idle"), (std::vector<K>{K::Identifier, K::Hash, K::Identifier, K::EndOfFile}));
  EXPECT_EQ(kinds("E#A"), (std::vector<K>{K::Identifier, K::Hash, K::Identifier, K::EndOfFile}));
}

TEST(Lexer, Durations) {
  Token t = single("T#1s500ms");
  EXPECT_EQ(t.kind, TokenKind::TimeLiteral);
  EXPECT_EQ(t.typePrefix, "TIME");
  EXPECT_EQ(ns(t), 1'500'000'000);
  EXPECT_EQ(ns(single("T#1.5s")), 1'500'000'000);
  EXPECT_EQ(ns(single("T#-2m")), -120 * kS);
  EXPECT_EQ(ns(single("TIME#-2m")), -120 * kS);
  EXPECT_EQ(ns(single("T#1h_30m")), 5400 * kS);
  EXPECT_EQ(ns(single("t#1H30M")), 5400 * kS);
  EXPECT_EQ(ns(single("T#0s")), 0);
  EXPECT_EQ(ns(single("T#10ms")), 10'000'000);
  EXPECT_EQ(ns(single("T#1_000ms")), kS);
  EXPECT_EQ(ns(single("T#0.5ms")), 500'000);
  EXPECT_EQ(ns(single("T#1d2h3m4s5ms6us7ns")), ((26 * 60 + 3) * 60 + 4) * kS + 5'000'000 + 6'000 + 7);
  EXPECT_EQ(ns(single("T#1.25d")), 30 * 3600 * kS);

  t = single("LT#3us");
  EXPECT_EQ(t.typePrefix, "LTIME");
  EXPECT_EQ(ns(t), 3000);
  t = single("LTIME#1d2h");
  EXPECT_EQ(t.typePrefix, "LTIME");
  EXPECT_EQ(ns(t), 26 * 3600 * kS);
  EXPECT_EQ(ns(single("T#+5s")), 5 * kS);
}

TEST(Lexer, DurationErrors) {
  EXPECT_EQ(lexText("T#1s1m").diag.errorCount(), 1u);     // units out of order
  EXPECT_EQ(lexText("T#1s1s").diag.errorCount(), 1u);     // repeated unit
  EXPECT_EQ(lexText("T#1.5s3ms").diag.errorCount(), 1u);  // fraction not on the last unit
  EXPECT_EQ(lexText("T#5").diag.errorCount(), 1u);        // missing unit
  EXPECT_EQ(lexText("T#5x").diag.errorCount(), 1u);       // unknown unit
  EXPECT_EQ(lexText("T#200000d").diag.errorCount(), 1u);  // overflows int64 ns
  Lexed l = lexText("a := T#5q;");
  EXPECT_NE(l.errors().find("t.st:1:6: error: invalid TIME literal 'T#5q'"), std::string::npos) << l.errors();
  EXPECT_EQ(l.tokens[2].kind, TokenKind::TimeLiteral);
  EXPECT_EQ(l.tokens[3].kind, TokenKind::Semicolon);
}

TEST(Lexer, Dates) {
  Token t = single("D#2024-01-15");
  EXPECT_EQ(t.kind, TokenKind::DateLiteral);
  EXPECT_EQ(t.typePrefix, "DATE");
  EXPECT_EQ(ns(t), 1'705'276'800LL * kS);  // 2024-01-15T00:00:00Z
  EXPECT_EQ(ns(single("DATE#2024-01-15")), 1'705'276'800LL * kS);
  EXPECT_EQ(ns(single("D#1970-01-01")), 0);
  EXPECT_EQ(ns(single("D#1969-12-31")), -86'400 * kS);
  EXPECT_EQ(ns(single("D#2000-03-01")), 951'868'800LL * kS);
  EXPECT_EQ(ns(single("D#2000-02-29")), 951'782'400LL * kS);  // leap year (divisible by 400)
  EXPECT_EQ(lexText("D#2023-02-29").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("D#1900-02-29").diag.errorCount(), 1u);  // not a leap year
  EXPECT_EQ(lexText("D#2024-13-01").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("D#2024-1").diag.errorCount(), 1u);
}

TEST(Lexer, TimesOfDay) {
  Token t = single("TOD#08:30:15.25");
  EXPECT_EQ(t.kind, TokenKind::TodLiteral);
  EXPECT_EQ(t.typePrefix, "TOD");
  EXPECT_EQ(ns(t), (8 * 3600 + 30 * 60 + 15) * kS + 250'000'000);
  EXPECT_EQ(ns(single("TIME_OF_DAY#23:59:59")), 86'399 * kS);
  EXPECT_EQ(ns(single("TOD#00:00:00")), 0);
  EXPECT_EQ(ns(single("TOD#12:00:00.123456789")), 12 * 3600 * kS + 123'456'789);
  EXPECT_EQ(lexText("TOD#24:00:00").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("TOD#12:60:00").diag.errorCount(), 1u);
  // CODESYS's TOD#HH:MM: the seconds are 0.
  EXPECT_EQ(ns(single("TOD#12:00")), 12 * 3600 * kS);
  EXPECT_EQ(ns(single("TOD#7:05")), (7 * 3600 + 5 * 60) * kS);
  EXPECT_EQ(ns(single("DT#2024-01-15-08:30")), (1'705'276'800LL + 8 * 3600 + 30 * 60) * kS);
  EXPECT_EQ(lexText("TOD#12").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("TOD#12:00.5").diag.errorCount(), 1u);  // a fraction of a minute
  EXPECT_EQ(lexText("TOD#12:61").diag.errorCount(), 1u);
}

TEST(Lexer, DatesAndTimes) {
  Token t = single("DT#2024-01-15-08:30:00.5");
  EXPECT_EQ(t.kind, TokenKind::DtLiteral);
  EXPECT_EQ(t.typePrefix, "DT");
  EXPECT_EQ(ns(t), (1'705'276'800LL + 8 * 3600 + 30 * 60) * kS + 500'000'000);
  EXPECT_EQ(ns(single("DATE_AND_TIME#1970-01-01-00:00:01")), kS);
  EXPECT_EQ(lexText("DT#2024-01-15").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("DT#2024-01-15-25:00:00").diag.errorCount(), 1u);
}

TEST(Lexer, DateFollowedByOperator) {
  using K = TokenKind;
  EXPECT_EQ(kinds("DT#2024-01-15-08:30:00 - T#1s"),
            (std::vector<K>{K::DtLiteral, K::Minus, K::TimeLiteral, K::EndOfFile}));
  EXPECT_EQ(kinds("D#2024-01-15-D#2024-01-14"),
            (std::vector<K>{K::DateLiteral, K::Minus, K::DateLiteral, K::EndOfFile}));
}

TEST(Lexer, Strings) {
  Token t = single("'hello'");
  EXPECT_EQ(t.kind, TokenKind::StringLiteral);
  EXPECT_EQ(t.stringValue, "hello");
  EXPECT_EQ(t.text, "'hello'");
  EXPECT_EQ(single("''").stringValue, "");
  EXPECT_EQ(single("'a$$b'").stringValue, "a$b");
  EXPECT_EQ(single("'it$'s'").stringValue, "it's");
  EXPECT_EQ(single("'$L$N$P$R$T'").stringValue, "\n\n\f\r\t");
  EXPECT_EQ(single("'$l$n$p$r$t'").stringValue, "\n\n\f\r\t");
  EXPECT_EQ(single("'$0A$41$7e'").stringValue, "\nA~");
  EXPECT_EQ(single("'say \"hi\"'").stringValue, "say \"hi\"");
  EXPECT_EQ(single("'caf\xC3\xA9'").stringValue, "caf\xC3\xA9");  // UTF-8 bytes pass through
}

TEST(Lexer, StringErrorsAreLocatedAndLexingContinues) {
  Lexed l = lexText("a := 'bad $q escape'; b := 1;");
  EXPECT_EQ(l.diag.errorCount(), 1u);
  EXPECT_NE(l.errors().find("t.st:1:11: error: invalid escape '$q'"), std::string::npos) << l.errors();
  ASSERT_GE(l.tokens.size(), 8u);
  EXPECT_EQ(l.tokens[2].stringValue, "bad  escape");
  EXPECT_EQ(l.tokens[4].text, "b");

  Lexed u = lexText("s := 'never closed\nx := 2;");
  EXPECT_EQ(u.diag.errorCount(), 1u);
  EXPECT_NE(u.errors().find("t.st:1:6: error: unterminated string literal"), std::string::npos) << u.errors();
  EXPECT_EQ(u.tokens[3].text, "x");
  EXPECT_EQ(u.tokens[3].span.line, 2u);
}

// The UTF-16 units of a WSTRING literal token, little-endian as stringValue holds them.
std::u16string unitsOf(const Token& t) {
  std::u16string u(t.stringValue.size() / 2, u'\0');
  std::memcpy(u.data(), t.stringValue.data(), u.size() * 2);
  return u;
}

TEST(Lexer, WStringLiteralsAreUtf16Units) {
  Lexed l = lexText("s := \"wide\" \"$\"$$$N$L$R$T$P'$'\" \"$00e9$D83D$de00\" \"é€😀\";");
  EXPECT_EQ(l.diag.errorCount(), 0u) << l.errors();
  ASSERT_EQ(l.tokens[2].kind, TokenKind::StringLiteral);
  EXPECT_EQ(l.tokens[2].typePrefix, "WSTRING");
  EXPECT_EQ(unitsOf(l.tokens[2]), u"wide");
  EXPECT_EQ(unitsOf(l.tokens[3]), u"\"$\n\n\r\t\f''");
  EXPECT_EQ(unitsOf(l.tokens[4]), u"\u00e9\U0001F600");        // $XXXX is one unit: a surrogate pair by hand
  EXPECT_EQ(unitsOf(l.tokens[5]), u"\u00e9\u20ac\U0001F600");  // UTF-8 source to UTF-16
  EXPECT_EQ(l.tokens[6].kind, TokenKind::Semicolon);
}

TEST(Lexer, TypedStringLiterals) {
  Lexed l = lexText("WSTRING#\"a\" WCHAR#\"b\" STRING#'c' wstring#\"d\"");
  EXPECT_EQ(l.diag.errorCount(), 0u) << l.errors();
  EXPECT_EQ(l.tokens[0].typePrefix, "WSTRING");
  EXPECT_EQ(unitsOf(l.tokens[0]), u"a");
  EXPECT_EQ(l.tokens[1].typePrefix, "WCHAR");
  EXPECT_EQ(unitsOf(l.tokens[1]), u"b");
  EXPECT_EQ(l.tokens[2].typePrefix, "STRING");
  EXPECT_EQ(l.tokens[2].stringValue, "c");
  EXPECT_EQ(l.tokens[3].typePrefix, "WSTRING");
}

TEST(Lexer, WStringLiteralErrors) {
  Lexed bad = lexText("s := \"a$Qb\";");
  EXPECT_NE(bad.errors().find("t.st:1:8: error: invalid escape '$Q' in WSTRING"), std::string::npos) << bad.errors();
  EXPECT_EQ(bad.tokens[3].kind, TokenKind::Semicolon);
  Lexed open = lexText("s := \"abc\nx");
  EXPECT_NE(open.errors().find("t.st:1:6: error: unterminated WSTRING literal"), std::string::npos) << open.errors();
  Lexed quotes = lexText("WSTRING#'a' STRING#\"b\"");
  EXPECT_NE(quotes.errors().find("WSTRING# takes a \"...\" literal"), std::string::npos) << quotes.errors();
  EXPECT_NE(quotes.errors().find("STRING# takes a '...' literal"), std::string::npos) << quotes.errors();
  Lexed utf8 = lexText("s := \"a\xff\";");
  EXPECT_NE(utf8.errors().find("invalid UTF-8 in a WSTRING literal"), std::string::npos) << utf8.errors();
}

TEST(Lexer, DirectAddresses) {
  Token t = single("%IX0.3");
  EXPECT_EQ(t.kind, TokenKind::DirectAddress);
  EXPECT_EQ(t.area, 'I');
  EXPECT_EQ(t.size, 'X');
  EXPECT_EQ(t.parts, (std::vector<uint32_t>{0, 3}));
  t = single("%QW2");
  EXPECT_EQ(t.area, 'Q');
  EXPECT_EQ(t.size, 'W');
  EXPECT_EQ(t.parts, (std::vector<uint32_t>{2}));
  t = single("%MD1");
  EXPECT_EQ(t.area, 'M');
  EXPECT_EQ(t.size, 'D');
  t = single("%IB0");
  EXPECT_EQ(t.size, 'B');
  EXPECT_EQ(t.parts, (std::vector<uint32_t>{0}));
  t = single("%IL3");
  EXPECT_EQ(t.size, 'L');
  EXPECT_EQ(t.parts, (std::vector<uint32_t>{3}));
  t = single("%I0.3");  // no size: bit
  EXPECT_EQ(t.size, 'X');
  EXPECT_EQ(t.parts, (std::vector<uint32_t>{0, 3}));
  for (const char* s : {"%I*", "%Q*", "%M*"}) {
    t = single(s);
    EXPECT_EQ(t.size, '*') << s;
    EXPECT_TRUE(t.parts.empty());
  }
  EXPECT_EQ(single("%Q*").area, 'Q');
  EXPECT_EQ(single("%qx1.7").area, 'Q');

  EXPECT_EQ(lexText("%IX0.8").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("%IX3").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("%IW2.1").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("%Z1").diag.errorCount(), 1u);
  EXPECT_EQ(lexText("%").diag.errorCount(), 1u);
}

TEST(Lexer, DirectAddressFollowedByColon) {
  using K = TokenKind;
  EXPECT_EQ(kinds("x AT %IX0.0 : BOOL;"), (std::vector<K>{K::Identifier, K::KwAt, K::DirectAddress, K::Colon,
                                                          K::Identifier, K::Semicolon, K::EndOfFile}));
}

TEST(Lexer, UnknownCharacterIsLocatedAndLexingContinues) {
  Lexed l = lexText("a := 1;\n  b @ c;\n  d ? e;");
  EXPECT_EQ(l.diag.errorCount(), 2u);
  EXPECT_NE(l.errors().find("t.st:2:5: error: unexpected character '@'"), std::string::npos) << l.errors();
  EXPECT_NE(l.errors().find("t.st:3:5: error: unexpected character '?'"), std::string::npos) << l.errors();
  // a := 1 ; b c ; d e ; EOF
  EXPECT_EQ(l.tokens.size(), 11u);
}

TEST(Lexer, Spans) {
  Lexed l = lexText("IF x THEN\n\tcount := count + 16#10;\nEND_IF");
  ASSERT_FALSE(l.diag.hasErrors());
  const Token& count = l.tokens[3];
  EXPECT_EQ(count.text, "count");
  EXPECT_EQ(count.span.line, 2u);
  EXPECT_EQ(count.span.column, 2u);
  EXPECT_EQ(count.span.endLine, 2u);
  EXPECT_EQ(count.span.endColumn, 7u);
  const Token& hex = l.tokens[7];
  EXPECT_EQ(hex.text, "16#10");
  EXPECT_EQ(hex.span.column, 19u);
  EXPECT_EQ(hex.span.endColumn, 24u);
  const Token& end = l.tokens[9];
  EXPECT_EQ(end.kind, TokenKind::KwEndIf);
  EXPECT_EQ(end.span.line, 3u);
  EXPECT_EQ(end.span.column, 1u);
  EXPECT_EQ(l.tokens.back().span.line, 3u);
  EXPECT_EQ(l.tokens.back().span.column, 7u);
}

TEST(Lexer, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    std::string text;
    size_t n = rng() % 400;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>(rng() & 0xFF);
    Lexed l = lexText(text);
    ASSERT_FALSE(l.tokens.empty());
    EXPECT_EQ(l.tokens.back().kind, TokenKind::EndOfFile);
  }
  // Printable noise made of ST characters.
  const std::string alphabet = "abT#D%IXQ*0123456789.:=;()[]'\"$-+_ \n{}/eE";
  for (int round = 0; round < 500; ++round) {
    std::string text;
    size_t n = rng() % 80;
    for (size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    Lexed l = lexText(text);
    EXPECT_EQ(l.tokens.back().kind, TokenKind::EndOfFile);
  }
}

TEST(Lexer, ErrorFloodIsCapped) {
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "@ a ";
  Lexed l = lexText(text);
  EXPECT_LE(l.diag.errorCount(), 100u);
  EXPECT_GE(l.diag.errorCount(), 50u);
}

TEST(Lexer, TokenKindNames) {
  EXPECT_EQ(tokenKindName(TokenKind::KwEndIf), "END_IF");
  EXPECT_EQ(tokenKindName(TokenKind::Assign), ":=");
  EXPECT_EQ(tokenKindName(TokenKind::EndOfFile), "end of file");
  EXPECT_TRUE(isKeyword(TokenKind::KwProgram));
  EXPECT_TRUE(isKeyword(TokenKind::KwEndResource));
  EXPECT_FALSE(isKeyword(TokenKind::Identifier));
}

}  // namespace
}  // namespace scanback
