#include "common/json_reader.h"

namespace pinpoint {

using nlohmann::json;

JsonReader JsonReader::Record(const json& j, std::string what) {
  return JsonReader(j, Kind::kRecord, std::move(what));
}

JsonReader JsonReader::Message(const json& j, std::string prefix) {
  return JsonReader(j, Kind::kMessage, std::move(prefix));
}

JsonReader::JsonReader(const json& j, Kind kind, std::string name)
    : j_(j), kind_(kind), name_(std::move(name)) {
  if (!j_.is_object())
    error_ = InvalidArgument(kind_ == Kind::kRecord ? name_ + " must be a JSON object"
                                                    : name_ + "must be a JSON object");
}

bool JsonReader::Has(const char* key) const {
  if (!error_.ok() || !j_.contains(key)) return false;
  return kind_ == Kind::kMessage || !j_[key].is_null();
}

bool JsonReader::Require(const char* key) {
  if (Has(key)) return true;
  Fail(key, "is missing");
  return false;
}

void JsonReader::String(const char* key, std::string* out) {
  if (!Has(key)) return;
  if (!At(key).is_string()) return Fail(key, "must be a string");
  *out = At(key).get<std::string>();
}

void JsonReader::NonEmptyString(const char* key, std::string* out) {
  if (!Has(key)) return;
  if (!At(key).is_string() || At(key).get_ref<const std::string&>().empty())
    return Fail(key, "must be a non-empty string");
  *out = At(key).get<std::string>();
}

void JsonReader::OptionalString(const char* key, std::optional<std::string>* out) {
  if (!ok()) return;
  if (!j_.contains(key) || j_[key].is_null()) {
    out->reset();
    return;
  }
  std::string value;
  String(key, &value);
  if (ok()) *out = std::move(value);
}

void JsonReader::Bool(const char* key, bool* out) {
  if (!Has(key)) return;
  if (!At(key).is_boolean()) return Fail(key, "must be true or false");
  *out = At(key).get<bool>();
}

void JsonReader::StringList(const char* key, std::vector<std::string>* out) {
  if (!Has(key)) return;
  const json& v = At(key);
  const char* why = "must be an array of strings";
  if (!v.is_array()) return Fail(key, why);
  std::vector<std::string> values;
  values.reserve(v.size());
  for (const auto& e : v) {
    if (!e.is_string()) return Fail(key, why);
    values.push_back(e.get<std::string>());
  }
  *out = std::move(values);
}

void JsonReader::StringMap(const char* key, std::map<std::string, std::string>* out) {
  if (!Has(key)) return;
  const json& v = At(key);
  const char* why = "must be an object of strings";
  if (!v.is_object()) return Fail(key, why);
  std::map<std::string, std::string> values;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it.value().is_string()) return Fail(key, why);
    values[it.key()] = it.value().get<std::string>();
  }
  *out = std::move(values);
}

void JsonReader::Fail(const char* key, const std::string& why) {
  if (!error_.ok()) return;
  error_ = InvalidArgument(kind_ == Kind::kRecord ? name_ + "." + key + " " + why
                                                  : name_ + "\"" + key + "\" " + why);
}

void JsonReader::Fail(Status status) {
  if (error_.ok() && !status.ok()) error_ = std::move(status);
}

}  // namespace pinpoint
