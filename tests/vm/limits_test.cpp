// The image limit (vm/bytecode/limits.h, docs/language.md "Limits"): every size and offset of the
// layout is checked, and the first declaration that would pass the limit is a compile error at
// its position with the sizes, never a wrap or an attempt to allocate what cannot be run.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/support/shell.h"
#include "tests/vm/test_support.h"
#include "vm/base/out_of_memory.h"
#include "vm/bytecode/limits.h"

namespace scanback {
namespace {

using test::Compiled;

// The one error of `c` that contains `needle`, with its line, or a test failure.
void expectLimitError(const Compiled& c, uint32_t line, const std::string& needle) {
  EXPECT_FALSE(c.program);
  bool found = false;
  for (const Diagnostic& d : c.diags.items())
    if (d.severity == Severity::Error && d.message.find(needle) != std::string::npos) {
      EXPECT_EQ(d.span.line, line) << d.message;
      EXPECT_NE(d.message.find("scanback's limit is 268435456 bytes (256 MiB)"), std::string::npos) << d.message;
      found = true;
    }
  EXPECT_TRUE(found) << "expected an error containing '" << needle << "' on line " << line << ", got:\n"
                     << c.messages();
}

TEST(ImageLimit, IsWhatTheMessagesSay) {
  EXPECT_EQ(kMaxImageBytes, 268435456u);
  EXPECT_EQ(imageLimitText(), "268435456 bytes (256 MiB)");
}

TEST(ImageLimit, SaturatingArithmeticNeverWraps) {
  EXPECT_EQ(addSize(UINT64_MAX - 1, 2), UINT64_MAX);
  EXPECT_EQ(addSize(3, 4), 7u);
  EXPECT_EQ(mulSize(uint64_t{1} << 32, uint64_t{1} << 32), UINT64_MAX);
  EXPECT_EQ(mulSize(uint64_t{1} << 31, 4), uint64_t{1} << 33);
  EXPECT_EQ(alignSize(UINT64_MAX - 2, 8), UINT64_MAX);
  EXPECT_EQ(alignSize(9, 8), 16u);
  EXPECT_EQ(layoutSizeText(UINT64_MAX), "more than 18446744073709551615 bytes");
}

TEST(ImageLimit, OneHugeArrayIsAnErrorWithItsSize) {
  // 2^30 LREALs: 8 GiB, which a 32-bit size would have wrapped to 0.
  const Compiled c = test::compile("PROGRAM Main\nVAR\n  big : ARRAY[0..1073741823] OF LREAL;\nEND_VAR\nEND_PROGRAM\n");
  expectLimitError(c, 3, "ARRAY[0..1073741823] OF LREAL would need 8589934592 bytes");
}

TEST(ImageLimit, ArraysOfAFewBytesOverTheLimitAreErrorsToo) {
  // 256 MiB + 1 byte: only just too large, and not wrapping anything.
  expectLimitError(test::compile("PROGRAM Main\nVAR\n  a : ARRAY[0..268435456] OF BYTE;\nEND_VAR\nEND_PROGRAM\n"), 3,
                   "would need 268435457 bytes");
}

TEST(ImageLimit, ManyMediumArraysSummingPastTheLimitNameTheFirstThatDoesNotFit) {
  // Nine globals of 32 MiB: the image starts with its header and I/O areas, so the eighth is the
  // first that passes 256 MiB.
  std::string text = "VAR_GLOBAL\n";
  for (int i = 1; i <= 9; ++i) text += "  g" + std::to_string(i) + " : ARRAY[0..33554431] OF BYTE;\n";
  text += "END_VAR\nPROGRAM Main\nVAR x : BYTE; END_VAR\nx := g1[0];\nEND_PROGRAM\n";
  const Compiled c = test::compile(text);
  expectLimitError(c, 9, "the image would need 268435464 bytes with global 'g8'");
  EXPECT_EQ(c.errorCount(), 1u) << c.messages();  // g9 is not reported again
}

TEST(ImageLimit, ProgramInstancesCountToo) {
  // Three instances of a program of 90 MB: the third does not fit; the error is at its declaration.
  const Compiled c = test::compile(
      "PROGRAM P\nVAR x : ARRAY[0..89999999] OF BYTE; END_VAR\nEND_PROGRAM\n"
      "CONFIGURATION Plant\n  RESOURCE Cpu ON PLC\n    TASK Fast(INTERVAL := T#10ms);\n"
      "    PROGRAM First WITH Fast : P;\n    PROGRAM Second WITH Fast : P;\n    PROGRAM Third WITH Fast : P;\n"
      "  END_RESOURCE\nEND_CONFIGURATION\n");
  expectLimitError(c, 9, "the image would need 270000008 bytes with program instance 'Third'");
}

TEST(ImageLimit, HugeStringCapacities) {
  // One STRING holds at most 65535 characters; an array of them is sized like any other.
  const Compiled one = test::compile("PROGRAM Main\nVAR\n  s : STRING[1000000];\nEND_VAR\nEND_PROGRAM\n");
  EXPECT_FALSE(one.program);
  EXPECT_NE(one.messages().find("main.st:3:14: error: string length 1000000 is outside 1..65535"), std::string::npos)
      << one.messages();
  expectLimitError(test::compile("PROGRAM Main\nVAR\n  s : ARRAY[1..5000] OF STRING[65535];\nEND_VAR\nEND_PROGRAM\n"),
                   3, "ARRAY[1..5000] OF STRING[65535] would need 327680000 bytes");
  // A WSTRING[65535] has 2 * 65536 bytes (the units and the 0 unit).
  expectLimitError(test::compile("PROGRAM Main\nVAR\n  w : ARRAY[1..3000] OF WSTRING[65535];\nEND_VAR\nEND_PROGRAM\n"),
                   3, "would need 393216000 bytes");
}

TEST(ImageLimit, ArraysOfFunctionBlockInstances) {
  const Compiled c = test::compile(
      "FUNCTION_BLOCK Fb\nVAR buffer : ARRAY[0..999999] OF BYTE; END_VAR\nEND_FUNCTION_BLOCK\n"
      "PROGRAM Main\nVAR\n  blocks : ARRAY[1..300] OF Fb;\nEND_VAR\nEND_PROGRAM\n");
  expectLimitError(c, 6, "ARRAY[1..300] OF Fb would need 300000000 bytes");
}

TEST(ImageLimit, NestedInstancesAndStructures) {
  // An instance holding instances: the variable that passes the limit is named.
  const Compiled fb = test::compile(
      "FUNCTION_BLOCK Inner\nVAR b : ARRAY[0..99999999] OF BYTE; END_VAR\nEND_FUNCTION_BLOCK\n"
      "FUNCTION_BLOCK Outer\nVAR\n  first : Inner;\n  second : Inner;\n  third : Inner;\nEND_VAR\n"
      "END_FUNCTION_BLOCK\nPROGRAM Main\nVAR o : Outer; END_VAR\nEND_PROGRAM\n");
  expectLimitError(fb, 8, "an instance of 'Outer' would need 300000000 bytes with 'third'");
  EXPECT_EQ(fb.errorCount(), 1u) << fb.messages();  // Outer is laid out once, reported once
  const Compiled st = test::compile(
      "TYPE Pair : STRUCT\n  a : ARRAY[0..199999999] OF BYTE;\n  b : ARRAY[0..199999999] OF BYTE;\nEND_STRUCT\n"
      "END_TYPE\nPROGRAM Main\nVAR p : Pair; END_VAR\nEND_PROGRAM\n");
  expectLimitError(st, 3, "the STRUCT would need 400000000 bytes with field 'b'");
}

TEST(ImageLimit, ArraysOfArraysWhoseElementCountOverflows64Bits) {
  // Three dimensions of 2^31 - 1: 2^93 elements, a product no 64-bit count holds.
  expectLimitError(test::compile("PROGRAM Main\nVAR\n  m : ARRAY[1..2147483647, 1..2147483647, 1..2147483647] OF "
                                 "LREAL;\nEND_VAR\nEND_PROGRAM\n"),
                   3, "would need more than 18446744073709551615 bytes");
  // Each level below the limit, the whole far beyond it.
  expectLimitError(test::compile("TYPE Row : ARRAY[1..100000] OF BYTE; END_TYPE\nPROGRAM Main\nVAR\n  m : "
                                 "ARRAY[1..100000] OF Row;\nEND_VAR\nEND_PROGRAM\n"),
                   4, "ARRAY[1..100000] OF ARRAY[1..100000] OF BYTE would need 10000000000 bytes");
  // Full DINT bounds: 2^32 elements, which a 32-bit count cannot even hold.
  expectLimitError(test::compile("PROGRAM Main\nVAR\n  m : ARRAY[-2147483648..2147483647] OF BOOL;\nEND_VAR\n"
                                 "END_PROGRAM\n"),
                   3, "would need 4294967296 bytes");
}

TEST(ImageLimit, FramesOfFunctionsAndMethods) {
  const Compiled f = test::compile(
      "FUNCTION F : DINT\nVAR\n  x : ARRAY[0..199999999] OF BYTE;\n  y : ARRAY[0..199999999] OF BYTE;\nEND_VAR\n"
      "F := 1;\nEND_FUNCTION\nPROGRAM Main\nVAR r : DINT; END_VAR\nr := F();\nEND_PROGRAM\n");
  expectLimitError(f, 4, "the frame of 'F' would need 400000004 bytes with 'y'");
  EXPECT_EQ(f.errorCount(), 1u) << f.messages();  // its body is not analysed without its variables
  const Compiled m = test::compile(
      "FUNCTION_BLOCK Fb\nMETHOD M : BOOL\nVAR_INPUT\n  a : ARRAY[0..199999999] OF BYTE;\nEND_VAR\nVAR\n"
      "  b : ARRAY[0..99999999] OF BYTE;\nEND_VAR\nM := TRUE;\nEND_METHOD\nEND_FUNCTION_BLOCK\n"
      "PROGRAM Main\nVAR fb : Fb; END_VAR\nEND_PROGRAM\n");
  expectLimitError(m, 7, "the frame of 'Fb.M' would need 300000001 bytes with 'b'");
  const Compiled t = test::compile(
      "PROGRAM Main\nVAR_TEMP\n  x : ARRAY[0..199999999] OF BYTE;\n  y : ARRAY[0..199999999] OF BYTE;\nEND_VAR\n"
      "END_PROGRAM\n");
  expectLimitError(t, 4, "the frame of 'Main' would need 400000000 bytes with 'y'");
}

TEST(ImageLimit, ArraysTakeTheInitialValuesOfTheirElementsWithoutHoldingThem) {
  // Array types keep no initial bytes of their own (Type::writeInitialValue): each element of
  // each array still starts as its element type's initial value, at any depth.
  const test::Running r = test::run(
      "TYPE Mode : (Off := 3, On) DINT; END_TYPE\n"
      "TYPE Cell : STRUCT\n  m : Mode := On;\n  w : INT := -2;\nEND_STRUCT\nEND_TYPE\n"
      "TYPE Row : ARRAY[0..2] OF Cell; END_TYPE\n"
      "TYPE Filled : ARRAY[1..3] OF INT := [7, 8]; END_TYPE\n"
      "FUNCTION_BLOCK Counter\nVAR_OUTPUT n : INT := 5; END_VAR\nEND_FUNCTION_BLOCK\n"
      "PROGRAM Main\nVAR\n  modes : ARRAY[1..4] OF Mode;\n  grid : ARRAY[1..2] OF Row;\n  f : Filled;\n"
      "  counters : ARRAY[1..3, 1..2] OF Counter;\nEND_VAR\nEND_PROGRAM\n",
      0);
  ASSERT_TRUE(r.program);
  EXPECT_EQ(r["Main.modes[1]"], "Off");
  EXPECT_EQ(r["Main.modes[4]"], "Off");
  EXPECT_EQ(r["Main.grid[2][2].m"], "On");
  EXPECT_EQ(r["Main.grid[2][2].w"], "-2");
  EXPECT_EQ(r["Main.grid[1][0].w"], "-2");
  EXPECT_EQ(r["Main.f[1]"], "7");
  EXPECT_EQ(r["Main.f[2]"], "8");
  EXPECT_EQ(r["Main.f[3]"], "0");
  EXPECT_EQ(r["Main.counters[3, 2].n"], "5");
  EXPECT_EQ(r["Main.counters[1, 1].n"], "5");
}

TEST(ImageLimit, TheInitialValuesTheCompilerHoldsAreLimitedToo) {
  // Each of these function blocks is below the image limit, but each holds 200 MB of initial
  // values that are not zero (an enumeration starting at 1): three of them would make the
  // compiler hold 600 MB. Unused, they are laid out all the same (and so would be in a trace's
  // sources). Types whose initial values are all zero cost nothing: the fourth is no error.
  std::string text = "TYPE One : (A := 1, B) SINT; END_TYPE\n";
  for (int i = 1; i <= 3; ++i)
    text += "FUNCTION_BLOCK Big" + std::to_string(i) +
            "\nVAR x : ARRAY[0..199999999] OF One; END_VAR\n"
            "END_FUNCTION_BLOCK\n";
  text += "FUNCTION_BLOCK Zero\nVAR x : ARRAY[0..199999999] OF BYTE; END_VAR\nEND_FUNCTION_BLOCK\n";
  text += "PROGRAM Main\nVAR x : INT; END_VAR\nEND_PROGRAM\n";
  const Compiled c = test::compile(text);
  EXPECT_FALSE(c.program);
  EXPECT_EQ(c.errorCount(), 1u) << c.messages();
  EXPECT_NE(c.messages().find("main.st:8:16: error: the initial values of the program's types and frames would "
                              "need 600000000 bytes in all (those not all zero); scanback's limit is 536870912 "
                              "bytes (512 MiB)"),
            std::string::npos)
      << c.messages();
}

TEST(ImageLimit, ProgramsBelowTheLimitStillCompile) {
  // 120 MB in one array, the rest of the image beside it.
  const Compiled c = test::compile(
      "VAR_GLOBAL g : ARRAY[0..29999999] OF DINT; END_VAR\nPROGRAM Main\nVAR x : DINT; END_VAR\n"
      "g[29999999] := 7;\nx := g[29999999];\nEND_PROGRAM\n");
  ASSERT_TRUE(c.program) << c.messages();
  EXPECT_GT(c.program->imageSize(), 120000000u);
  EXPECT_LE(c.program->imageSize(), kMaxImageBytes);
}

// Out of memory is a message and exit code 6, never std::terminate (vm/base/out_of_memory.h): a
// program of 200 MB run under an address-space limit (RLIMIT_AS, set for the child alone by
// prlimit), first too small to compile it, then too small for the VM's memory beside it. Not in
// sanitizer builds: their runtimes reserve terabytes of address space (no address-space limit
// lets them start) and end the process themselves when an allocation fails, instead of throwing.
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
TEST(OutOfMemory, IsAMessageSayingWhatDidNotFitAndExitCode6) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("scanback_oom_" + std::to_string(::getpid()) + ".st")).string();
  std::ofstream(path) << "PROGRAM Main\nVAR\n  big : ARRAY[0..199999999] OF BYTE;\n  i : DINT;\nEND_VAR\n"
                         "big[i] := 1;\ni := i + 1;\nEND_PROGRAM\n";
  const std::string run = " " + test::shellQuote(SCANBACK_BINARY) + " run " + test::shellQuote(path) + " --cycles 2";
  const test::ShellResult compiling = test::runShell("prlimit --as=" + std::to_string(120 << 20) + run);
  EXPECT_EQ(compiling.exitCode, kExitOutOfMemory) << compiling.err;
  EXPECT_NE(compiling.err.find("scanback: out of memory while compiling " + path), std::string::npos) << compiling.err;
  const test::ShellResult allocating = test::runShell("prlimit --as=" + std::to_string(330 << 20) + run);
  EXPECT_EQ(allocating.exitCode, kExitOutOfMemory) << allocating.err;
  // image + stack + the 8 zero bytes after the stack (Vm::kEndZeros, the end of a string search).
  EXPECT_NE(allocating.err.find("scanback: out of memory while allocating the VM's memory (an image of 200000016 "
                                "bytes and a stack of 262144): 200262168 bytes could not be allocated"),
            std::string::npos)
      << allocating.err;
  EXPECT_EQ(allocating.err.find("terminate called"), std::string::npos) << allocating.err;
  // With the memory it needs, it runs.
  const test::ShellResult enough = test::runShell("prlimit --as=" + std::to_string(700 << 20) + run);
  EXPECT_EQ(enough.exitCode, 0) << enough.err;
  std::filesystem::remove(path);
}
#endif

}  // namespace
}  // namespace scanback
