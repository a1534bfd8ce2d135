#include "store/record_codec.h"

#include <concepts>
#include <cstddef>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "pinpoint/escape.h"

namespace pinpoint::store {
namespace {

using nlohmann::json;

// The store's spellings of enum values, frozen with the format: a rename in the API's codec
// leaves them as they are.
constexpr std::pair<JobState, const char*> kStoredStates[] = {{JobState::kPending, "pending"},
                                                              {JobState::kRunning, "running"},
                                                              {JobState::kCompleted, "completed"},
                                                              {JobState::kFailed, "failed"},
                                                              {JobState::kCancelled, "cancelled"}};
constexpr std::pair<SharingMode, const char*> kStoredModes[] = {
    {SharingMode::kExclusive, "exclusive"},
    {SharingMode::kTimeslice, "timeslice"},
    {SharingMode::kMps, "mps"}};
constexpr std::pair<LimitStrength, const char*> kStoredStrengths[] = {
    {LimitStrength::kNone, "none"},
    {LimitStrength::kHardware, "hardware"},
    {LimitStrength::kDriver, "driver"},
    {LimitStrength::kWatcher, "watcher"}};
constexpr std::pair<Hold, const char*> kStoredHolds[] = {
    {Hold::kNone, "none"}, {Hold::kUser, "user"}, {Hold::kRoot, "root"}};
constexpr std::pair<SuspendPhase, const char*> kStoredSuspendPhases[] = {
    {SuspendPhase::kNone, "none"},
    {SuspendPhase::kSuspending, "suspending"},
    {SuspendPhase::kSuspended, "suspended"},
    {SuspendPhase::kResuming, "resuming"}};
constexpr std::pair<JobKind, const char*> kStoredKinds[] = {{JobKind::kJob, "job"},
                                                            {JobKind::kLease, "lease"}};
// Every reason a release of pinpoint has written: the API's words when each was added.
constexpr std::pair<Reason, const char*> kStoredReasons[] = {
    {Reason::kNone, ""},
    {Reason::kExitedZero, "exit-0"},
    {Reason::kExitedNonZero, "exit-nonzero"},
    {Reason::kSignaled, "signaled"},
    {Reason::kCancelled, "cancelled"},
    {Reason::kLaunchFailed, "launch-failed"},
    {Reason::kLost, "lost"},
    {Reason::kGpuFault, "gpu-fault"},
    {Reason::kGpuMemExceeded, "gpu-mem-exceeded"},
    {Reason::kTimeLimit, "time-limit"},
    {Reason::kMpsUnresponsive, "mps-unresponsive"},
    {Reason::kDependencyNeverSatisfied, "dependency-never-satisfied"},
    {Reason::kLeaseClosed, "lease-closed"},
    {Reason::kLeaseEmptied, "lease-emptied"},
    {Reason::kLeaseNotAttached, "lease-not-attached"},
    {Reason::kLeaseNotPlaced, "lease-not-placed"},
    {Reason::kHeld, "held"},
    {Reason::kDependency, "dependency"},
    {Reason::kUserLimit, "user-limit"},
    {Reason::kArrayLimit, "array-limit"},
    {Reason::kResources, "resources"},
    {Reason::kHostResources, "host-resources"},
    {Reason::kReservation, "reservation"},
    {Reason::kMpsUser, "mps-user"},
    {Reason::kMpsFaultVictim, "mps-fault-victim"},
    {Reason::kRequeued, "requeued"},
    {Reason::kOutputExceeded, "output-exceeded"},
    {Reason::kPreempted, "preempted"},
};

// Format 1's fields, each listed once for both directions: `f` is a Writer (with const parts)
// or a Reader, and f(key, field) returns f. The keys are part of the format: never rename one
// here; add a format instead. Fields added to format 1 after its first release use
// f.Sparse(key, field): written only when not at their default, so a job that does not use them
// is stored byte for byte as before, and read as their default when missing.
template <typename F, typename Request>
void RequestFields(F& f, Request& r) {
  f("name", r.name)("argv", r.argv)("cwd", r.cwd)("env", r.env);
  f("gpus", r.gpus)("gpu_mem_bytes", r.gpu_mem_bytes)("gpu_share_pct", r.gpu_share_pct);
  f("cpus", r.cpus)("mem_bytes", r.mem_bytes)("priority", r.priority);
  f("as_user", r.as_user)("devices", r.devices);
  f.Sparse("output_path", r.output_path).Sparse("error_path", r.error_path);
  f.Sparse("time_limit_s", r.time_limit_s).Sparse("after", r.after).Sparse("afterok", r.afterok);
  f.Sparse("umask", r.umask, -1);
  f.Sparse("signal", r.signal).Sparse("signal_before_s", r.signal_before_s);
  f.Sparse("signal_leader_only", r.signal_leader_only).Sparse("requeue", r.requeue);
  f.Sparse("mig_profile", r.mig_profile);
  f.Sparse("ntasks", r.ntasks, 1).Sparse("gpus_per_task", r.gpus_per_task);
  f.Sparse("submit_dir", r.submit_dir).Sparse("submit_host", r.submit_host);
  f.Sparse("qos", r.qos).Sparse("gpu_type", r.gpu_type);
}

template <typename F, typename Alloc>
void AllocationFields(F& f, Alloc& a) {
  f("device_index", a.device_index)("uuid", a.uuid)("mode", a.mode);
  f("gpu_mem_bytes", a.gpu_mem_bytes)("gpu_share_pct", a.gpu_share_pct);
}

template <typename F, typename Usage>
void UsageFields(F& f, Usage& u) {
  f("samples", u.samples)("final", u.final)("util_pct_mean", u.util_pct_mean);
  f("gpu_mem_now_bytes", u.gpu_mem_now_bytes)("gpu_mem_peak_bytes", u.gpu_mem_peak_bytes);
  f("energy_mj", u.energy_mj);
}

// Every field sparse: a job pinpointd read nothing back for is stored as before.
template <typename F, typename Back>
void ReadbackFields(F& f, Back& b) {
  f.Sparse("cpuset", b.cpuset).Sparse("cpu_max", b.cpu_max).Sparse("memory_max", b.memory_max);
  f.Sparse("host_unread", b.host_unread).Sparse("limits", b.limits);
  f.Sparse("env_read", b.env_read).Sparse("env", b.env).Sparse("gpu_env_reads", b.gpu_env_reads);
  f.Sparse("gpu_env", b.gpu_env).Sparse("gpus_seen", b.gpus_seen);
  f.Sparse("cpu_usec", b.cpu_usec, int64_t{-1})
      .Sparse("mem_peak_bytes", b.mem_peak_bytes, int64_t{-1});
}

template <typename F, typename Limit>
void LimitFields(F& f, Limit& l) {
  f("resource", l.resource).Sparse("variable", l.variable).Sparse("expected", l.expected);
  f("strength", l.strength).Sparse("what", l.what).Sparse("unobservable", l.unobservable);
  f.Sparse("given", l.given);
}

template <typename F, typename Array>
void ArrayFields(F& f, Array& a) {
  f("id", a.array_id)("index", a.index)("count", a.count);
  f("min_index", a.min_index)("max_index", a.max_index)("limit", a.limit);
  f.Sparse("pending", a.pending).Sparse("indices", a.indices);  // an array's rest only
}

template <typename F, typename Suspend>
void SuspendFields(F& f, Suspend& s) {
  f("phase", s.phase)("since_ms", s.since_ms)("by", s.by)("resume", s.resume);
  f("pids", s.pids)("pid_starts", s.pid_starts)("host_bytes", s.host_bytes);
}

template <typename F, typename Record>
void RecordFields(F& f, Record& r) {
  f("id", r.id)("request", r.request)("uid", r.uid)("gid", r.gid)("user", r.user);
  f("state", r.state)("reason", r.reason)("detail", r.detail);
  f("submit_ms", r.submit_ms)("start_ms", r.start_ms)("end_ms", r.end_ms);
  f("exit_code", r.exit_code)("term_signal", r.term_signal)("allocations", r.allocations);
  f("pid", r.pid)("pid_start_ticks", r.pid_start_ticks);
  f("cancel_requested", r.cancel_requested)("cancelled_by", r.cancelled_by);
  f("fault_suspect", r.fault_suspect)("stop_reason", r.stop_reason)("stop_detail", r.stop_detail);
  f("usage", r.usage);
  // Added within format 1 after its fixture: written only when set, so that a job's record is
  // still byte for byte what earlier releases wrote (record_format_test).
  f.Sparse("hold", r.hold).Sparse("kind", r.kind).Sparse("lease_cgroup", r.lease_cgroup);
  f.Sparse("array", r.array).Sparse("cpuset", r.cpuset).Sparse("readback", r.readback);
  f.Sparse("suspend", r.suspend).Sparse("suspended_ms", r.suspended_ms);
}

// A field added to a job but not to the lists above would be lost at every restart. This stops
// compiling when a struct gains or loses a field, until the lists and these names follow it.
[[maybe_unused]] void EveryFieldIsListed(const JobRecord& r) {
  [[maybe_unused]] const auto& [id, kind, request, uid, gid, user, state, reason, detail, submit_ms,
                                start_ms, end_ms, exit_code, term_signal, allocations, pid,
                                pid_start_ticks, cancel_requested, cancelled_by, fault_suspect,
                                stop_reason, stop_detail, usage, hold, lease_cgroup, array, cpuset,
                                readback, suspend, suspended_ms] = r;
  [[maybe_unused]] const auto& [phase, since_ms, by, resume, pids, pid_starts, host_bytes] =
      r.suspend;
  [[maybe_unused]] const auto& [name, argv, cwd, env, gpus, gpu_mem_bytes, gpu_share_pct, cpus,
                                mem_bytes, priority, as_user, devices, mig_profile, output_path,
                                error_path, time_limit_s, after, afterok, umask, signal,
                                signal_before_s, signal_leader_only, requeue, ntasks, gpus_per_task,
                                submit_dir, submit_host, qos, gpu_type] = r.request;
  [[maybe_unused]] const auto& [device_index, uuid, slice_bytes, share_pct, mode] = Allocation{};
  [[maybe_unused]] const auto& [samples, mem_now_bytes, mem_peak_bytes, energy_mj, util_pct_mean,
                                final] = r.usage;
  [[maybe_unused]] const auto& [array_id, index, count, min_index, max_index, limit, pending] =
      static_cast<const ArrayTask&>(r.array);
  // ArrayRecord adds `indices` alone to the public ArrayTask.
  static_assert(sizeof(ArrayRecord) == sizeof(ArrayTask) + sizeof(std::string));
  [[maybe_unused]] const auto& [cpuset_text, cpu_max, memory_max, host_unread, limits, env_read,
                                env_values, gpu_env_reads, gpu_env, gpus_seen, cpu_usec,
                                host_mem_peak_bytes] = r.readback;
  [[maybe_unused]] const auto& [resource, variable, expected, strength, what, unobservable, given] =
      AppliedLimit{};
}

template <typename T>
concept Integer = std::integral<T> && !std::same_as<T, bool>;

// Builds one JSON object from the fields it is called with.
class Writer {
 public:
  template <typename T>
  Writer& operator()(const char* key, const T& value) {
    out_[key] = Encode(value);
    return *this;
  }
  // A field left out while it holds its default (a missing field reads as its default).
  template <typename T>
  Writer& Sparse(const char* key, const T& value, const T& absent = T{}) {
    return value == absent ? *this : (*this)(key, value);
  }
  json Take() { return std::move(out_); }

 private:
  template <typename T>
  static json Encode(const T& plain) {  // numbers, bool, strings, lists and maps of them
    return json(plain);
  }
  static json Encode(JobState state) { return Named(kStoredStates, state, "state"); }
  static json Encode(SharingMode mode) { return Named(kStoredModes, mode, "sharing mode"); }
  static json Encode(Hold hold) { return Named(kStoredHolds, hold, "hold"); }
  static json Encode(LimitStrength s) { return Named(kStoredStrengths, s, "limit strength"); }
  static json Encode(JobKind kind) { return Named(kStoredKinds, kind, "job kind"); }
  static json Encode(SuspendPhase p) { return Named(kStoredSuspendPhases, p, "suspend phase"); }
  static json Encode(Reason reason) { return Named(kStoredReasons, reason, "reason"); }
  // A value the store has no word for is never written as "unknown" (which would read back as an
  // error, or as another value): the record is refused (Encode turns this into kInvalidArgument).
  template <typename Table, typename Enum>
  static json Named(const Table& names, Enum value, const char* what) {
    const char* name = NameIn(names, value);
    if (std::string_view(name) == "unknown")
      throw std::logic_error(std::string(what) + " " + std::to_string(static_cast<int>(value)) +
                             " has no stored name (store/record_codec.cc)");
    return name;
  }
  static json Encode(const std::optional<int>& v) { return v ? json(*v) : json(nullptr); }
  static json Encode(const JobRequest& r) {
    return Object(r, [](Writer& w, auto& p) { RequestFields(w, p); });
  }
  static json Encode(const JobUsage& u) {
    return Object(u, [](Writer& w, auto& p) { UsageFields(w, p); });
  }
  static json Encode(const ArrayRecord& a) {
    return Object(a, [](Writer& w, auto& p) { ArrayFields(w, p); });
  }
  static json Encode(const SuspendRecord& s) {
    return Object(s, [](Writer& w, auto& p) { SuspendFields(w, p); });
  }
  static json Encode(const Readback& b) {
    return Object(b, [](Writer& w, auto& p) { ReadbackFields(w, p); });
  }
  static json Encode(const std::vector<AppliedLimit>& list) {
    json out = json::array();
    for (const AppliedLimit& l : list)
      out.push_back(Object(l, [](Writer& w, auto& p) { LimitFields(w, p); }));
    return out;
  }
  static json Encode(const std::vector<Allocation>& list) {
    json out = json::array();
    for (const Allocation& a : list) {
      out.push_back(Object(a, [](Writer& w, auto& p) { AllocationFields(w, p); }));
    }
    return out;
  }
  template <typename Part, typename Fields>
  static json Object(const Part& part, Fields fields) {
    Writer w;
    fields(w, part);
    return w.Take();
  }

  json out_ = json::object();
};

// Fills a record part from one JSON object: a missing or null key keeps the default, a value of
// the wrong type or out of range is an error naming its path. The first error stops the rest.
class Reader {
 public:
  Reader(const json& object, std::string path) : j_(object), path_(std::move(path)) {
    if (!j_.is_object()) error_ = InvalidArgument(path_ + " must be a JSON object");
  }
  template <typename T>
  Reader& operator()(const char* key, T& out) {
    if (error_.ok() && j_.contains(key) && !j_.at(key).is_null()) {
      error_ = Decode(j_.at(key), path_ + "." + key, &out);
    }
    return *this;
  }
  template <typename T>
  Reader& Sparse(const char* key, T& out, const T& /*absent: out keeps it*/ = T{}) {
    return (*this)(key, out);
  }
  const Status& error() const { return error_; }

 private:
  static Status Wrong(const std::string& path, const char* what) {
    return InvalidArgument(path + " must be " + what);
  }
  template <Integer Int>
  static Status Decode(const json& v, const std::string& path, Int* out) {
    bool fits = v.is_number_unsigned()  ? std::in_range<Int>(v.get<uint64_t>())
                : v.is_number_integer() ? std::in_range<Int>(v.get<int64_t>())
                                        : false;
    if (!fits) return Wrong(path, "an integer in range");
    *out = v.is_number_unsigned() ? static_cast<Int>(v.get<uint64_t>())
                                  : static_cast<Int>(v.get<int64_t>());
    return Status::Ok();
  }
  static Status Decode(const json& v, const std::string& path, bool* out) {
    if (!v.is_boolean()) return Wrong(path, "true or false");
    *out = v.get<bool>();
    return Status::Ok();
  }
  static Status Decode(const json& v, const std::string& path, std::string* out) {
    if (!v.is_string()) return Wrong(path, "a string");
    *out = v.get<std::string>();
    return Status::Ok();
  }
  static Status Decode(const json& v, const std::string& path, std::optional<int>* out) {
    int value = 0;
    PP_RETURN_IF_ERROR(Decode(v, path, &value));
    *out = value;
    return Status::Ok();
  }
  static Status Decode(const json& v, const std::string& path, JobState* out) {
    return Named(v, path, kStoredStates, "a known job state", out);
  }
  static Status Decode(const json& v, const std::string& path, SharingMode* out) {
    return Named(v, path, kStoredModes, "a known allocation mode", out);
  }
  static Status Decode(const json& v, const std::string& path, Hold* out) {
    return Named(v, path, kStoredHolds, "a known hold", out);
  }
  static Status Decode(const json& v, const std::string& path, LimitStrength* out) {
    return Named(v, path, kStoredStrengths, "a known limit strength", out);
  }
  static Status Decode(const json& v, const std::string& path, JobKind* out) {
    return Named(v, path, kStoredKinds, "a known record kind", out);
  }
  static Status Decode(const json& v, const std::string& path, SuspendPhase* out) {
    return Named(v, path, kStoredSuspendPhases, "a known suspend phase", out);
  }
  static Status Decode(const json& v, const std::string& path, SuspendRecord* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { SuspendFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, Reason* out) {
    return Named(v, path, kStoredReasons, "a known reason", out);
  }
  template <typename Enum, size_t N>
  static Status Named(const json& v, const std::string& path,
                      const std::pair<Enum, const char*> (&names)[N], const char* what, Enum* out) {
    std::string name;
    PP_RETURN_IF_ERROR(Decode(v, path, &name));
    std::optional<Enum> value = ValueIn(names, name);
    if (!value) return InvalidArgument(path + " is not " + what);
    *out = *value;
    return Status::Ok();
  }
  template <typename T>
  static Status Decode(const json& v, const std::string& path, std::vector<T>* out) {
    if (!v.is_array()) return Wrong(path, "an array");
    std::vector<T> items(v.size());
    for (size_t i = 0; i < items.size(); ++i) {
      PP_RETURN_IF_ERROR(Decode(v[i], path + "[" + std::to_string(i) + "]", &items[i]));
    }
    *out = std::move(items);
    return Status::Ok();
  }
  template <typename T>
  static Status Decode(const json& v, const std::string& path, std::map<std::string, T>* out) {
    if (!v.is_object()) return Wrong(path, "an object");
    std::map<std::string, T> map;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string at = path + "[" + EscapeForTerminal(it.key()) + "]";
      PP_RETURN_IF_ERROR(Decode(it.value(), at, &map[it.key()]));
    }
    *out = std::move(map);
    return Status::Ok();
  }
  static Status Decode(const json& v, const std::string& path, JobRequest* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { RequestFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, Allocation* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { AllocationFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, JobUsage* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { UsageFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, ArrayRecord* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { ArrayFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, AppliedLimit* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { LimitFields(r, p); });
  }
  static Status Decode(const json& v, const std::string& path, Readback* out) {
    return Object(v, path, out, [](Reader& r, auto& p) { ReadbackFields(r, p); });
  }
  template <typename Part, typename Fields>
  static Status Object(const json& v, const std::string& path, Part* out, Fields fields) {
    Reader r(v, path);
    if (r.error().ok()) fields(r, *out);
    return r.error();
  }

  const json& j_;
  std::string path_;
  Status error_;
};

// Which format a parsed record is in. Format 1 has no key.
Result<int> FormatOf(const json& j) {
  if (!j.is_object() || !j.contains(kRecordFormatKey)) return 1;
  const json& v = j.at(kRecordFormatKey);
  int64_t format = v.is_number_integer() ? v.get<int64_t>() : 0;
  if (format < kOldestRecordFormat || format > kCurrentRecordFormat) {
    return InvalidArgument(
        "record." + std::string(kRecordFormatKey) + " is " +
        (v.is_number_integer() ? std::to_string(format) : std::string("not an integer")) +
        ", not a format this pinpoint reads (" + std::to_string(kOldestRecordFormat) + " to " +
        std::to_string(kCurrentRecordFormat) + ")");
  }
  return static_cast<int>(format);
}

}  // namespace

const char* StoredStateName(JobState state) { return NameIn(kStoredStates, state); }
const char* StoredReasonName(Reason reason) { return NameIn(kStoredReasons, reason); }
const char* StoredModeName(SharingMode mode) { return NameIn(kStoredModes, mode); }
const char* StoredHoldName(Hold hold) { return NameIn(kStoredHolds, hold); }
const char* StoredKindName(JobKind kind) { return NameIn(kStoredKinds, kind); }

namespace {

Result<std::string> Encode(const JobRecord& record, bool with_env) {
  // dump() throws on strings that are not UTF-8 (argv and env come from users), and an enum
  // value without a stored name throws (Writer::Named); this is the store's edge, so the
  // exception stops here. Format 1 carries no format key.
  try {
    Writer w;
    RecordFields(w, record);
    json j = w.Take();
    if (!with_env) j["request"]["env"] = json::object();
    return j.dump();
  } catch (const std::exception& e) {
    return InvalidArgument("job record cannot be stored as JSON: " + std::string(e.what()));
  }
}

}  // namespace

Result<std::string> EncodeRecord(const JobRecord& record) {
  return Encode(record, /*with_env=*/true);
}
Result<std::string> EncodeRecordWithoutEnv(const JobRecord& record) {
  return Encode(record, /*with_env=*/false);
}

Result<std::string> EncodeEnv(const std::map<std::string, std::string>& env) {
  try {
    return json(env).dump();
  } catch (const std::exception& e) {
    return InvalidArgument("job environment cannot be stored as JSON: " + std::string(e.what()));
  }
}

namespace {

Result<JobRecord> Decode(std::string_view text, const std::string_view* env) {
  // The Reader checks every type before reading, but nlohmann is third-party code: nothing
  // thrown leaves.
  try {
    json j = json::parse(text, /*cb=*/nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return InvalidArgument("record is not valid JSON");
    Result<int> format = FormatOf(j);
    if (!format.ok()) return format.status();
    if (env != nullptr) {
      json e = json::parse(*env, /*cb=*/nullptr, /*allow_exceptions=*/false);
      if (e.is_discarded()) return InvalidArgument("record.request.env is not valid JSON");
      if (!j.is_object() || !j.contains("request") || !j["request"].is_object())
        return InvalidArgument("record.request is missing, and its environment is stored");
      j["request"]["env"] = std::move(e);
    }
    // A record in an older format is brought to the current one here, one step per format,
    // before the one reader of the current format reads it (docs/store.md, "Record formats").
    // None yet: format 1 is the current one.
    JobRecord record;
    Reader in(j, "record");
    if (in.error().ok()) RecordFields(in, record);
    if (!in.error().ok()) return in.error();
    return record;
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("record is unreadable: ") + e.what());
  }
}

}  // namespace

Result<JobRecord> DecodeRecord(std::string_view text) { return Decode(text, nullptr); }
Result<JobRecord> DecodeRecord(std::string_view text, std::string_view env) {
  return Decode(text, &env);
}

}  // namespace pinpoint::store
