// The signals a runtime host answers (`scanback run`): SIGINT, SIGTERM and SIGHUP (a closed
// terminal or ssh session) end the run at the next cycle, and the recording finishes cleanly;
// SIGUSR1 asks for a snapshot of the flight recorder's history. A handler only sets a flag; the
// host looks at the flags between cycles and in its waits. SIGPIPE is ignored: a vanished client
// is an error on its stream, never the end of the process (cli/main.cpp ignores it for every
// command; the host does too, wherever it runs).
#pragma once

namespace scanback::runtime::process_signals {

// Installs the handlers, for the whole process. Before any trace exists, so that a signal sent
// once it does is never the default (fatal) one; for every run, so that a SIGUSR1 sent to the
// wrong process does not end it.
void install();
// SIGINT, SIGTERM or SIGHUP has come.
bool interrupted();
// SIGUSR1 has come since the last call.
bool takeSnapshotRequest();

}  // namespace scanback::runtime::process_signals
