// `scanback dap [--port N [--auth-token-file FILE] | --socket PATH]`: the Debug Adapter Protocol
// server (dap/). On stdin/stdout by default (what VS Code starts). With --port, on 127.0.0.1:N, one
// session per connection; any local process can connect there, so launch and attach must carry a
// token (net/auth_token.h). With --socket, on a unix socket only its owner can open.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "dap/session/session.h"
#include "net/auth_token.h"
#include "net/listener.h"
#include "net/stream.h"

namespace scanback::cli {

namespace {

// The listener a signal closes, so that the server ends cleanly (and removes its socket file).
net::Listener* gListener = nullptr;

void serve(net::Listener& listener, const std::optional<std::string>& token) {
  gListener = &listener;
  std::signal(SIGINT, [](int) { gListener->close(); });  // close() only writes to a pipe
  std::signal(SIGTERM, [](int) { gListener->close(); });
  for (;;) {
    std::string error;
    std::unique_ptr<net::Stream> connection = listener.accept(error);
    if (!connection) {
      if (!error.empty()) std::cerr << fmt::format("scanback: {}\n", error);
      return;
    }
    std::thread([c = std::move(connection), token]() mutable {
      dap::Session session(*c);
      if (token) session.requireAuthToken(*token);
      session.run();
    }).detach();
  }
}

}  // namespace

int dapCommand(const DapArgs& args) {
  if (!args.port && !args.socket) {
    if (!args.authTokenFile.empty()) {
      std::cerr << "scanback: --auth-token-file goes with --port or --socket (stdin/stdout needs no token)\n";
      return kExitUsage;
    }
    std::unique_ptr<net::FdStream> stream = net::FdStream::standardIo();
    dap::Session session(*stream);
    session.run();
    return kExitOk;
  }
  std::optional<std::string> token;
  std::string error;
  if (!args.authTokenFile.empty()) {
    std::string warning;
    token = net::readAuthToken(args.authTokenFile, error, warning);
    if (!token) {
      std::cerr << fmt::format("scanback: {}\n", error);
      return kExitUsage;
    }
    if (!warning.empty()) std::cerr << fmt::format("scanback: warning: {}\n", warning);
  } else if (args.port) {
    token = net::generateAuthToken(error);
    if (!token) {
      std::cerr << fmt::format("scanback: {}\n", error);
      return kExitUsage;
    }
  }
  if (args.socket) {
    auto listener = net::UnixListener::listen(*args.socket, error);
    if (!listener) {
      std::cerr << fmt::format("scanback: {}\n", error);  // "cannot listen on PATH: why"
      return kExitUsage;
    }
    std::cerr << fmt::format("scanback: serving DAP on the unix socket {} (mode 0600: only you can connect){}\n",
                             listener->path(), token ? "; launch and attach need the token of --auth-token-file" : "");
    serve(*listener, token);
    return kExitOk;
  }
  auto listener = net::TcpListener::listen(*args.port, error);
  if (!listener) {
    std::cerr << fmt::format("scanback: {}\n", error);  // "cannot listen on 127.0.0.1:N: why"
    return kExitUsage;
  }
  if (args.authTokenFile.empty()) {
    std::cerr << fmt::format(
        "scanback: serving DAP on 127.0.0.1:{}; launch and attach must give \"authToken\": \"{}\"\n", listener->port(),
        *token);
  } else {
    std::cerr << fmt::format(
        "scanback: serving DAP on 127.0.0.1:{}; launch and attach must give the token of {} as "
        "\"authToken\"\n",
        listener->port(), args.authTokenFile);
  }
  serve(*listener, token);
  return kExitOk;
}

}  // namespace scanback::cli
