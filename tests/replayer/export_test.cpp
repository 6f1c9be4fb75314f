// `scanback trace export` end to end through the real command: CSV rows and VCD value changes
// against `scanback replay --to CYCLE --print-state` at sample cycles, the VCD read back by
// GTKWave's vcd2fst, variable lists and globs, and bad arguments as usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/shell.h"
#include "tests/support/trace_support.h"
#include "tests/traces/trace_test_support.h"

namespace fs = std::filesystem;
using namespace scanback;
using json = nlohmann::json;

namespace {

using test::readText;

std::string quote(const std::string& s) { return test::shellQuote(s); }

using Result = test::ShellResult;
Result shell(const std::string& command) { return test::runShell(command); }

using test::runScanback;

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      out.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

// The value of `path` ("Line.batches", "gAlarms[2].active" without arrays here) in a state dump.
const json* lookup(const json& state, const std::string& path) {
  const json* at = &state;
  std::stringstream parts(path);
  std::string part;
  while (std::getline(parts, part, '.')) {
    if (!at->is_object() || !at->contains(part)) return nullptr;
    at = &(*at)[part];
  }
  return at;
}

// A VCD string value decoded: \xHH escapes, "" for the empty string.
std::string vcdString(const std::string& token) {
  if (token == "\"\"") return "";
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '\\' && i + 3 < token.size() && token[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(token.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += token[i];
    }
  }
  return out;
}

// Whether an exported text (the Variables view's spelling) is the value the state dump holds.
bool sameValue(const std::string& text, const json& value) {
  if (value.is_boolean()) return text == (value.get<bool>() ? "TRUE" : "FALSE");
  if (value.is_number()) {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (*end) return false;
    const double want = value.get<double>();
    return std::fabs(x - want) <= 1e-6 * std::max(1.0, std::fabs(want));
  }
  if (value.is_string()) {
    const std::string s = value.get<std::string>();
    return text == s || text == "'" + s + "'";
  }
  return false;
}

class Export : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new trace::testing::TempDir();
    trace_ = (dir_->path / "plant.trace").string();
    const std::string plant = test::plantDirectory().string();
    std::string files;
    for (const std::string& f : test::stFilesIn(plant)) files += " " + quote(f);
    // Short chunks, so that the export crosses many of them and the write index skips some.
    const Result run = runScanback("run" + files + " --inputs " + quote(plant + "/stimulus.csv") +
                                   " --cycles 1200 --keyframe-every 50 --quiet --record " + quote(trace_));
    ASSERT_EQ(run.exitCode, 0) << run.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static json stateAt(uint64_t cycle) {
    const Result r = runScanback("replay " + quote(trace_) + " --to " + std::to_string(cycle) + " --print-state");
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return json::parse(r.out);
  }

  static inline trace::testing::TempDir* dir_ = nullptr;
  static inline std::string trace_;
};

TEST_F(Export, CsvRowsAreTheValuesAtTheEndOfEachCycle) {
  const std::string csv = (dir_->path / "line.csv").string();
  const Result r = runScanback("trace export " + quote(trace_) + " --csv " + quote(csv) +
                               " --vars 'Line.*,Tank.level,Tank.levelFilt,gLineState,gHorn'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream lines(readText(csv));
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  const std::vector<std::string> header = splitCsv(line);
  ASSERT_GE(header.size(), 10u);
  EXPECT_EQ(header[0], "cycle");
  EXPECT_EQ(header[1], "time");
  EXPECT_EQ(std::count(header.begin(), header.end(), "Tank.level"), 1);
  EXPECT_EQ(std::count(header.begin(), header.end(), "Line.batches"), 1);
  EXPECT_EQ(std::count(header.begin(), header.end(), "Monitor.upTicks"), 0);
  std::vector<std::vector<std::string>> rows;
  while (std::getline(lines, line)) rows.push_back(splitCsv(line));
  ASSERT_EQ(rows.size(), 1200u);  // one row per cycle
  int64_t previousTime = -1;
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].size(), header.size());
    EXPECT_EQ(rows[i][0], std::to_string(i));
    const int64_t time = std::stoll(rows[i][1]);
    EXPECT_GE(time, previousTime);
    previousTime = time;
  }
  size_t compared = 0;
  for (const uint64_t cycle : {0u, 1u, 37u, 260u, 499u, 500u, 811u, 1199u}) {
    const json state = stateAt(cycle);
    for (size_t col = 2; col < header.size(); ++col) {
      if (header[col].find('[') != std::string::npos) continue;  // arrays: elements are spelt by index
      const json* want = lookup(state, header[col]);
      ASSERT_TRUE(want) << header[col];
      EXPECT_TRUE(sameValue(rows[cycle][col], *want))
          << header[col] << " at the end of cycle " << cycle << ": exported " << rows[cycle][col] << ", replay "
          << want->dump();
      ++compared;
    }
  }
  EXPECT_GT(compared, 200u);
}

TEST_F(Export, VcdOpensInGtkwaveAndItsChangesAreTheReplayedValues) {
  const std::string vcd = (dir_->path / "plant.vcd").string();
  const Result r = runScanback("trace export " + quote(trace_) + " --vcd " + quote(vcd));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  // GTKWave's converter reads it (Debian: gtkwave).
  const Result converted = shell("vcd2fst " + quote(vcd) + " " + quote((dir_->path / "plant.fst").string()));
  ASSERT_EQ(converted.exitCode, 0) << "vcd2fst (apt-get install gtkwave): " << converted.err;
  EXPECT_GT(fs::file_size(dir_->path / "plant.fst"), 0u);

  // Read it back: scopes, variables and their values at each timestamp.
  std::istringstream in(readText(vcd));
  std::string line;
  std::vector<std::string> scopes;
  std::map<std::string, std::string> nameOf;  // id -> dotted path
  std::map<std::string, std::string> typeOf;  // id -> var type
  std::map<std::string, std::string> value;   // id -> current value
  std::map<int64_t, std::map<std::string, std::string>> atTime;
  bool timescaleNs = false;
  int64_t now = -1;
  auto record = [&] {
    if (now >= 0) atTime[now] = value;
  };
  while (std::getline(in, line)) {
    if (line.starts_with("$timescale")) timescaleNs = line.find("1ns") != std::string::npos;
    std::istringstream words(line);
    std::string w;
    words >> w;
    if (w == "$scope") {
      std::string kind, name;
      words >> kind >> name;
      EXPECT_EQ(kind, "module");
      scopes.push_back(name);
    } else if (w == "$upscope") {
      scopes.pop_back();
    } else if (w == "$var") {
      std::string type, width, id, name;
      words >> type >> width >> id >> name;
      std::string path;
      for (const std::string& s : scopes) path += (s == "GLOBALS" ? "" : s + ".");
      nameOf[id] = path + name;
      typeOf[id] = type;
    } else if (w.starts_with('#')) {
      record();
      now = std::stoll(w.substr(1));
    } else if (!w.empty() && (w[0] == '0' || w[0] == '1') && nameOf.count(w.substr(1))) {
      value[w.substr(1)] = w.substr(0, 1);
    } else if (!w.empty() && (w[0] == 'b' || w[0] == 'r' || w[0] == 's')) {
      std::string id;
      words >> id;
      value[id] = w;
    }
  }
  record();
  EXPECT_TRUE(timescaleNs);
  EXPECT_TRUE(scopes.empty());
  ASSERT_GT(nameOf.size(), 100u);  // every scalar of the plant

  // The cycle start times, from the CSV export of the same trace.
  const std::string csv = (dir_->path / "times.csv").string();
  ASSERT_EQ(runScanback("trace export " + quote(trace_) + " --csv " + quote(csv) + " --vars Line.batches").exitCode, 0);
  std::istringstream csvLines(readText(csv));
  std::vector<int64_t> startOf;
  std::getline(csvLines, line);
  while (std::getline(csvLines, line)) startOf.push_back(std::stoll(splitCsv(line)[1]));
  ASSERT_EQ(startOf.size(), 1200u);

  size_t compared = 0;
  for (uint64_t cycle : {3u, 120u, 498u, 777u, 1150u}) {
    // The VCD holds the value after the last cycle that starts at a time: take such a cycle.
    while (cycle + 1 < startOf.size() && startOf[cycle + 1] == startOf[cycle]) ++cycle;
    auto it = atTime.upper_bound(startOf[cycle]);
    ASSERT_NE(it, atTime.begin());
    const std::map<std::string, std::string>& values = std::prev(it)->second;
    const json state = stateAt(cycle);
    for (const auto& [id, path] : nameOf) {
      if (path.find('[') != std::string::npos) continue;
      const json* want = lookup(state, path);
      ASSERT_TRUE(want) << path;
      ASSERT_TRUE(values.count(id)) << path;
      const std::string& v = values.at(id);
      const std::string& type = typeOf[id];
      if (type == "wire") {
        EXPECT_EQ(v, want->get<bool>() ? "1" : "0") << path << " at cycle " << cycle;
      } else if (type == "real") {
        EXPECT_NEAR(std::stod(v.substr(1)), want->get<double>(), 1e-5 * std::max(1.0, std::fabs(want->get<double>())))
            << path << " at cycle " << cycle;
      } else if (type == "string") {
        if (want->is_string()) {
          EXPECT_EQ(vcdString(v.substr(1)), want->get<std::string>()) << path << " at cycle " << cycle;
        }
      } else if (type == "integer" && want->is_number_integer()) {
        const uint64_t bits = std::stoull(v.substr(1), nullptr, 2);
        const int64_t expected = want->get<int64_t>();
        if (expected >= 0)
          EXPECT_EQ(bits, static_cast<uint64_t>(expected)) << path << " at cycle " << cycle;
        else
          EXPECT_EQ(v.substr(1).size() >= 8 && v[1] == '1', true) << path << ": a negative value keeps its sign bit";
      } else {
        continue;  // TIME and dates: numbers in the VCD, IEC literals in the state dump
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 300u);
}

TEST_F(Export, ARangeOfCyclesAndStructuredVariables) {
  const std::string csv = (dir_->path / "range.csv").string();
  const Result r = runScanback("trace export " + quote(trace_) + " --csv " + quote(csv) +
                               " --cycles 100..149 --vars 'gAlarms[2],Tank.level'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream lines(readText(csv));
  std::string line;
  std::getline(lines, line);
  const std::vector<std::string> header = splitCsv(line);
  // A structure element stands for its fields.
  ASSERT_GE(header.size(), 5u);
  EXPECT_EQ(header[2].rfind("gAlarms[2].", 0), 0u) << header[2];
  EXPECT_EQ(header.back(), "Tank.level");
  size_t rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(splitCsv(line)[0], std::to_string(100 + rows));
    ++rows;
  }
  EXPECT_EQ(rows, 50u);
}

TEST_F(Export, BadArgumentsAreUsageErrorsNamingWhatIsWrong) {
  const std::string out = (dir_->path / "bad.csv").string();
  Result r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --vars Line.nosuch");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("Line.nosuch"), std::string::npos) << r.err;
  r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --vars 'Nothing.*'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("matches no variable"), std::string::npos) << r.err;
  r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --cycles 5000..6000");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("outside the recorded cycles 0..1199"), std::string::npos) << r.err;
  r = runScanback("trace export " + quote(trace_));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--vcd FILE and --csv FILE"), std::string::npos) << r.err;
  r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --vcd " + quote(out));
  EXPECT_EQ(r.exitCode, 2);
  r = runScanback("trace export " + quote((dir_->path / "missing.trace").string()) + " --csv " + quote(out));
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("missing.trace"), std::string::npos) << r.err;
}

}  // namespace

namespace {

// WSTRING and WCHAR signals: a VCD string of the text's UTF-8 bytes (escaped as the VCD needs),
// and in the CSV the text as the Variables view shows it ("..." in double quotes).
TEST(ExportWString, VcdAndCsvCarryTheTextAsUtf8) {
  trace::testing::TempDir dir;
  const std::string golden = (fs::path(SCANBACK_SOURCE_DIR) / "tests" / "golden" / "wstring_basic.st").string();
  const std::string tracePath = (dir.path / "w.trace").string();
  const Result run = runScanback("run " + quote(golden) + " --cycles 3 --quiet --record " + quote(tracePath));
  ASSERT_EQ(run.exitCode, 0) << run.err;

  const std::string csv = (dir.path / "w.csv").string();
  Result r = runScanback("trace export " + quote(tracePath) + " --csv " + quote(csv) + " --vars 'Main.grow,Main.c'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::istringstream lines(readText(csv));
  std::string line;
  ASSERT_TRUE(std::getline(lines, line));
  EXPECT_EQ(splitCsv(line), (std::vector<std::string>{"cycle", "time", "Main.grow", "Main.c"}));
  std::vector<std::string> grow;
  while (std::getline(lines, line)) {
    const std::vector<std::string> row = splitCsv(line);
    ASSERT_EQ(row.size(), 4u) << line;
    grow.push_back(row[2]);
    EXPECT_EQ(row[3], "\"€\"");
  }
  EXPECT_EQ(grow, (std::vector<std::string>{"\"é\"", "\"éé\"", "\"ééé\""}));

  const std::string vcd = (dir.path / "w.vcd").string();
  r = runScanback("trace export " + quote(tracePath) + " --vcd " + quote(vcd) + " --vars 'Main.grow'");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string text = readText(vcd);
  EXPECT_NE(text.find("$var string 1 "), std::string::npos) << text;
  std::vector<std::string> values;
  std::istringstream in(text);
  std::string change;
  while (std::getline(in, change))  // a string value change: s<text> <id>
    if (change.size() > 1 && change[0] == 's') values.push_back(vcdString(change.substr(1, change.find(' ') - 1)));
  EXPECT_EQ(values, (std::vector<std::string>{"é", "éé", "ééé"})) << text;
}

}  // namespace

namespace {

// `trace export --names modbus|both` (docs/fieldbus.md, "Signals by their Modbus address"): the
// plant recorded with an I/O file whose device never answers (nothing listens on port 1: the run
// goes on, holding its inputs), so that the trace carries the file; its maps put the plant's
// located variables on Modbus addresses unlike their IEC ones.
constexpr const char* kRackIo = R"([[device]]
name = "rack"
endpoint = "tcp://127.0.0.1:1"
timeout = "20ms"

[[device.map]]
area = "discrete_inputs"
address = 100
count = 2
to = "%IX0.5"

[[device.map]]
area = "input_registers"
address = 7
count = 1
to = "%IW2"
type = "INT"

[[device.map]]
area = "coils"
address = 8
count = 6
to = "%QX0.0"

[[device.map]]
area = "holding_registers"
address = 40
count = 1
to = "%QW1"
type = "INT"
)";

// The variables kRackIo maps, and what the device calls them.
const std::map<std::string, std::string> kRackNames = {{"Line.exitSensor", "rack.discrete_input_100"},
                                                       {"Line.motorFb", "rack.discrete_input_101"},
                                                       {"Tank.levelRaw", "rack.input_register_7"},
                                                       {"Line.conveyorOut", "rack.coil_8"},
                                                       {"Line.fillValve", "rack.coil_9"},
                                                       {"Line.capperOut", "rack.coil_10"},
                                                       {"gHorn", "rack.coil_11"},
                                                       {"Line.runLamp", "rack.coil_12"},
                                                       {"Line.gateOpen", "rack.coil_13"},
                                                       {"Tank.inletValve", "rack.holding_register_40"}};

// A VCD's declarations: each identifier code with the dotted paths it is declared at.
std::map<std::string, std::vector<std::string>> vcdDeclarations(const std::string& text) {
  std::map<std::string, std::vector<std::string>> names;
  std::vector<std::string> scopes;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string w, kind, width, id, name;
    words >> w;
    if (w == "$scope") {
      words >> kind >> name;
      scopes.push_back(name);
    } else if (w == "$upscope") {
      scopes.pop_back();
    } else if (w == "$var") {
      words >> kind >> width >> id >> name;
      std::string path;
      for (const std::string& s : scopes) path += s + ".";
      names[id].push_back(path + name);
    } else if (w == "$enddefinitions") {
      break;
    }
  }
  return names;
}

class ExportModbusNames : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new trace::testing::TempDir();
    trace_ = (dir_->path / "plant-io.trace").string();
    plainTrace_ = (dir_->path / "plain.trace").string();
    const std::string io = (dir_->path / "rack-io.toml").string();
    std::ofstream(io) << kRackIo;
    const std::string plant = test::plantDirectory().string();
    std::string files;
    for (const std::string& f : test::stFilesIn(plant)) files += " " + quote(f);
    const std::string common = "run" + files + " --inputs " + quote(plant + "/stimulus.csv") + " --cycles 400 --quiet";
    const Result run = runScanback(common + " --io " + quote(io) + " --record " + quote(trace_));
    ASSERT_EQ(run.exitCode, 0) << run.err;
    const Result plain = runScanback(common + " --record " + quote(plainTrace_));
    ASSERT_EQ(plain.exitCode, 0) << plain.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  // The CSV export's header and rows.
  static std::vector<std::vector<std::string>> csv(const std::string& arguments) {
    const std::string out = (dir_->path / "out.csv").string();
    const Result r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " " + arguments);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    std::vector<std::vector<std::string>> rows;
    std::istringstream lines(readText(out));
    std::string line;
    while (std::getline(lines, line)) rows.push_back(splitCsv(line));
    return rows;
  }

  static inline trace::testing::TempDir* dir_ = nullptr;
  static inline std::string trace_, plainTrace_;
};

TEST_F(ExportModbusNames, CsvByModbusAddressHoldsTheMappedVariablesAndTheirValues) {
  const std::vector<std::vector<std::string>> byModbus = csv("--names modbus");
  ASSERT_EQ(byModbus.size(), 401u);  // the header and 400 cycles
  const std::vector<std::string>& header = byModbus[0];
  // By device, area and address, numbers as numbers.
  EXPECT_EQ(header,
            (std::vector<std::string>{"cycle", "time", "rack.coil_8", "rack.coil_9", "rack.coil_10", "rack.coil_11",
                                      "rack.coil_12", "rack.coil_13", "rack.discrete_input_100",
                                      "rack.discrete_input_101", "rack.holding_register_40", "rack.input_register_7"}));
  ASSERT_EQ(header.size(), 2 + kRackNames.size());
  std::string vars;
  for (const auto& [variable, modbus] : kRackNames) vars += (vars.empty() ? "" : ",") + variable;
  const std::vector<std::vector<std::string>> byVariable = csv("--vars '" + vars + "'");
  ASSERT_EQ(byVariable.size(), byModbus.size());
  // Each Modbus column holds the values of the variable the map puts there.
  size_t differing = 0;
  for (size_t col = 2; col < header.size(); ++col) {
    std::string variable;
    for (const auto& [v, modbus] : kRackNames)
      if (modbus == header[col]) variable = v;
    ASSERT_FALSE(variable.empty()) << "an unexpected column: " << header[col];
    const auto at = std::find(byVariable[0].begin(), byVariable[0].end(), variable);
    ASSERT_NE(at, byVariable[0].end()) << variable;
    const size_t other = static_cast<size_t>(at - byVariable[0].begin());
    for (size_t row = 1; row < byModbus.size(); ++row) {
      ASSERT_EQ(byModbus[row][col], byVariable[row][other]) << header[col] << " at cycle " << row - 1;
      differing += byModbus[row][col] != byModbus[1][col];
    }
  }
  EXPECT_GT(differing, 0u) << "no mapped value changes over 400 cycles: the comparison proves little";
}

TEST_F(ExportModbusNames, CsvWithBothNamesHeadsMappedColumnsWithBoth) {
  const std::vector<std::vector<std::string>> rows =
      csv("--names both --vars 'Line.motorFb,Line.state,Tank.inletValve'");
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], (std::vector<std::string>{"cycle", "time", "Line.motorFb (rack.discrete_input_101)", "Line.state",
                                               "Tank.inletValve (rack.holding_register_40)"}));
  EXPECT_EQ(rows.size(), 401u);
}

TEST_F(ExportModbusNames, VcdDeclaresTheSignalUnderBothNamesWithOneCodeAndGtkwaveReadsIt) {
  const std::string vcd = (dir_->path / "both.vcd").string();
  Result r = runScanback("trace export " + quote(trace_) + " --vcd " + quote(vcd) + " --names both");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::map<std::string, std::vector<std::string>> declared = vcdDeclarations(readText(vcd));
  size_t aliased = 0, variables = 0;
  for (const auto& [id, paths] : declared) {
    ++variables;
    if (paths.size() == 1) {
      EXPECT_EQ(paths[0].rfind("MODBUS.", 0), std::string::npos) << paths[0] << " has no variable name";
      continue;
    }
    ASSERT_EQ(paths.size(), 2u) << id;
    // One is the device's name under MODBUS, the other the variable's (globals under GLOBALS).
    const std::string& modbus = paths[0].rfind("MODBUS.", 0) == 0 ? paths[0] : paths[1];
    std::string variable = &modbus == &paths[0] ? paths[1] : paths[0];
    if (variable.rfind("GLOBALS.", 0) == 0) variable = variable.substr(8);
    ASSERT_TRUE(kRackNames.count(variable)) << variable << " is declared twice";
    EXPECT_EQ(modbus, "MODBUS." + kRackNames.at(variable)) << variable;
    ++aliased;
  }
  EXPECT_EQ(aliased, kRackNames.size());
  EXPECT_GT(variables, 100u);  // every scalar of the plant besides

  // GTKWave's converter reads the aliases, and its dump back names both.
  const std::string fst = (dir_->path / "both.fst").string();
  const Result converted = shell("vcd2fst " + quote(vcd) + " " + quote(fst));
  ASSERT_EQ(converted.exitCode, 0) << "vcd2fst (apt-get install gtkwave): " << converted.err;
  const Result back = shell("fst2vcd " + quote(fst));
  ASSERT_EQ(back.exitCode, 0) << back.err;
  const std::map<std::string, std::vector<std::string>> reread = vcdDeclarations(back.out);
  size_t rereadAliases = 0;
  for (const auto& [id, paths] : reread) rereadAliases += paths.size() == 2;
  EXPECT_EQ(rereadAliases, kRackNames.size()) << back.out.substr(0, 2000);

  // --names modbus: the device's scope alone.
  r = runScanback("trace export " + quote(trace_) + " --vcd " + quote(vcd) + " --names modbus");
  ASSERT_EQ(r.exitCode, 0) << r.err;
  std::set<std::string> names;
  for (const auto& [id, paths] : vcdDeclarations(readText(vcd)))
    for (const std::string& p : paths) names.insert(p);
  std::set<std::string> expected;
  for (const auto& [variable, modbus] : kRackNames) expected.insert(modbus);
  EXPECT_EQ(names, expected);
}

TEST_F(ExportModbusNames, WithoutAnIoFileOrAMappedVariableItIsRefusedSayingWhy) {
  const std::string out = (dir_->path / "refused.csv").string();
  Result r = runScanback("trace export " + quote(plainTrace_) + " --csv " + quote(out) + " --names modbus");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("the trace carries no I/O configuration: it was not recorded with `scanback run --io FILE`"),
            std::string::npos)
      << r.err;
  r = runScanback("trace export " + quote(plainTrace_) + " --csv " + quote(out) + " --names both");
  EXPECT_EQ(r.exitCode, 2);
  r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --names modbus --vars 'Monitor.*'");
  EXPECT_EQ(r.exitCode, 2);
  EXPECT_NE(r.err.find("--names modbus: none of --vars is on a map of the I/O configuration"), std::string::npos)
      << r.err;
  r = runScanback("trace export " + quote(trace_) + " --csv " + quote(out) + " --names registers");
  EXPECT_NE(r.exitCode, 0);
  EXPECT_NE(r.err.find("--names"), std::string::npos) << r.err;
  // Without --names, the trace with an I/O file exports by variables as before.
  EXPECT_EQ(csv("--vars Line.motorFb")[0], (std::vector<std::string>{"cycle", "time", "Line.motorFb"}));
}

}  // namespace
