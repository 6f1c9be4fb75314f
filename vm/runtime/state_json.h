// The program state as JSON (what `scanback run --print-state` and `scanback replay` print):
// program instances and globals as top-level keys, FB instances and structs as objects, arrays as
// arrays, BOOL as true/false, numbers as numbers, STRING as strings, TIME/DATE values as IEC
// literals, enumerations by name, references as "REF(path)" or null.
#pragma once

#include <nlohmann/json.hpp>

#include "vm/bytecode/program.h"
#include "vm/exec/vm.h"

namespace scanback {

nlohmann::ordered_json stateToJson(const Program& program, const uint8_t* image);
nlohmann::ordered_json valueToJson(const Program& program, const uint8_t* image, uint32_t offset, int bit,
                                   const Type& type);
// The dotted path of the variable at `offset` ("Main.a[3]"), or "" when none starts there.
std::string pathOfOffset(const Program& program, uint32_t offset, const Type* type);
// The function block an interface value `ref` references: the class whose id its instance holds
// (Program::classes), or null when `ref` is NULL or holds no instance of a known class.
const Type* interfaceTarget(const Program& program, const uint8_t* image, uint32_t ref);
// An interface value as the debugger shows it: "NULL", "REF(Main.r) : Rect" (the instance and its
// block), or "REF(@offset)" when it references no known instance.
std::string interfaceText(const Program& program, const uint8_t* image, uint32_t ref);
// How a call-stack frame is named for people: "Line.motor (MotorCtl)" for an FB or method call,
// "Monitor (Supervisor)" for a program instance, the POU's name for a function. The instance
// tells which of several calls of one type it is.
std::string frameName(const Program& program, const Frame& frame);

}  // namespace scanback
