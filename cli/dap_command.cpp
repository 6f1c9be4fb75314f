// `scanback dap [--port N]`: the Debug Adapter Protocol server (dap/). On stdin/stdout by default
// (what VS Code starts); with --port, on 127.0.0.1:N, one session per connection.
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "dap/session/session.h"
#include "dap/transport/stream.h"
#include "dap/transport/tcp_listener.h"

namespace scanback::cli {

int dapCommand(const DapArgs& args) {
  if (!args.port) {
    std::unique_ptr<dap::FdStream> stream = dap::FdStream::standardIo();
    dap::Session session(*stream);
    session.run();
    return kExitOk;
  }
  std::string error;
  auto listener = dap::TcpListener::listen(*args.port, error);
  if (!listener) {
    std::cerr << fmt::format("scanback: {}\n", error);  // "cannot listen on 127.0.0.1:N: why"
    return kExitUsage;
  }
  std::cerr << fmt::format("scanback: serving DAP on 127.0.0.1:{}\n", listener->port());
  for (;;) {
    std::unique_ptr<dap::Stream> connection = listener->accept(error);
    if (!connection) {
      std::cerr << fmt::format("scanback: accept failed: {}\n", error);
      return kExitUsage;
    }
    std::thread([c = std::move(connection)]() mutable {
      dap::Session session(*c);
      session.run();
    }).detach();
  }
}

}  // namespace scanback::cli
