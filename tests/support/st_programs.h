// ST programs that more than one test file runs: one copy each, so that the line numbers and
// cycle numbers the tests name mean the same everywhere.
#pragma once

#include <string>
#include <string_view>

namespace scanback::test {

// Two tasks: MainProg every 10 ms (as Main), WatchProg every 50 ms (as Watch). MainProg calls a
// function Twice and a function block Counter, which the test gives in a file of its own.
// `extraGlobals` (whole lines) are declared after gTotal: they move the lines below them.
inline std::string twoTaskMain(std::string_view extraGlobals = {}) {
  return std::string(R"(CONFIGURATION Cfg
  VAR_GLOBAL
    gTotal : DINT;
)") + std::string(extraGlobals) +
         R"(  END_VAR
  RESOURCE Cpu ON PLC
    TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
    TASK Slow (INTERVAL := T#50ms, PRIORITY := 2);
    PROGRAM Main WITH Fast : MainProg;
    PROGRAM Watch WITH Slow : WatchProg;
  END_RESOURCE
END_CONFIGURATION

PROGRAM MainProg
VAR
  n : INT;
  d : INT;
  c : Counter;
END_VAR
n := n + 1;
c(step := Twice(n));
gTotal := gTotal + 1;
  IF n > 1000 THEN n := 0; END_IF
END_PROGRAM

PROGRAM WatchProg
VAR ticks : INT; END_VAR
ticks := ticks + 1;
END_PROGRAM
)";
}

// A program without a configuration: faults with a division by zero in its third cycle (line 4).
inline constexpr const char* kFaultsInThirdCycle = R"(PROGRAM Faulty
VAR n : INT; d : INT; END_VAR
n := n + 1;
d := 10 / (3 - n);
END_PROGRAM
)";

// Every 10 ms (task Fast): faults with a division by zero at line 8, column 20, in its 20th cycle
// (cycle 19).
inline constexpr const char* kFaultsInCycle19 = R"(PROGRAM Faulty
VAR
  count : DINT;
  zero : DINT;
  x : DINT;
END_VAR
count := count + 1;
IF count = 20 THEN x := 10 / zero; END_IF;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Faulty;
END_CONFIGURATION
)";

// Counts its cycles (Main.count) every 10 ms (task Fast).
inline constexpr const char* kCounter = R"(PROGRAM Counter
VAR
  count : DINT;
END_VAR
count := count + 1;
END_PROGRAM

CONFIGURATION Cfg
  TASK Fast (INTERVAL := T#10ms, PRIORITY := 1);
  PROGRAM Main WITH Fast : Counter;
END_CONFIGURATION
)";

}  // namespace scanback::test
