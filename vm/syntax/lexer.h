// The Structured Text lexer: source text -> tokens. See docs/language.md ("Lexical").
//
// - Keywords are case-insensitive and get their own TokenKind (Kw...). Words that are keywords only
//   in some places (TASK, WITH, ON, INTERVAL, PRIORITY, SINGLE, PUBLIC, PRIVATE, PROTECTED,
//   INTERNAL, ABSTRACT, FINAL, OVERRIDE, GET, SET, THIS, SUPER, STRING, the elementary type names) stay Identifiers;
//   the parser checks them.
// - Comments `(* *)`, `/* */`, `//` and pragmas `{ }` are skipped.
// - Literals are decoded into the token's payload fields (see Token).
// - Typed literals (`INT#5`, `T#1s`, `BOOL#TRUE`, ...) are single tokens. An identifier followed
//   by `#` that is not a literal prefix (`State#Idle`) gives Identifier, Hash, Identifier; the
//   parser joins them into one name.
// - Errors (unknown character, bad escape, unterminated string/comment, malformed literal)
//   are reported to Diagnostics with their location and lexing continues. A malformed literal
//   still produces a token of its kind (value 0) so the parser does not report it again.
// - Columns count bytes (a tab is one column). A UTF-8 byte order mark at the start of a file is
//   skipped and not counted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "vm/source/source.h"
#include "vm/syntax/ast.h"
#include "vm/syntax/literal_prefix.h"

namespace scanback {

// X(enumerator suffix, spelling)
#define SCANBACK_ST_KEYWORDS(X)                      \
  X(Program, "PROGRAM")                              \
  X(EndProgram, "END_PROGRAM")                       \
  X(Function, "FUNCTION")                            \
  X(EndFunction, "END_FUNCTION")                     \
  X(FunctionBlock, "FUNCTION_BLOCK")                 \
  X(EndFunctionBlock, "END_FUNCTION_BLOCK")          \
  X(Method, "METHOD")                                \
  X(EndMethod, "END_METHOD")                         \
  X(Var, "VAR")                                      \
  X(VarInput, "VAR_INPUT")                           \
  X(VarOutput, "VAR_OUTPUT")                         \
  X(VarInOut, "VAR_IN_OUT")                          \
  X(VarTemp, "VAR_TEMP")                             \
  X(VarGlobal, "VAR_GLOBAL")                         \
  X(VarExternal, "VAR_EXTERNAL")                     \
  X(VarConfig, "VAR_CONFIG")                         \
  X(VarInst, "VAR_INST")                             \
  X(VarStat, "VAR_STAT")                             \
  X(EndVar, "END_VAR")                               \
  X(Constant, "CONSTANT")                            \
  X(Retain, "RETAIN")                                \
  X(NonRetain, "NON_RETAIN")                         \
  X(Persistent, "PERSISTENT")                        \
  X(At, "AT")                                        \
  X(Type, "TYPE")                                    \
  X(EndType, "END_TYPE")                             \
  X(Struct, "STRUCT")                                \
  X(EndStruct, "END_STRUCT")                         \
  X(Union, "UNION")                                  \
  X(EndUnion, "END_UNION")                           \
  X(Array, "ARRAY")                                  \
  X(Of, "OF")                                        \
  X(RefTo, "REF_TO")                                 \
  X(If, "IF")                                        \
  X(Then, "THEN")                                    \
  X(Elsif, "ELSIF")                                  \
  X(Else, "ELSE")                                    \
  X(EndIf, "END_IF")                                 \
  X(Case, "CASE")                                    \
  X(EndCase, "END_CASE")                             \
  X(For, "FOR")                                      \
  X(To, "TO")                                        \
  X(By, "BY")                                        \
  X(Do, "DO")                                        \
  X(EndFor, "END_FOR")                               \
  X(While, "WHILE")                                  \
  X(EndWhile, "END_WHILE")                           \
  X(Repeat, "REPEAT")                                \
  X(Until, "UNTIL")                                  \
  X(EndRepeat, "END_REPEAT")                         \
  X(Exit, "EXIT")                                    \
  X(Continue, "CONTINUE")                            \
  X(Return, "RETURN")                                \
  X(Not, "NOT")                                      \
  X(And, "AND")                                      \
  X(Or, "OR")                                        \
  X(Xor, "XOR")                                      \
  X(Mod, "MOD")                                      \
  X(AndThen, "AND_THEN")                             \
  X(OrElse, "OR_ELSE")                               \
  X(Configuration, "CONFIGURATION")                  \
  X(EndConfiguration, "END_CONFIGURATION")           \
  X(Resource, "RESOURCE")                            \
  X(EndResource, "END_RESOURCE")                     \
  X(TestProgram, "TEST_PROGRAM")                     \
  X(EndTestProgram, "END_TEST_PROGRAM")              \
  X(TestFunctionBlock, "TEST_FUNCTION_BLOCK")        \
  X(EndTestFunctionBlock, "END_TEST_FUNCTION_BLOCK") \
  X(Action, "ACTION")                                \
  X(EndAction, "END_ACTION")                         \
  X(Interface, "INTERFACE")                          \
  X(EndInterface, "END_INTERFACE")                   \
  X(Class, "CLASS")                                  \
  X(EndClass, "END_CLASS")                           \
  X(Property, "PROPERTY")                            \
  X(EndProperty, "END_PROPERTY")                     \
  X(EndGet, "END_GET")                               \
  X(EndSet, "END_SET")                               \
  X(Extends, "EXTENDS")                              \
  X(Implements, "IMPLEMENTS")

enum class TokenKind : uint8_t {
  EndOfFile,
  Identifier,     // text = the identifier as written
  IntLiteral,     // intValue (magnitude), negative, typePrefix ("" or "INT", "BYTE", ...)
  RealLiteral,    // realValue (signed), typePrefix ("" or "REAL"/"LREAL")
  BoolLiteral,    // boolValue; TRUE/FALSE (typePrefix "") or BOOL#... (typePrefix "BOOL")
  StringLiteral,  // stringValue = decoded bytes; typePrefix "" or "STRING", or "WSTRING"/"WCHAR" for
                  // "..." (stringValue = UTF-16 code units, little-endian)
  TimeLiteral,    // intValue = signed ns (two's complement); typePrefix "TIME" or "LTIME"
  DateLiteral,    // intValue = ns since 1970-01-01; typePrefix "DATE"
  TodLiteral,     // intValue = ns since midnight; typePrefix "TOD"
  DtLiteral,      // intValue = ns since 1970-01-01; typePrefix "DT"
  DirectAddress,  // %IX0.3: area 'I'/'Q'/'M', size 'X'/'B'/'W'/'D'/'L'/'*', parts {0, 3}
  // operators and punctuation
  Assign,     // :=
  Arrow,      // =>
  DotDot,     // ..
  Dot,        // .
  Comma,      // ,
  Semicolon,  // ;
  Colon,      // :
  LParen,     // (
  RParen,     // )
  LBracket,   // [
  RBracket,   // ]
  Caret,      // ^
  Power,      // **
  Star,       // *
  Slash,      // /
  Plus,       // +
  Minus,      // -
  Lt,         // <
  Gt,         // >
  Le,         // <=
  Ge,         // >=
  Eq,         // =
  Ne,         // <>
  Ampersand,  // &
  Hash,       // #
// keywords
#define SCANBACK_KW_ENUM(name, spelling) Kw##name,
  SCANBACK_ST_KEYWORDS(SCANBACK_KW_ENUM)
#undef SCANBACK_KW_ENUM
      Count_  // number of kinds; not a token
};

struct Token {
  SourceSpan span;
  TokenKind kind = TokenKind::EndOfFile;

  // Decoded payload (see TokenKind for which fields each kind uses).
  bool negative = false;
  bool boolValue = false;
  char area = 0;  // DirectAddress
  char size = 0;  // DirectAddress ('*' for %I*)
  // The source text exactly as written (empty for EndOfFile): a view of the text lexed, which must
  // outlive the token.
  std::string_view text;
  union {
    uint64_t intValue = 0;
    double realValue;  // RealLiteral
  };
  LiteralPrefix typePrefix;
  std::string stringValue;      // StringLiteral
  std::vector<uint32_t> parts;  // DirectAddress
};

// Spelling of a keyword or operator ("END_IF", ":="), or a description ("identifier", "end of file").
std::string_view tokenKindName(TokenKind kind);
bool isKeyword(TokenKind kind);

// Lexes one file; the result always ends with an EndOfFile token.
std::vector<Token> lex(const SourceSet& sources, FileId file, Diagnostics& diagnostics);
std::vector<Token> lex(std::string_view text, FileId file, Diagnostics& diagnostics);

class Lexer;

// Lexes one file a token at a time, as the parser asks for them: it holds the tokens it still
// needs, not the whole file's (those of a 10 MB file took 770 MB). `text` must outlive it.
class TokenStream {
 public:
  TokenStream(std::string_view text, FileId file, Diagnostics& diagnostics);
  ~TokenStream();
  TokenStream(const TokenStream&) = delete;
  TokenStream& operator=(const TokenStream&) = delete;
  // The next token into `out` (replacing what it held): EndOfFile at the end, and again at every
  // later call.
  void next(Token& out);
  // The `{attribute '...'}` pragmas lexed so far, in source order.
  const std::vector<ast::Attribute>& attributes() const;

 private:
  std::unique_ptr<Lexer> lexer_;
};

}  // namespace scanback
