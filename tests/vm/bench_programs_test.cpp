// The benchmark programs of bench/programs/ against their Lua 5.4 twins (bench/lua/): after 1, 10
// and 100 cycles, every value the twin prints (`lua5.4 bench/lua/NAME.lua N`, `key=value` lines)
// must equal the ST program's state. And the examples/plant project, run for 500 cycles with its
// stimulus, must end in the state examples/plant/README.md documents.
//
// Needs lua5.4 on PATH (or SCANBACK_LUA=/path/to/lua5.4); without it the comparison tests fail.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/support/shell.h"
#include "vm/compiler/compiler.h"
#include "vm/runtime/runtime.h"
#include "vm/runtime/state_json.h"
#include "vm/runtime/stimulus.h"

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;
using namespace scanback;

namespace {

const fs::path kSourceDir = SCANBACK_SOURCE_DIR;

// ---- helpers -----------------------------------------------------------------------------------

[[nodiscard]] std::shared_ptr<const Program> compileFiles(const std::vector<std::string>& paths, std::string& error) {
  Diagnostics diagnostics;
  SourceSet sources = loadSourceFiles(paths, diagnostics);
  std::shared_ptr<const Program> program = compileProject(sources, diagnostics);
  if (!program || diagnostics.hasErrors()) {
    error = diagnostics.format(sources);
    return nullptr;
  }
  return program;
}

std::string findLua() {
  if (const char* env = std::getenv("SCANBACK_LUA"); env && *env) return access(env, X_OK) == 0 ? env : "";
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / "lua5.4";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return "";
}

// Splits "[a, b, 'c, d']" into its top-level elements (quotes and nested brackets respected).
std::optional<std::vector<std::string>> splitArray(std::string_view text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  text = text.substr(1, text.size() - 2);
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  bool quoted = false;
  for (char c : text) {
    if (quoted) {
      current += c;
      if (c == '\'') quoted = false;
      continue;
    }
    if (c == '\'') quoted = true;
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
      continue;
    }
    current += c;
  }
  if (!current.empty() || !items.empty()) items.push_back(current);
  for (std::string& item : items) {
    const size_t b = item.find_first_not_of(' ');
    const size_t e = item.find_last_not_of(' ');
    item = b == std::string::npos ? "" : item.substr(b, e - b + 1);
  }
  return items;
}

// Compares one value printed by a Lua twin with the ST value. Empty on success, else the reason.
std::string compareValue(const std::string& lua, const Json& st) {
  auto mismatch = [&](std::string_view why = "") {
    return "Lua " + lua + " vs ST " + st.dump() + (why.empty() ? "" : " (" + std::string(why) + ")");
  };
  if (st.is_array()) {
    const auto items = splitArray(lua);
    if (!items) return mismatch("not an array in Lua");
    if (items->size() != st.size()) return mismatch("array lengths differ");
    for (size_t i = 0; i < items->size(); ++i) {
      std::string why = compareValue((*items)[i], st[i]);
      if (!why.empty()) return "[" + std::to_string(i) + "]: " + why;
    }
    return "";
  }
  if (st.is_string()) {
    std::string text = lua;  // 'quoted' for STRING, bare for an enumeration value
    if (text.size() >= 2 && text.front() == '\'' && text.back() == '\'') text = text.substr(1, text.size() - 2);
    return text == st.get<std::string>() ? "" : mismatch();
  }
  if (st.is_boolean()) return lua == (st.get<bool>() ? "true" : "false") ? "" : mismatch();
  if (st.is_number_float()) {
    char* end = nullptr;
    const double value = std::strtod(lua.c_str(), &end);
    if (lua.empty() || *end != '\0') return mismatch("not a number in Lua");
    const double expected = st.get<double>();
    if (value == expected) return "";
    if (std::isfinite(value) && std::abs(value - expected) <= 1e-9 * std::max(std::abs(value), std::abs(expected)))
      return "";
    return mismatch("LREAL differs by more than 1e-9 relative");
  }
  if (st.is_number_integer()) {
    int64_t value = 0;
    const char* first = lua.data();
    const char* last = lua.data() + lua.size();
    auto [ptr, ec] = std::from_chars(first, last, value);
    if (ec != std::errc() || ptr != last) return mismatch("not an integer in Lua");
    if (st.is_number_unsigned())
      return value >= 0 && static_cast<uint64_t>(value) == st.get<uint64_t>() ? "" : mismatch();
    return value == st.get<int64_t>() ? "" : mismatch();
  }
  return mismatch("unsupported ST value");
}

// Finds the ST value of a name as the Lua twins print it: `checksum`, `motor.starts`,
// `stations[1].rejects` (array indices are the ST indices, so the lower bound is taken from the
// array type). Null (and `error` set) when there is none.
[[nodiscard]] const Json* resolve(const Json& instance, const Type* type, const std::string& key, std::string& error) {
  const Json* json = &instance;
  size_t i = 0;
  while (i < key.size()) {
    if (key[i] == '[') {
      const size_t close = key.find(']', i);
      if (close == std::string::npos) {
        error = "bad key " + key;
        return nullptr;
      }
      int64_t index = 0;
      auto [ptr, ec] = std::from_chars(key.data() + i + 1, key.data() + close, index);
      if (ec != std::errc() || ptr != key.data() + close || !type || type->kind != TypeKind::Array ||
          type->dims.size() != 1 || !json->is_array()) {
        error = "cannot index " + key.substr(0, i) + " with " + key.substr(i, close - i + 1);
        return nullptr;
      }
      const int64_t at = index - type->dims[0].lower;
      if (at < 0 || at >= static_cast<int64_t>(json->size())) {
        error = "index out of range in " + key;
        return nullptr;
      }
      json = &(*json)[static_cast<size_t>(at)];
      type = type->base;
      i = close + 1;
      continue;
    }
    if (key[i] == '.') ++i;
    size_t end = i;
    while (end < key.size() && key[end] != '.' && key[end] != '[') ++end;
    const std::string name = key.substr(i, end - i);
    const Variable* field = type ? type->field(name) : nullptr;
    if (!field || !json->is_object()) {
      error = "no variable " + key.substr(0, end) + " in the ST program";
      return nullptr;
    }
    auto it = json->find(field->name);
    if (it == json->end()) {
      error = "no " + key.substr(0, end) + " in the ST state";
      return nullptr;
    }
    json = &*it;
    type = field->type;
    i = end;
  }
  return json;
}

// ---- the benchmark programs against their Lua twins ---------------------------------------------

struct BenchCase {
  std::string name;
  int cycles = 1;
};

void PrintTo(const BenchCase& c, std::ostream* os) { *os << c.name << " x" << c.cycles; }

std::vector<BenchCase> benchCases() {
  std::vector<BenchCase> cases;
  for (const char* name : {"loops", "gcd", "sieve", "case_sm", "pid", "strings", "plant", "sort", "ring"})
    for (int n : {1, 10, 100}) cases.push_back({name, n});
  // plant's scenario (fault, E-stop, restart) needs more cycles; bench/README.md lists these too
  for (int n : {1000, 1600, 3000}) cases.push_back({"plant", n});
  return cases;
}

[[nodiscard]] std::shared_ptr<const Program> benchProgram(const std::string& name, std::string& error) {
  static std::map<std::string, std::shared_ptr<const Program>> cache;
  if (auto it = cache.find(name); it != cache.end()) return it->second;
  auto program = compileFiles({(kSourceDir / "bench" / "programs" / (name + ".st")).string()}, error);
  if (program) cache.emplace(name, program);
  return program;
}

class BenchProgramTest : public ::testing::TestWithParam<BenchCase> {};

TEST_P(BenchProgramTest, MatchesLuaTwin) {
  const BenchCase& c = GetParam();
  static const std::string lua = findLua();
  ASSERT_FALSE(lua.empty()) << "lua5.4 not found on PATH (set SCANBACK_LUA or install it: apt-get install lua5.4); "
                               "the benchmark programs are checked against their Lua twins";

  std::string error;
  std::shared_ptr<const Program> program = benchProgram(c.name, error);
  ASSERT_TRUE(program) << "bench/programs/" << c.name << ".st does not compile:\n" << error;
  ASSERT_EQ(program->instances.size(), 1u);

  Runtime rt(program);
  for (int i = 0; i < c.cycles; ++i)
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone) << "cycle " << i << ": " << rt.faultMessage();
  const Json state = stateToJson(*program, rt.vm().image());
  const ProgramInstanceInfo& instanceInfo = program->instances[0];
  ASSERT_TRUE(state.contains(instanceInfo.name)) << state.dump(2);
  const Json& instance = state[instanceInfo.name];

  const std::string command = test::shellQuote(lua) + " " +
                              test::shellQuote((kSourceDir / "bench" / "lua" / (c.name + ".lua")).string()) + " " +
                              std::to_string(c.cycles);
  const test::ShellResult twin = test::runShell(command);
  ASSERT_EQ(twin.exitCode, 0) << command << " failed:\n" << twin.out << twin.err;
  const std::string& output = twin.out;

  std::istringstream lines(output);
  std::string line;
  int compared = 0;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const size_t eq = line.find('=');
    ASSERT_NE(eq, std::string::npos) << "unexpected line from " << command << ": " << line;
    const std::string key = line.substr(0, eq);
    const std::string value = line.substr(eq + 1);
    std::string why;
    const Json* st = resolve(instance, instanceInfo.type, key, why);
    if (!st) {
      ADD_FAILURE() << c.name << " after " << c.cycles << " cycles: " << key << ": " << why;
      continue;
    }
    why = compareValue(value, *st);
    EXPECT_TRUE(why.empty()) << c.name << " after " << c.cycles << " cycles: " << instanceInfo.name << "." << key
                             << ": " << why;
    ++compared;
  }
  EXPECT_GE(compared, 3) << "too few values from " << command << ":\n" << output;
}

INSTANTIATE_TEST_SUITE_P(Twins, BenchProgramTest, ::testing::ValuesIn(benchCases()),
                         [](const ::testing::TestParamInfo<BenchCase>& testInfo) {
                           return testInfo.param.name + "_" + std::to_string(testInfo.param.cycles);
                         });

// The comparison itself: a mismatch must be caught.
TEST(BenchCompare, DetectsMismatches) {
  EXPECT_EQ(compareValue("12", Json(12)), "");
  EXPECT_NE(compareValue("13", Json(12)), "");
  EXPECT_NE(compareValue("12.0", Json(12)), "");
  EXPECT_EQ(compareValue("24.947282016357899", Json(24.9472820163579)), "");
  EXPECT_EQ(compareValue("1.0000000000001", Json(1.0)), "");  // within 1e-9 relative
  EXPECT_NE(compareValue("1.00001", Json(1.0)), "");
  EXPECT_EQ(compareValue("25", Json(25.0)), "");  // %.17g prints integral doubles without a point
  EXPECT_EQ(compareValue("'a, b'", Json("a, b")), "");
  EXPECT_NE(compareValue("'a'", Json("b")), "");
  EXPECT_EQ(compareValue("Draining", Json("Draining")), "");
  EXPECT_EQ(compareValue("[1, 2, 3]", Json::array({1, 2, 3})), "");
  EXPECT_NE(compareValue("[1, 2]", Json::array({1, 2, 3})), "");
  EXPECT_NE(compareValue("[1, 2, 4]", Json::array({1, 2, 3})), "");
  EXPECT_EQ(compareValue("true", Json(true)), "");
}

// ---- examples/plant: 500 cycles with its stimulus ---------------------------------------------

TEST(PlantExample, FiveHundredCyclesEndAsDocumented) {
  std::vector<std::string> paths;
  for (const auto& entry : fs::directory_iterator(kSourceDir / "examples" / "plant"))
    if (entry.path().extension() == ".st") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::string error;
  std::shared_ptr<const Program> program = compileFiles(paths, error);
  ASSERT_TRUE(program) << error;
  std::optional<Stimulus> stimulus =
      Stimulus::load((kSourceDir / "examples" / "plant" / "stimulus.csv").string(), *program, error);
  ASSERT_TRUE(stimulus) << error;

  Runtime rt(program);
  // The timeline of examples/plant/README.md: when the line changed state, when the horn sounded.
  std::map<std::string, std::vector<uint64_t>> entered;  // gLineState value -> cycles it was entered
  std::string lastState = "Idle";
  std::optional<uint64_t> motorFaultAt, hornFirst, hornLast;
  for (uint64_t cycle = 0; cycle < 500; ++cycle) {
    ASSERT_EQ(rt.cycle(), cycle);
    stimulus->apply(cycle, rt);
    ASSERT_EQ(rt.runCycle(), RunStatus::CycleDone) << rt.faultMessage();
    const Json s = stateToJson(*program, rt.vm().image());
    const std::string lineState = s["gLineState"].get<std::string>();
    if (lineState != lastState) entered[lineState].push_back(cycle);
    lastState = lineState;
    if (!motorFaultAt && s["Line"]["motor"]["fault"].get<bool>()) motorFaultAt = cycle;
    if (!rt.outputs().empty() && (rt.outputs()[0] & 0x08)) {  // %QX0.3 gHorn
      if (!hornFirst) hornFirst = cycle;
      hornLast = cycle;
    }
  }

  EXPECT_EQ(entered["Starting"], (std::vector<uint64_t>{6, 363}));
  EXPECT_EQ(entered["Running"], (std::vector<uint64_t>{18, 376}));
  EXPECT_EQ(entered["Faulted"], (std::vector<uint64_t>{293}));
  EXPECT_EQ(motorFaultAt, std::optional<uint64_t>(292));
  EXPECT_EQ(hornFirst, std::optional<uint64_t>(209));
  EXPECT_EQ(hornLast, std::optional<uint64_t>(351));

  const Json s = stateToJson(*program, rt.vm().image());
  const Json& line = s["Line"];
  const Json& tank = s["Tank"];
  const Json& monitor = s["Monitor"];

  // Line
  EXPECT_EQ(line["state"], "Running");
  EXPECT_EQ(s["gLineState"], "Running");
  EXPECT_EQ(line["motor"]["starts"], 2);
  EXPECT_EQ(line["motor"]["fault"], false);
  EXPECT_EQ(line["conveyorOut"], true);
  EXPECT_EQ(line["runLamp"], true);
  ASSERT_GE(rt.outputs().size(), 4u);
  EXPECT_TRUE(rt.outputs()[0] & 0x01) << "%QX0.0 conveyor";
  EXPECT_TRUE(rt.outputs()[0] & 0x10) << "%QX0.4 run lamp";
  EXPECT_FALSE(rt.outputs()[0] & 0x08) << "%QX0.3 horn";

  // Stations (gStations : ARRAY[1..3]): Filler, Capper, Exit
  const Json& stations = s["gStations"];
  ASSERT_EQ(stations.size(), 3u);
  EXPECT_EQ(stations[0]["name"], "Filler");
  EXPECT_EQ(stations[0]["count"], 5);
  EXPECT_EQ(stations[1]["count"], 4);
  EXPECT_EQ(stations[2]["count"], 4);
  for (const Json& station : stations) EXPECT_EQ(station["rejects"], 0) << station.dump();
  EXPECT_EQ(s["gBottlesOut"], 4);

  // Bottle tracking (trackQ : ARRAY[0..7])
  EXPECT_EQ(line["nextBottle"], 5);
  EXPECT_EQ(line["lastOut"], 4);
  EXPECT_EQ(line["qCount"], 1);
  EXPECT_EQ(line["trackQ"][4], 5);

  // Batches
  EXPECT_EQ(s["gBatches"], 1);
  EXPECT_EQ(line["batches"], 1);
  EXPECT_EQ(line["fillCounter"]["CV"], 1);

  // Alarms (gAlarms : ARRAY[1..5]): all inactive; motor fault (2) and tank high (4) raised once
  const Json& alarms = s["gAlarms"];
  ASSERT_EQ(alarms.size(), 5u);
  const std::array<int, 5> counts = {0, 1, 0, 1, 0};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(alarms[i]["active"], false) << "gAlarms[" << i + 1 << "]";
    EXPECT_EQ(alarms[i]["count"], counts[i]) << "gAlarms[" << i + 1 << "]";
  }
  EXPECT_EQ(s["gHorn"], false);

  // Tank
  EXPECT_NEAR(s["gTank"]["level"].get<double>(), 64.0, 0.05);
  EXPECT_NEAR(s["gTank"]["setpoint"].get<double>(), 65.2, 0.05);
  EXPECT_EQ(tank["setpoint"].get<double>(), 70.0);
  EXPECT_NEAR(tank["pid"]["out"].get<double>(), 7.50, 0.005);
  EXPECT_NEAR(tank["pid"]["integ"].get<double>(), 2.71, 0.005);
  EXPECT_EQ(tank["inletValve"], 2074);
  uint16_t qw1 = 0;  // %QW1 is bytes 2..3 of the output area
  std::memcpy(&qw1, rt.outputs().data() + 2, sizeof qw1);
  EXPECT_EQ(qw1, 2074) << "%QW1";

  // Supervisor
  EXPECT_EQ(monitor["upTicks"], 46);
  EXPECT_EQ(monitor["runTicks"], 36);
  EXPECT_EQ(monitor["faultTicks"], 5);
  EXPECT_EQ(monitor["idleTicks"], 5);
  EXPECT_NEAR(monitor["availability"].get<double>(), 78.26, 0.005);
  EXPECT_EQ(monitor["bottlesPerMin"], 60);
  EXPECT_EQ(monitor["inTransit"], 1);
  EXPECT_EQ(monitor["busiest"], "Filler");
  EXPECT_EQ(s["gStatusText"], "RUN out=4 bpm=60 lvl=64% alarms=0");

  // The event log (entries : ARRAY[1..12]), newest first
  const std::vector<std::string> events = {
      "3.9s batch 1",
      "3.5s line RUN",
      "3.3s line START",
      "3.2s cleared Tank level high",
      "3.2s cleared Conveyor motor fault",
      "3.2s line IDLE",
      "2.7s ALARM Conveyor motor fault",
      "2.7s line FAULT",
      "1.9s ALARM Tank level high",
      "0.2s line RUN",
      "0.1s line START",
  };
  const Json& entries = monitor["events"]["entries"];
  ASSERT_GE(entries.size(), events.size() + 1);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(entries[i], events[i]) << "entries[" << i + 1 << "]";
  EXPECT_EQ(entries[events.size()], "") << "entries[12]";
}

}  // namespace
