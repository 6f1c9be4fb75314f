// dap/protocol/arguments.h: launch's and attach's arguments read into typed structs — what each
// member becomes, the members DAP and clients add that scanback does not know (accepted), and a
// member of the wrong type (an error naming it and the type it must have), read alone and through
// a session.
#include <gtest/gtest.h>

#include <filesystem>

#include "dap/protocol/arguments.h"
#include "tests/dap/session_client.h"

using namespace scanback::dap;
using namespace scanback::dap::testing;

namespace {

// What reading `args` throws: its message, or "" when it reads. `argumentError` tells whether it was
// an ArgumentError (a member of the wrong type: the session prefixes "invalid arguments for ...").
template <class Read>
std::string refusalOf(Read&& read, const json& args, bool* argumentError = nullptr) {
  try {
    read(args);
  } catch (const ArgumentError& e) {
    if (argumentError) *argumentError = true;
    return e.what();
  } catch (const DapError& e) {
    if (argumentError) *argumentError = false;
    return e.what();
  }
  return "";
}

std::string launchRefusal(const json& args, bool* argumentError = nullptr) {
  return refusalOf([](const json& a) { return readLaunchArguments(a); }, args, argumentError);
}
std::string attachRefusal(const json& args, bool* argumentError = nullptr) {
  return refusalOf([](const json& a) { return readAttachArguments(a); }, args, argumentError);
}

TEST(DapArguments, ALiveLaunchIsReadIntoItsTypedMembers) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const LaunchArguments a = readLaunchArguments(json{{"program", json::array({"main.st", "lib/*.st"})},
                                                     {"cwd", dir},
                                                     {"cycles", 12},
                                                     {"realtime", false},
                                                     {"inputs", "stim.csv"},
                                                     {"record", "run.trace"},
                                                     {"keepTrace", true},
                                                     {"nonstop", true},
                                                     {"stopOnEntry", true},
                                                     {"authToken", "secret"}});
  EXPECT_FALSE(a.replay());
  EXPECT_EQ(a.cwd, dir);
  EXPECT_EQ(a.program, (std::vector<std::string>{"main.st", "lib/*.st"}));
  EXPECT_EQ(a.cycles, 12u);
  EXPECT_FALSE(a.realtime);
  EXPECT_EQ(a.inputs, "stim.csv");
  EXPECT_EQ(a.record.kind, RecordArgument::Kind::Path);
  EXPECT_EQ(a.record.path, "run.trace");
  EXPECT_TRUE(a.keepTrace);
  EXPECT_TRUE(a.nonstop);
  EXPECT_TRUE(a.stopOnEntry);

  // The defaults: the adapter's directory, realtime, a temporary recording, no stop on entry.
  const LaunchArguments d = readLaunchArguments(json{{"program", "main.st"}});
  EXPECT_EQ(d.cwd, std::filesystem::current_path().string());
  EXPECT_EQ(d.program, std::vector<std::string>{"main.st"});
  EXPECT_FALSE(d.cycles);
  EXPECT_TRUE(d.realtime);
  EXPECT_FALSE(d.inputs);
  EXPECT_EQ(d.record.kind, RecordArgument::Kind::Temporary);
  EXPECT_FALSE(d.keepTrace || d.nonstop || d.stopOnEntry);
  EXPECT_EQ(readLaunchArguments(json{{"program", "main.st"}, {"record", false}}).record.kind,
            RecordArgument::Kind::Off);
  EXPECT_EQ(readLaunchArguments(json{{"program", "main.st"}, {"record", true}}).record.kind,
            RecordArgument::Kind::Temporary);
}

TEST(DapArguments, AReplayLaunchReadsItsTraceAndWhereItStarts) {
  LaunchArguments a = readLaunchArguments(json{{"trace", "run.trace"}});
  EXPECT_TRUE(a.replay());
  EXPECT_EQ(a.trace, "run.trace");
  EXPECT_EQ(a.startAt.kind, StartAt::Kind::End);
  EXPECT_EQ(readLaunchArguments(json{{"trace", "t"}, {"startAt", "end"}}).startAt.kind, StartAt::Kind::End);
  EXPECT_EQ(readLaunchArguments(json{{"trace", "t"}, {"startAt", "start"}}).startAt.kind, StartAt::Kind::Start);
  a = readLaunchArguments(json{{"trace", "t"}, {"startAt", 7}});
  EXPECT_EQ(a.startAt.kind, StartAt::Kind::Cycle);
  EXPECT_EQ(a.startAt.cycle, 7u);
  // The live session's members are not read for a replay.
  EXPECT_EQ(launchRefusal(json{{"trace", "t"}, {"cycles", "many"}}), "");
}

TEST(DapArguments, MembersScanbackDoesNotKnowAreAccepted) {
  const json extra{{"type", "scanback"},       {"request", "launch"},
                   {"name", "Debug main.st"},  {"noDebug", false},
                   {"__sessionId", "4f2a-9c"}, {"__restart", json{{"any", 1}}},
                   {"postDebugTask", json(7)}, {"somethingNew", json::array({1, "two"})}};
  json live{{"program", "main.st"}, {"cycles", 3}};
  json replay{{"trace", "run.trace"}};
  json attach{{"endpoint", "tcp://127.0.0.1:9000"}};
  for (json* args : {&live, &replay, &attach}) args->update(extra);
  EXPECT_EQ(launchRefusal(live), "");
  EXPECT_EQ(readLaunchArguments(live).cycles, 3u);
  EXPECT_EQ(launchRefusal(replay), "");
  EXPECT_EQ(attachRefusal(attach), "");
  EXPECT_EQ(readAttachArguments(attach).endpoint.text(), "tcp://127.0.0.1:9000");
}

TEST(DapArguments, AMemberOfTheWrongTypeIsNamedWithTheTypeItMustHave) {
  const json program{{"program", "main.st"}};
  auto with = [](json args, const char* key, json value) {
    args[key] = std::move(value);
    return args;
  };
  const struct {
    json args;
    std::string message;
  } launchCases[] = {
      {with(program, "cycles", "many"), "'cycles' must be an integer, not \"many\""},
      {with(program, "cycles", 2.5), "'cycles' must be an integer, not 2.5"},
      {with(program, "realtime", "yes"), "'realtime' must be true or false, not \"yes\""},
      {with(program, "stopOnEntry", 1), "'stopOnEntry' must be true or false, not 1"},
      {with(program, "keepTrace", "no"), "'keepTrace' must be true or false, not \"no\""},
      {with(program, "nonstop", 0), "'nonstop' must be true or false, not 0"},
      {with(program, "inputs", 5), "'inputs' must be a string, not 5"},
      {with(program, "cwd", json::array({"/"})), "'cwd' must be a string, not an array"},
      {json{{"trace", 5}}, "'trace' must be a string, not 5"},
      {json{{"trace", "t"}, {"cwd", true}}, "'cwd' must be a string, not true"},
  };
  for (const auto& c : launchCases) {
    bool argumentError = false;
    EXPECT_EQ(launchRefusal(c.args, &argumentError), c.message) << c.args.dump();
    EXPECT_TRUE(argumentError) << c.args.dump();
  }
  const struct {
    json args;
    std::string message;
  } attachCases[] = {
      {json{{"endpoint", 5}}, "'endpoint' must be a string, not 5"},
      {json{{"endpoint", "tcp://127.0.0.1:9000"}, {"authToken", 5}}, "'authToken' must be a string, not 5"},
      {json{{"endpoint", "tcp://127.0.0.1:9000"}, {"cwd", json::object()}}, "'cwd' must be a string, not an object"},
  };
  for (const auto& c : attachCases) {
    bool argumentError = false;
    EXPECT_EQ(attachRefusal(c.args, &argumentError), c.message) << c.args.dump();
    EXPECT_TRUE(argumentError) << c.args.dump();
  }
  // Members that take one of several forms say which.
  EXPECT_EQ(launchRefusal(with(program, "record", 3)), "'record' must be a trace path, true or false, not 3");
  EXPECT_EQ(launchRefusal(with(program, "record", "")), "'record' must be a trace path, true or false, not \"\"");
  EXPECT_EQ(launchRefusal(json{{"trace", "t"}, {"startAt", -1}}),
            "'startAt' must be \"end\", \"start\" or a cycle number, not -1");
  EXPECT_EQ(launchRefusal(json{{"trace", "t"}, {"startAt", "middle"}}),
            "'startAt' must be \"end\", \"start\" or a cycle number, not \"middle\"");
  for (const json& bad : {json(5), json::array(), json::array({"a.st", 3}), json()})
    EXPECT_EQ(launchRefusal(json{{"program", bad}}), "'program' must be a file path or an array of file paths")
        << bad.dump();
}

TEST(DapArguments, MissingConflictingAndOutOfRangeMembersSayWhatIsWrong) {
  EXPECT_EQ(launchRefusal(json::object()),
            "missing argument 'program' (the ST file, or an array of files) or 'trace' (a recording to replay)");
  EXPECT_EQ(launchRefusal(json{{"trace", "t"}, {"program", "main.st"}}),
            "give 'program' (run it live) or 'trace' (replay a recording), not both");
  EXPECT_EQ(launchRefusal(json{{"trace", ""}}), "'trace' must be the path of a trace file");
  EXPECT_EQ(launchRefusal(json{{"program", "main.st"}, {"cycles", -1}}), "'cycles' must not be negative");
  EXPECT_EQ(launchRefusal(json{{"program", "main.st"}, {"nonstop", true}, {"record", false}}),
            "'nonstop' works on the recorded history: it cannot be combined with 'record': false");
  const std::string nowhere = (std::filesystem::temp_directory_path() / "scanback-no-such-directory").string();
  EXPECT_EQ(launchRefusal(json{{"program", "main.st"}, {"cwd", nowhere}}), "'cwd' " + nowhere + " is not a directory");
  EXPECT_EQ(attachRefusal(json{{"endpoint", "tcp://127.0.0.1:9000"}, {"cwd", nowhere}}),
            "'cwd' " + nowhere + " is not a directory");
  EXPECT_EQ(attachRefusal(json::object()),
            "missing argument 'endpoint': the runtime's control endpoint, unix:///path.sock or tcp://127.0.0.1:PORT");
  EXPECT_EQ(attachRefusal(json{{"endpoint", ""}}), attachRefusal(json::object()));
  const std::string wrongScheme = attachRefusal(json{{"endpoint", "ftp://somewhere"}});
  EXPECT_EQ(wrongScheme.rfind("'endpoint': ", 0), 0u) << wrongScheme;
  EXPECT_GT(wrongScheme.size(), std::string("'endpoint': ").size()) << wrongScheme;
}

// Fieldbus I/O is `scanback run`'s (docs/fieldbus.md): a launch with `io` or `ioServe` is refused
// with the command to run and the attach to make, not run without its machine.
TEST(DapArguments, ALaunchWithFieldbusIoIsToldToAttachToScanbackRun) {
  const std::string io = launchRefusal(json{{"program", "main.st"}, {"io", "plant-io.toml"}});
  EXPECT_EQ(io,
            "'io': a launched program has no fieldbus I/O; run it as `scanback run FILES --io FILE --control "
            "unix:///PATH/control.sock` and attach to that endpoint (\"request\": \"attach\", \"endpoint\": "
            "\"unix:///PATH/control.sock\"; docs/fieldbus.md)");
  const std::string serve = launchRefusal(json{{"program", "main.st"}, {"ioServe", 1502}});
  EXPECT_NE(serve.find("'ioServe': a launched program has no fieldbus I/O"), std::string::npos) << serve;
  EXPECT_NE(serve.find("scanback run FILES --io-serve PORT --control"), std::string::npos) << serve;
  // Whatever else the launch says: a replay launch with it too.
  EXPECT_EQ(launchRefusal(json{{"trace", "plant.trace"}, {"io", "plant-io.toml"}}), io);
  bool argumentError = true;
  launchRefusal(json{{"program", "main.st"}, {"io", 5}}, &argumentError);
  EXPECT_FALSE(argumentError);
}

// Through a session: the request is named, and the session goes on to a launch that works, with
// members it does not know.
TEST(DapArguments, ASessionRefusesAWronglyTypedLaunchNamingTheMemberAndTakesTheNextOne) {
  TempProject project{{{"main.st", "PROGRAM Main\nVAR n : INT; END_VAR\nn := n + 1;\nEND_PROGRAM\n"}}};
  SessionClient client;
  ASSERT_TRUE(client.request("initialize", json{{"adapterID", "scanback"}})["success"]);
  json r = client.request("launch", json{{"program", project.path("main.st")}, {"cycles", "many"}});
  EXPECT_FALSE(r["success"]);
  EXPECT_EQ(r["message"], "invalid arguments for 'launch': 'cycles' must be an integer, not \"many\"");
  r = client.request("attach", json{{"endpoint", 5}});
  EXPECT_FALSE(r["success"]);
  EXPECT_EQ(r["message"], "invalid arguments for 'attach': 'endpoint' must be a string, not 5");
  r = client.request("launch", json{{"program", project.path("main.st")},
                                    {"record", false},
                                    {"realtime", false},
                                    {"cycles", 3},
                                    {"type", "scanback"},
                                    {"name", "Run main"},
                                    {"__sessionId", "abc"},
                                    {"somethingNew", json::object()}});
  EXPECT_TRUE(r["success"]) << r.dump();
  client.request("disconnect", json{{"terminateDebuggee", true}});
  EXPECT_EQ(client.schemaErrors(), "");
}

}  // namespace
