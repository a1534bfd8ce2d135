// The "gpus" reply's JSON form (docs/api.md, "gpus"): devices with their jobs, MPS daemon and
// the watcher's last reading, the watcher, the host.
#include "common/json_reader.h"
#include "pinpoint/api_codec.h"

namespace pinpoint {

using nlohmann::json;

namespace {

json ToJson(const MpsDaemonView& m) {
  return json{{"state", m.running ? "running" : "down"},
              {"uid", m.uid},
              {"control_pid", m.control_pid},
              {"clients", m.clients},
              {"restarts", m.restarts},
              {"pipe_dir", m.pipe_dir}};
}

}  // namespace

template <>
Result<MpsDaemonView> FromJson<MpsDaemonView>(const json& j) {
  MpsDaemonView m;
  auto in = JsonReader::Record(j, "mps");
  std::string state = "down";
  in.String("state", &state);
  if (state != "running" && state != "down") in.Fail("state", "must be running or down");
  m.running = state == "running";
  in.Integer("uid", &m.uid);
  in.Integer("control_pid", &m.control_pid);
  in.Integer("clients", &m.clients);
  in.Integer("restarts", &m.restarts);
  in.String("pipe_dir", &m.pipe_dir);
  return in.Done(std::move(m));
}

namespace {

json ToJson(const DeviceJobView& m) {
  json j{{"id", m.id},
         {"user", m.user},
         {"name", m.name},
         {"gpu_mem_bytes", m.gpu_mem_bytes},
         {"gpu_share_pct", m.gpu_share_pct},
         {"mode", SharingModeName(m.mode)},
         {"energy_mj", m.energy_mj},
         {"gpu_mem_peak_bytes", m.gpu_mem_peak_bytes}};
  if (m.gpu_mem_used_bytes) j["gpu_mem_used_bytes"] = *m.gpu_mem_used_bytes;
  return j;
}

Result<DeviceJobView> DeviceJobFromJson(const json& j) {
  DeviceJobView m;
  auto in = JsonReader::Record(j, "device job");
  in.Integer("id", &m.id);
  in.String("user", &m.user);
  in.String("name", &m.name);
  in.Integer("gpu_mem_bytes", &m.gpu_mem_bytes);
  in.Integer("gpu_share_pct", &m.gpu_share_pct);
  in.Name("mode", &m.mode, SharingModeFromName, "allocation mode");
  in.OptionalInteger("gpu_mem_used_bytes", &m.gpu_mem_used_bytes);
  in.Integer("gpu_mem_peak_bytes", &m.gpu_mem_peak_bytes);
  in.Integer("energy_mj", &m.energy_mj);
  return in.Done(std::move(m));
}

// The reading's fields stand in the device's object; there is a reading when any of them does.
constexpr const char* kReadingKeys[] = {"mem_used_bytes", "power_mw", "energy_mj",
                                        "utilization_pct"};

json ToJson(const DeviceView& d) {
  json jobs = json::array();
  for (const auto& job : d.jobs) jobs.push_back(ToJson(job));
  json j{{"index", d.index},
         {"uuid", d.uuid},
         {"name", d.name},
         {"gpu_index", d.gpu_index},
         {"is_mig", d.is_mig},
         {"mode", SharingModeName(d.mode)},
         {"drained", d.drained},
         {"recovering", d.recovering},
         {"mem_bytes", d.mem_bytes},
         {"sm_count", d.sm_count},
         {"mem_allocated_bytes", d.mem_allocated_bytes},
         {"mem_free_bytes", d.mem_free_bytes},
         {"share_free_pct", d.share_free_pct},
         {"jobs", std::move(jobs)},
         {"mps_user", d.mps_user ? json(*d.mps_user) : json(nullptr)}};
  if (d.drain_reason) j["drain_reason"] = *d.drain_reason;
  if (d.mps) j["mps"] = ToJson(*d.mps);
  if (d.reading) {
    j["mem_used_bytes"] = d.reading->mem_used_bytes;
    j["power_mw"] = d.reading->power_mw;
    j["energy_mj"] = d.reading->energy_mj;
    j["utilization_pct"] = d.reading->utilization_pct;
  }
  if (d.mig_slot) j["mig_slot"] = {{"start", d.mig_slot->start}, {"vacant", d.mig_slot->vacant}};
  if (!d.holds.empty()) {
    json holds = json::array();
    for (const DeviceHoldView& h : d.holds) {
      json hold{{"job", h.job},       {"user", h.user},         {"pids", h.pids},
                {"in_job", h.in_job}, {"since_ms", h.since_ms}, {"deadline_ms", h.deadline_ms},
                {"killed", h.killed}};
      if (!h.unkillable.empty()) hold["unkillable"] = h.unkillable;  // only where one is
      holds.push_back(std::move(hold));
    }
    j["holds"] = std::move(holds);
  }
  return j;
}

Result<DeviceHoldView> HoldFromJson(const json& j) {
  DeviceHoldView h;
  auto in = JsonReader::Record(j, "hold");
  in.Integer("job", &h.job);
  in.String("user", &h.user);
  in.IntegerList("pids", &h.pids);
  in.Bool("in_job", &h.in_job);
  in.Integer("since_ms", &h.since_ms);
  in.Integer("deadline_ms", &h.deadline_ms);
  in.Bool("killed", &h.killed);
  in.IntegerList("unkillable", &h.unkillable);
  return in.Done(std::move(h));
}

Result<MigSlotView> MigSlotFromJson(const json& j) {
  MigSlotView s;
  auto in = JsonReader::Record(j, "mig_slot");
  in.Integer("start", &s.start);
  in.Bool("vacant", &s.vacant);
  return in.Done(s);
}

json ToJson(const MigChangeView& c) {
  return json{{"at_ms", c.at_ms},     {"gpu", c.gpu},         {"action", c.action},
              {"profile", c.profile}, {"start", c.start},     {"instance_id", c.instance_id},
              {"uuid", c.uuid},       {"for_job", c.for_job}, {"result", c.result}};
}

Result<MigChangeView> MigChangeFromJson(const json& j) {
  MigChangeView c;
  auto in = JsonReader::Record(j, "mig change");
  in.Integer("at_ms", &c.at_ms);
  in.Integer("gpu", &c.gpu);
  in.String("action", &c.action);
  in.String("profile", &c.profile);
  in.Integer("start", &c.start);
  in.Integer("instance_id", &c.instance_id);
  in.String("uuid", &c.uuid);
  in.Integer("for_job", &c.for_job);
  in.String("result", &c.result);
  return in.Done(std::move(c));
}

Result<DeviceView> DeviceFromJson(const json& j) {
  DeviceView d;
  auto in = JsonReader::Record(j, "device");
  in.Integer("index", &d.index);
  in.String("uuid", &d.uuid);
  in.String("name", &d.name);
  in.Integer("gpu_index", &d.gpu_index);
  in.Bool("is_mig", &d.is_mig);
  in.Name("mode", &d.mode, SharingModeFromName, "sharing mode");
  in.Bool("drained", &d.drained);
  in.OptionalString("drain_reason", &d.drain_reason);
  in.Bool("recovering", &d.recovering);
  in.Integer("mem_bytes", &d.mem_bytes);
  in.Integer("sm_count", &d.sm_count);
  in.Integer("mem_allocated_bytes", &d.mem_allocated_bytes);
  in.Integer("mem_free_bytes", &d.mem_free_bytes);
  in.Integer("share_free_pct", &d.share_free_pct);
  in.OptionalString("mps_user", &d.mps_user);
  in.OptionalObject("mps", &d.mps, FromJson<MpsDaemonView>);
  in.ObjectList("jobs", &d.jobs, DeviceJobFromJson);
  in.OptionalObject("mig_slot", &d.mig_slot, MigSlotFromJson);
  in.ObjectList("holds", &d.holds, HoldFromJson);
  bool read = false;
  for (const char* key : kReadingKeys) read = read || in.Has(key);
  if (read) {
    GpuReadingView r;
    in.Integer("mem_used_bytes", &r.mem_used_bytes);
    in.Integer("power_mw", &r.power_mw);
    in.Integer("energy_mj", &r.energy_mj);
    in.Integer("utilization_pct", &r.utilization_pct);
    d.reading = r;
  }
  return in.Done(std::move(d));
}

Result<WatcherView> WatcherFromJson(const json& j) {
  WatcherView w;
  auto in = JsonReader::Record(j, "watcher");
  in.Integer("polls", &w.polls);
  in.Integer("poll_time_ms", &w.poll_time_ms);
  in.Integer("last_poll_us", &w.last_poll_us);
  return in.Done(w);
}

Result<HostView> HostFromJson(const json& j) {
  HostView h;
  auto in = JsonReader::Record(j, "host");
  in.Integer("cpus", &h.cpus);
  in.Integer("cpus_allocated", &h.cpus_allocated);
  in.Integer("mem_bytes", &h.mem_bytes);
  in.Integer("mem_allocated_bytes", &h.mem_allocated_bytes);
  return in.Done(h);
}

}  // namespace

json ToJson(const GpusReply& m) {
  json devices = json::array();
  for (const auto& d : m.devices) devices.push_back(ToJson(d));
  json watcher = nullptr;
  json changes = json::array();
  for (const auto& c : m.mig_changes) changes.push_back(ToJson(c));
  if (m.watcher)
    watcher = {{"polls", m.watcher->polls},
               {"poll_time_ms", m.watcher->poll_time_ms},
               {"last_poll_us", m.watcher->last_poll_us}};
  json reply{{"backend", m.backend},
             {"watcher", std::move(watcher)},
             {"driver", m.driver},
             {"simulated", m.simulated},
             {"devices", std::move(devices)},
             {"host",
              {{"cpus", m.host.cpus},
               {"cpus_allocated", m.host.cpus_allocated},
               {"mem_bytes", m.host.mem_bytes},
               {"mem_allocated_bytes", m.host.mem_allocated_bytes}}}};
  if (!changes.empty()) reply["mig_changes"] = std::move(changes);
  return reply;
}

template <>
Result<GpusReply> FromJson<GpusReply>(const json& j) {
  GpusReply m;
  auto in = JsonReader::Record(j, "reply");
  in.String("backend", &m.backend);
  in.String("driver", &m.driver);
  in.Bool("simulated", &m.simulated);
  if (in.Require("devices")) in.ObjectList("devices", &m.devices, DeviceFromJson);
  in.OptionalObject("watcher", &m.watcher, WatcherFromJson);
  in.Object("host", &m.host, HostFromJson);
  in.ObjectList("mig_changes", &m.mig_changes, MigChangeFromJson);
  return in.Done(std::move(m));
}

}  // namespace pinpoint
