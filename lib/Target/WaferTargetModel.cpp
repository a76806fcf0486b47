//===- WaferTargetModel.cpp - target description files --------------------===//
//
// Part of cgpt.
//
//===----------------------------------------------------------------------===//

#include "cgpt/Target/WaferTargetModel.h"

#include "cgpt/Config/ConfigSource.h"
#include "cgpt/Support/Format.h"
#include "cgpt/Support/InputFile.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <mutex>
#include <set>

using namespace mlir;
using llvm::StringRef;

namespace cgpt::target {
namespace {
struct BuiltinTarget {
  StringRef name;
  StringRef text;
};
// Generated from lib/Target/targets/*.yaml by cmake/EmbedFiles.cmake.
#include "BuiltinTargets.inc"

const StringRef kBuiltinNames[] = {"wse2", "wse3", "mini"};

/// Limits that keep every product of target figures finite and positive.
constexpr int64_t kMaxMeshSide = 1 << 16;
constexpr double kMaxRate = 1e18;
} // namespace

llvm::ArrayRef<StringRef> WaferTargetModel::builtinNames() {
  return kBuiltinNames;
}

/// Warns for each figure of `model` outside what a wafer-scale machine can
/// physically have (docs/targets.md gives each bound and its reasoning):
/// the run goes on, but its results describe no real machine.
static void warnImplausible(const WaferTargetModel &model,
                            const YAML::Node &root, ConfigSource &source) {
  struct Bound {
    const char *section, *key;
    double value, low, high;
  };
  const Bound bounds[] = {
      {nullptr, "clock_hz", model.getClockHz(), 1e8, 3e9},
      {"core", "sram_bytes", double(model.getCoreSramBytes()), 1024, 1 << 20},
      {"core", "flops_per_cycle", double(model.getFlopsPerCycle()), 1, 64},
      {"core", "sram_read_bytes_per_cycle",
       double(model.getSramReadBytesPerCycle()), 1, 256},
      {"fabric", "link_bytes_per_cycle", double(model.getLinkBytesPerCycle()),
       1, 64},
      {"system", "io_bytes_per_second", model.getIoBytesPerSecond(), 1e9, 1e13},
      {"weight_servers", "capacity_bytes", model.getWeightServerCapacityBytes(),
       1e11, 1e17},
  };
  for (const Bound &bound : bounds) {
    if (bound.value >= bound.low && bound.value <= bound.high)
      continue;
    YAML::Node node =
        bound.section ? root[bound.section][bound.key] : root[bound.key];
    std::string key = bound.section
                          ? std::string(bound.section) + "." + bound.key
                          : std::string(bound.key);
    source.warning(source.locate(node, bound.key),
                   "'" + key + "' is " + formatExactDouble(bound.value) +
                       ", outside what a wafer-scale machine can have (" +
                       formatExactDouble(bound.low) + " to " +
                       formatExactDouble(bound.high) +
                       ", docs/targets.md): the results describe no real "
                       "machine");
  }
  int64_t cores = model.getNumCores();
  if (cores > 1'000'000) {
    source.warning(source.locate(root["mesh"], "mesh"),
                   "the mesh has " + formatGrouped(cores) +
                       " cores, more than a wafer holds (WSE-3: 900,000; "
                       "docs/targets.md): the results describe no real "
                       "machine");
  }
}

FailureOr<WaferTargetModel>
WaferTargetModel::parse(StringRef text, StringRef path, MLIRContext *context) {
  text = withoutByteOrderMark(text);
  ConfigSource source(context, path.str(), text.str(), /*isJson=*/false);
  YAML::Node root = source.parseYaml();
  if (source.hasFailed())
    return failure();
  if (!root.IsMap()) {
    emitError(source.fileStart())
        << "a target file must be a mapping with 'name', 'mesh', 'core', "
           "'clock_hz', 'fabric', 'system', 'weight_servers' and "
           "'reduce_tree'";
    return failure();
  }
  WaferTargetModel model;
  try {
    Section top{root, ""};
    auto require = [&](const Section &section, StringRef key, double min,
                       double max) {
      YAML::Node node = source.lookup(section, key);
      if (!node.IsDefined()) {
        source.error(section.present() ? source.locate(section.node)
                                       : source.fileStart(),
                     "target is missing '" + section.qualify(key) + "'");
        return min;
      }
      return source.toDouble(node, section.qualify(key), min, max)
          .value_or(min);
    };
    auto requireInt = [&](const Section &section, StringRef key, int64_t min,
                          int64_t max) {
      return source.requireInt(section, key, min, max);
    };
    std::optional<std::string> name = source.readString(top, "name");
    if (!name)
      source.error(source.fileStart(), "target is missing 'name'");
    model.name = name.value_or("");
    Section mesh = source.subsection(top, "mesh");
    model.meshWidth = requireInt(mesh, "width", 1, kMaxMeshSide);
    model.meshHeight = requireInt(mesh, "height", 1, kMaxMeshSide);
    Section core = source.subsection(top, "core");
    model.coreSramBytes = requireInt(core, "sram_bytes", 1, int64_t(1) << 30);
    model.flopsPerCycle = requireInt(core, "flops_per_cycle", 1, 1 << 16);
    model.sramReadBytesPerCycle =
        requireInt(core, "sram_read_bytes_per_cycle", 1, 1 << 16);
    model.sramWriteBytesPerCycle =
        requireInt(core, "sram_write_bytes_per_cycle", 1, 1 << 16);
    model.mixedFmacsPerCycle =
        requireInt(core, "mixed_fmacs_per_cycle", 1, 1 << 16);
    model.f32FmacsPerCycle =
        requireInt(core, "f32_fmacs_per_cycle", 1, 1 << 16);
    // An FMAC is two FLOP, and flops_per_cycle is the core's peak: no
    // precision multiplies and adds faster than that.
    for (auto [key, fmacs] :
         {std::pair{"mixed_fmacs_per_cycle", model.mixedFmacsPerCycle},
          std::pair{"f32_fmacs_per_cycle", model.f32FmacsPerCycle}})
      if (!source.hasFailed() && 2 * fmacs > model.flopsPerCycle)
        source.error(source.locateKey(core, key),
                     "'" + core.qualify(key) + "' (" + std::to_string(fmacs) +
                         ") is " + std::to_string(2 * fmacs) +
                         " FLOP a cycle, more than 'core.flops_per_cycle' (" +
                         std::to_string(model.flopsPerCycle) + ")");
    model.taskActivationCycles =
        requireInt(core, "task_activation_cycles", 0, 1 << 16);
    model.reservedBytes =
        requireInt(core, "reserved_bytes", 0, int64_t(1) << 30);
    if (model.reservedBytes >= model.coreSramBytes)
      source.error(source.locate(source.lookup(core, "reserved_bytes")),
                   "'core.reserved_bytes' (" +
                       std::to_string(model.reservedBytes) +
                       ") must be below 'core.sram_bytes' (" +
                       std::to_string(model.coreSramBytes) + ")");
    model.clockHz = require(top, "clock_hz", 1e3, 1e12);
    Section fabric = source.subsection(top, "fabric");
    model.linkBytesPerCycle =
        requireInt(fabric, "link_bytes_per_cycle", 1, 1 << 16);
    model.hopLatencyCycles =
        requireInt(fabric, "hop_latency_cycles", 1, 1 << 16);
    // Optional: a target that does not say crosses a ramp in a cycle, as a
    // wavelet crosses a link.
    model.rampLatencyCycles =
        source.lookup(fabric, "ramp_latency_cycles").IsDefined()
            ? requireInt(fabric, "ramp_latency_cycles", 1, 1 << 16)
            : 1;
    model.numColors = requireInt(fabric, "colors", 1, 64);
    model.routerQueueWavelets =
        requireInt(fabric, "queue_wavelets", 1, 1 << 10);
    Section system = source.subsection(top, "system");
    model.ioBytesPerSecond =
        require(system, "io_bytes_per_second", 1, kMaxRate);
    // Optional: only the energy of a training run reads it.
    if (source.lookup(system, "power_watts").IsDefined())
      model.systemPowerWatts = require(system, "power_watts", 1, 1e7);
    Section servers = source.subsection(top, "weight_servers");
    model.weightServerCapacity =
        require(servers, "capacity_bytes", 1, kMaxRate);
    model.weightServerBandwidth =
        require(servers, "bandwidth_bytes_per_second", 1, kMaxRate);
    model.optimizerBandwidth =
        require(servers, "optimizer_bytes_per_second", 1, kMaxRate);
    Section reduce = source.subsection(top, "reduce_tree");
    model.reduceBandwidth =
        require(reduce, "bandwidth_bytes_per_second", 1, kMaxRate);
    model.reduceLevelLatency = require(reduce, "level_latency_seconds", 0, 1);
    model.reduceFanout = requireInt(reduce, "fanout", 2, 1 << 10);
    // A misspelt key would otherwise leave its figure at nothing the user
    // meant, silently: warn as model files do.
    source.warnUnknownKeys(top, {"name", "mesh", "core", "clock_hz", "fabric",
                                 "system", "weight_servers", "reduce_tree"});
    source.warnUnknownKeys(mesh, {"width", "height"});
    source.warnUnknownKeys(
        core,
        {"sram_bytes", "flops_per_cycle", "sram_read_bytes_per_cycle",
         "sram_write_bytes_per_cycle", "mixed_fmacs_per_cycle",
         "f32_fmacs_per_cycle", "task_activation_cycles", "reserved_bytes"});
    source.warnUnknownKeys(fabric,
                           {"link_bytes_per_cycle", "hop_latency_cycles",
                            "ramp_latency_cycles", "colors", "queue_wavelets"});
    source.warnUnknownKeys(system, {"io_bytes_per_second", "power_watts"});
    source.warnUnknownKeys(servers,
                           {"capacity_bytes", "bandwidth_bytes_per_second",
                            "optimizer_bytes_per_second"});
    source.warnUnknownKeys(reduce, {"bandwidth_bytes_per_second",
                                    "level_latency_seconds", "fanout"});
  } catch (const YAML::Exception &e) {
    source.error(source.fileStart(), "unexpected structure: " + e.msg);
  }
  if (source.hasFailed())
    return failure();
  warnImplausible(model, root, source);
  return model;
}

FailureOr<WaferTargetModel> WaferTargetModel::load(StringRef nameOrPath,
                                                   MLIRContext *context) {
  for (const BuiltinTarget &builtin : kBuiltinTargets)
    if (builtin.name == nameOrPath)
      return parse(builtin.text, "<builtin target " + builtin.name.str() + ">",
                   context);
  Location loc = FileLineColLoc::get(context, nameOrPath, 1, 1);
  if (!llvm::sys::fs::exists(nameOrPath)) {
    emitError(loc) << "unknown target '" << nameOrPath
                   << "': not a built-in target ("
                   << llvm::join(builtinNames(), ", ")
                   << ") nor a readable file";
    return failure();
  }
  auto buffer = readInputFile(nameOrPath);
  if (!buffer) {
    emitError(loc) << "cannot read target file '" << nameOrPath
                   << "': " << llvm::toString(buffer.takeError());
    return failure();
  }
  return parse((*buffer)->getBuffer(), nameOrPath, context);
}

FailureOr<const WaferTargetModel *>
WaferTargetModel::loadShared(StringRef nameOrPath, MLIRContext *context) {
  static std::mutex mutex;
  static llvm::StringMap<std::unique_ptr<WaferTargetModel>> loaded;
  // Names that failed in a context: said once there, then failed quietly,
  // so that every op naming the target does not repeat the error.
  static std::set<std::pair<MLIRContext *, std::string>> failedIn;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find(nameOrPath);
  if (it != loaded.end())
    return it->second.get();
  if (failedIn.count({context, nameOrPath.str()}))
    return failure();
  FailureOr<WaferTargetModel> model = load(nameOrPath, context);
  if (failed(model)) {
    failedIn.insert({context, nameOrPath.str()});
    return failure();
  }
  auto &slot = loaded[nameOrPath];
  slot = std::make_unique<WaferTargetModel>(std::move(*model));
  return slot.get();
}

} // namespace cgpt::target
