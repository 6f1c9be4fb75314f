// Why a variable has its value (docs/explain.md): the statement that last changed it, the values
// that statement read there, each one's own last change, and so on back to the scan inputs, the
// constants and the values the recording started with. `scanback trace why --depth` and the DAP's
// `scanback/why` both build this tree and print or send it (WhyNode's JSON).
//
// The last change is found with the replayer's data search (Replayer::lastChanges), which skips
// the chunks whose write index says nothing of theirs wrote the bytes: a chain over a million
// cycles costs a few chunk replays per node. What a statement read is the typed front end's
// (vm/compiler/statement_reads.h), each read evaluated with the debugger's
// evaluator in the statement's frame at its position, so computed indexes and references resolve
// from the replayed state there.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "replayer/replayer.h"

namespace scanback::replay {

// Where a value came from.
enum class WhyOrigin : uint8_t {
  Statement,  // a statement of the program wrote it (its reads are the node's children)
  Input,      // the cycle's input latch (%I: I/O, a fieldbus device, a Modbus server's peer, a
              // stimulus's %I column: WhyNode::author names the last two)
  Force,      // a force held it (issue 31): applied at the cycle start, over the inputs and writes
  Stimulus,   // an external write at the cycle start: a stimulus file's value, a debugger's write
              // made between cycles, a force `scanback rerun` wrote (WhyNode::author says which)
  Write,      // a debugger's write at a statement boundary inside the cycle
  Initial,    // unchanged since the recording started (or, for a call frame's variable, since
              // the cycle started)
  Constant,   // a CONSTANT
};
const char* whyOriginName(WhyOrigin origin);

struct WhyNode {
  std::string variable;  // its path (`Main.fb.in`), or the text read when it has none (a frame's)
  std::string value;     // as `run --print-state` prints it
  WhyOrigin origin = WhyOrigin::Initial;
  // Statement: where the statement ran (before it ran: its reads have the values shown there).
  // Input, Stimulus: (cycle, 0). Force: (cycle, 0) of the cycle start that gave it the value (or
  // the recording's start, for a force held from before it). Write: where it was written.
  // Initial: the start of the recording (of the cycle, for a frame's variable). Constant: where
  // it was read.
  Position position;
  uint32_t statement = UINT32_MAX;  // Statement
  std::string file;                 // Statement: its file and line, and its text
  uint32_t line = 0;
  std::string text;
  // Stimulus, Write, Input: who made the write or changed the %I bytes (ImageWrite.author); Unknown
  // in a trace recorded before traces said it (then a Stimulus is "a stimulus or a write between
  // cycles"), and for %I bytes a device's latch changed.
  WriteAuthor author = WriteAuthor::Unknown;
  std::vector<WhyNode> reads;
  bool repeated = false;  // the same value's origin is shown elsewhere in the tree (not expanded here)
  std::string error;      // a read that could not be evaluated there (its reason, with a column)
};

// The variable to explain: storage the caller resolved (findVariable, findAddress, or an
// expression the evaluator resolved to storage).
struct WhyTarget {
  std::string name;
  uint32_t offset = 0;
  int8_t bit = -1;
  const Type* type = nullptr;
};

// The tree for `target`'s value at `at`, `depth` levels deep (1: the root and its origin; each
// more level adds the reads of the statements of the level above). Moves the replayer (its
// position afterwards is unspecified). Nullopt with `error` when a position cannot be rebuilt.
[[nodiscard]] std::optional<WhyNode> explainValue(Replayer& replayer, const WhyTarget& target, Position at,
                                                  unsigned depth, std::string& error);

// The WhyNode of docs/extension.md: {value, variable, cycle, step, file?, line?, text?, origin,
// author?, reads, repeated?, error?}.
nlohmann::ordered_json whyToJson(const WhyNode& node);

}  // namespace scanback::replay
