// libFuzzer target: the language server's byte stream (tests/fuzz/README.md). The bytes are what an
// editor sends after it opened a small project: framed (or not) JSON-RPC messages, fed to an
// lsp::Server over an in-memory pipe until their end. An `initialize` and the `didOpen` of a program
// go first, so that requests in the bytes reach the handlers (definition, references, completion,
// rename...) with a document to work on; the bytes may also re-initialize, edit, close and shut down.
#include <cstdint>
#include <string>

#include "lsp/server.h"
#include "net/message_writer.h"
#include "net/stream.h"

using namespace scanback;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using nlohmann::json;
  static const std::string prologue =
      net::MessageWriter::frame(json{
          {"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"}, {"params", {{"capabilities", json::object()}}}}) +
      net::MessageWriter::frame(json{
          {"jsonrpc", "2.0"},
          {"method", "textDocument/didOpen"},
          {"params",
           {{"textDocument",
             {{"uri", "file:///f.st"},
              {"languageId", "st"},
              {"version", 1},
              {"text",
               "TYPE E : (A, B); END_TYPE\nFUNCTION_BLOCK F\nVAR_INPUT\n  x : INT; // x\nEND_VAR\nVAR\n  t : TON;\n"
               "  e : E := A;\nEND_VAR\nt(IN := x > 0, PT := T#1s);\nEND_FUNCTION_BLOCK\n"
               "PROGRAM P\nVAR\n  f : F;\n  q AT %QX0.0 : BOOL;\nEND_VAR\nf(x := 1);\nq := "
               "f.t.Q;\nEND_PROGRAM\n"}}}}}});
  net::MemoryPipe::Pair pipe = net::MemoryPipe::pair();
  std::string error;
  // A fresh in-memory pipe takes every byte: a refusal is a bug of the pipe, not an input's.
  if (!pipe.client->write(prologue, error)) __builtin_trap();
  if (!pipe.client->write(std::string(reinterpret_cast<const char*>(data), size), error)) __builtin_trap();
  pipe.client->close();
  lsp::ServerOptions options;
  options.debounce = std::chrono::milliseconds(0);
  options.log = [](const std::string&) {};
  lsp::Server server(*pipe.server, options);
  server.run();
  return 0;
}
