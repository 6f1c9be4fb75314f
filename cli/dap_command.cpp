// `scanback dap [--port N [--auth-token-file FILE] | --socket PATH] [--max-connections N]`: the Debug
// Adapter Protocol server (dap/). On stdin/stdout by default (what VS Code starts). With --port, on
// 127.0.0.1:N, one session per connection; any local process can connect there, so launch and
// attach must carry a token (net/auth_token.h). With --socket, on a unix socket only its owner can
// open. Either way net::Server serves the connections, with its limits and timeouts.
#include <fmt/format.h>
#include <unistd.h>

#include <csignal>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "dap/session/session.h"
#include "net/auth_token.h"
#include "net/listener.h"
#include "net/server.h"
#include "net/stream.h"
#include "vm/base/out_of_memory.h"

namespace scanback::cli {

namespace {

// The server a signal stops (requestStop only writes to an eventfd), so that it ends cleanly: its
// sessions end, its socket file is removed.
net::Server* gServer = nullptr;

// Serves DAP sessions on `listener` until SIGINT or SIGTERM: one session per connection, each on
// its own thread, with the limits of net/server.h (at most `maxConnections` at once, a handshake
// within 10 s, clients that do not read closed after 30 s). The server never ends by itself: a
// client that misbehaves, or running out of descriptors, costs that client, not the sessions.
int serve(std::unique_ptr<net::Listener> listener, const std::string& name, const std::optional<std::string>& token,
          size_t maxConnections) {
  net::ServerOptions options;
  options.name = name;
  options.maxConnections = maxConnections;
  // DAP has no message for a refusal that answers no request: a refused client sees the connection
  // close without output, and the server says why on its stderr.
  std::unique_ptr<net::Server> server;
  try {
    server = std::make_unique<net::Server>(std::move(listener), options, [token](net::Connection& connection) {
      // Out of memory ends this session only, with what did not fit (vm/base/out_of_memory.h).
      try {
        // What the session logs (malformed messages) goes through the server: once, then counted.
        dap::Session session(connection.stream(),
                             [&connection](const std::string& text) { connection.say("session", text); });
        if (token) session.requireAuthToken(*token);
        session.onEstablished([&connection] { connection.established(); });
        session.run();
      } catch (const std::bad_alloc& e) {
        connection.say("memory", fmt::format("{}; that session ended", outOfMemoryText(e, "serving a debug session")));
      }
    });
  } catch (const std::exception& e) {
    std::cerr << fmt::format("scanback: {}: {}\n", name, e.what());
    return kExitUsage;
  }
  gServer = server.get();
  std::signal(SIGINT, [](int) { gServer->requestStop(); });
  std::signal(SIGTERM, [](int) { gServer->requestStop(); });
  server->waitForStopRequest();
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  gServer = nullptr;
  server->close();
  return kExitOk;
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
    const std::string name = "DAP server on " + listener->path();
    std::cerr << fmt::format(
        "scanback: serving DAP on the unix socket {} (mode 0600: only you can connect; at most {} sessions at "
        "once){}\n",
        listener->path(), args.maxConnections, token ? "; launch and attach need the token of --auth-token-file" : "");
    return serve(std::move(listener), name, token, args.maxConnections);
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
  const std::string name = fmt::format("DAP server on 127.0.0.1:{}", listener->port());
  return serve(std::move(listener), name, token, args.maxConnections);
}

}  // namespace scanback::cli
