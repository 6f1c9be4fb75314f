#include "dap/handlers/handlers.h"
#include "dap/session/session.h"

namespace scanback::dap {

// Each IEC task is a thread; its id is its index + 1 (stable for the session).
Reply threadsRequest(Session& session, const json&) {
  json threads = json::array();
  if (session.launched()) {
    const Program& program = session.program();
    // A nonstop or attached session shows history while the tasks scan on: VS Code calls a thread
    // paused once the session stopped, so the name says that the task itself runs (issue 31).
    const bool running = session.target().runsOn();
    for (size_t i = 0; i < program.tasks.size(); ++i)
      threads.push_back(
          Thread{static_cast<int64_t>(i) + 1, running ? program.tasks[i].name + " (running)" : program.tasks[i].name});
  }
  return Reply{json{{"threads", threads}}};
}

}  // namespace scanback::dap
