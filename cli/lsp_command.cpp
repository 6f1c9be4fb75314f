// `scanback lsp [--debounce-ms N]`: the Language Server Protocol server (lsp/) on stdin/stdout,
// what an editor starts for `.st` files (docs/lsp.md). Its exit code is the protocol's: 0 after
// `shutdown` and `exit`, 1 when the stream ended (or `exit` came) without `shutdown`.
#include <chrono>
#include <csignal>

#include "cli/commands.h"
#include "lsp/server.h"
#include "net/stream.h"

namespace scanback::cli {

int lspCommand(const LspArgs& args) {
  std::unique_ptr<net::FdStream> stream = net::FdStream::standardIo();
  lsp::ServerOptions options;
  options.debounce = std::chrono::milliseconds(args.debounceMs);
  options.compile.dialect = args.dialect;
  lsp::Server server(*stream, options);
  return server.run();
}

}  // namespace scanback::cli
