// Large Structured Text sources for measuring the compiler: a project written the way PLC
// projects are (issue 27), grown module by module to a size in bytes. Each module is one machine
// of a plant: a header comment, an enumeration of its states and a recipe structure, a function
// block with inputs, outputs and a few dozen variables (some commented), whose body runs a CASE
// state machine over the enumeration, nested IF/ELSIF chains, a FOR loop over an array, long
// arithmetic expressions, timers and string handling, and a function with a WHILE loop. A PROGRAM
// per hundred modules holds their instances and calls them. Deterministic: the same size gives
// the same text.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <string>

namespace scanback::bench {

inline void appendModule(std::string& out, int m) {
  fmt::format_to(std::back_inserter(out),
                 "(* ---------------------------------------------------------------------------\n"
                 "   Station {0}: conveys, fills and checks one product at a time. The state machine\n"
                 "   below follows the operator's start and stop, the fill level and the faults.\n"
                 "   --------------------------------------------------------------------------- *)\n"
                 "TYPE Station{0}State : (Idle{0}, Starting{0}, Conveying{0}, Filling{0}, Settling{0},\n"
                 "    Checking{0}, Ejecting{0}, Stopping{0}, Faulted{0}, Resetting{0});\nEND_TYPE\n\n"
                 "TYPE Station{0}Recipe :\nSTRUCT\n  targetLevel : REAL := 80.0;   // percent of the bottle\n"
                 "  fillRate : REAL := 12.5;\n  settleTime : TIME := T#250ms;\n  label : STRING[32] := 'station {0}';\n"
                 "END_STRUCT\nEND_TYPE\n\n",
                 m);
  fmt::format_to(std::back_inserter(out),
                 "FUNCTION_BLOCK Station{0}\nVAR_INPUT\n  startRequest : BOOL;      // operator start\n"
                 "  stopRequest : BOOL;\n  levelSensor : REAL;       // 0..100 percent\n  productPresent : BOOL;\n"
                 "  recipe : Station{0}Recipe;\nEND_VAR\nVAR_OUTPUT\n  conveyorOn : BOOL;\n  valveOpen : BOOL;\n"
                 "  rejectCount : DINT;\n  goodCount : DINT;\n  status : STRING[40];\nEND_VAR\nVAR\n"
                 "  state : Station{0}State;\n  settleTimer : TON;\n  faultTimer : TON;\n"
                 "  history : ARRAY[0..31] OF REAL;   // last fill levels\n  historyIndex : INT;\n"
                 "  averageLevel : REAL;\n  deviation : REAL;\n  cycleCounter : UDINT;\n",
                 m);
  for (int v = 0; v < 16; ++v)
    fmt::format_to(std::back_inserter(out), "  parameter{}Setpoint : REAL := {}.{};{}\n", v, v * 3 + 1, v % 10,
                   v % 4 == 0 ? "   // tuned at commissioning" : "");
  fmt::format_to(
      std::back_inserter(out),
      "END_VAR\n\n"
      "cycleCounter := cycleCounter + 1;\n"
      "IF stopRequest THEN\n  state := Stopping{0};\nEND_IF;\n\n"
      "// The state machine: one step per cycle.\n"
      "CASE state OF\n"
      "  Idle{0}:\n    conveyorOn := FALSE;\n    valveOpen := FALSE;\n"
      "    IF startRequest AND NOT stopRequest THEN\n      state := Starting{0};\n    END_IF;\n"
      "  Starting{0}:\n    conveyorOn := TRUE;\n    status := CONCAT('starting ', recipe.label);\n"
      "    state := Conveying{0};\n"
      "  Conveying{0}:\n    IF productPresent THEN\n      conveyorOn := FALSE;\n      state := Filling{0};\n"
      "    ELSIF cycleCounter MOD 1000 = 0 THEN\n      status := 'waiting for a product';\n    END_IF;\n"
      "  Filling{0}:\n    valveOpen := levelSensor < recipe.targetLevel;\n"
      "    IF NOT valveOpen THEN\n      state := Settling{0};\n    END_IF;\n"
      "  Settling{0}:\n    settleTimer(IN := TRUE, PT := recipe.settleTime);\n"
      "    IF settleTimer.Q THEN\n      settleTimer(IN := FALSE);\n      state := Checking{0};\n    END_IF;\n"
      "  Checking{0}:\n    history[historyIndex] := levelSensor;\n"
      "    historyIndex := (historyIndex + 1) MOD 32;\n"
      "    IF ABS(levelSensor - recipe.targetLevel) > 2.5 THEN\n      rejectCount := rejectCount + 1;\n"
      "      state := Ejecting{0};\n    ELSE\n      goodCount := goodCount + 1;\n      state := Conveying{0};\n"
      "      conveyorOn := TRUE;\n    END_IF;\n"
      "  Ejecting{0}:\n    status := 'rejected';\n    state := Conveying{0};\n"
      "  Stopping{0}:\n    conveyorOn := FALSE;\n    valveOpen := FALSE;\n    state := Idle{0};\n"
      "  Faulted{0}:\n    faultTimer(IN := TRUE, PT := T#5s);\n"
      "    IF faultTimer.Q THEN\n      state := Resetting{0};\n    END_IF;\n"
      "  Resetting{0}:\n    faultTimer(IN := FALSE);\n    state := Idle{0};\n"
      "END_CASE;\n\n"
      "// Statistics over the last fills.\n"
      "averageLevel := 0.0;\n"
      "FOR historyIndex := 0 TO 31 DO\n  averageLevel := averageLevel + history[historyIndex] / 32.0;\nEND_FOR;\n"
      "historyIndex := 0;\n"
      "deviation := (parameter0Setpoint * 0.5 + parameter1Setpoint * 0.25 - parameter2Setpoint / 4.0)\n"
      "    * (averageLevel - recipe.targetLevel) + (parameter3Setpoint - parameter4Setpoint) * 0.125\n"
      "    + MIN(parameter5Setpoint, parameter6Setpoint) - MAX(parameter7Setpoint, 0.0);\n"
      "IF deviation > parameter8Setpoint THEN\n"
      "  IF deviation > parameter9Setpoint * 2.0 THEN\n    state := Faulted{0};\n"
      "  ELSIF deviation > parameter10Setpoint THEN\n    status := 'deviation high';\n"
      "  ELSE\n    status := 'deviation';\n  END_IF;\nEND_IF;\n"
      "END_FUNCTION_BLOCK\n\n"
      "FUNCTION Smooth{0} : REAL\nVAR_INPUT\n  value : REAL;\n  previous : REAL;\n  steps : INT;\nEND_VAR\n"
      "VAR\n  k : INT;\n  acc : REAL;\nEND_VAR\n"
      "acc := previous;\nk := 0;\nWHILE k < steps DO\n  acc := acc + (value - acc) * 0.25;\n  k := k + 1;\n"
      "END_WHILE;\nSmooth{0} := acc;\nEND_FUNCTION\n\n",
      m);
}

inline void appendProgram(std::string& out, int first, int last) {
  fmt::format_to(std::back_inserter(out), "PROGRAM Line{}\nVAR\n", first);
  for (int m = first; m < last; ++m)
    fmt::format_to(std::back_inserter(out), "  station{0} : Station{0};\n  level{0} : REAL;\n", m);
  out += "END_VAR\n";
  for (int m = first; m < last; ++m)
    fmt::format_to(std::back_inserter(out),
                   "level{0} := Smooth{0}(value := level{0} + 1.0, previous := level{0}, steps := 3);\n"
                   "station{0}(startRequest := TRUE, levelSensor := level{0}, productPresent := level{0} > 10.0);\n",
                   m);
  out += "END_PROGRAM\n\n";
}

// A project of about `bytes` bytes (one file).
inline std::string largeSource(size_t bytes) {
  std::string out;
  out.reserve(bytes + 64 * 1024);
  int modules = 0;
  while (out.size() < bytes) {
    appendModule(out, modules++);
    if (modules % 100 == 0) appendProgram(out, modules - 100, modules);
  }
  if (modules % 100 != 0) appendProgram(out, modules - modules % 100, modules);
  return out;
}

}  // namespace scanback::bench
